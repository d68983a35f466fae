package io.tenure.it.safety;

import java.util.List;

/**
 * One broken rule, with the evidence a reader needs to start looking.
 *
 * @param check       the check's number, 1 to 10 (issue 6)
 * @param title       the check's name
 * @param description what was seen, naming keys, leases, tokens, members and times
 * @param atNanos     when it happened, on the shared monotonic clock (0 when no time applies)
 * @param around      the operations involved and those around {@code atNanos}, by invocation time
 * @param timeline    the fault timeline before and around {@code atNanos}
 */
public record Violation(int check, String title, String description, long atNanos, List<Op> around,
                        List<FaultEvent> timeline) {
    public Violation {
        around = List.copyOf(around);
        timeline = List.copyOf(timeline);
    }
}
