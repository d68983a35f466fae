package io.tenure.it.safety;

import java.util.ArrayList;
import java.util.List;

/** The violations the checks find, at most {@link #KEPT_PER_CHECK} kept per check (the rest only counted). */
final class Findings {
    static final int KEPT_PER_CHECK = 50;

    /** A violation before the report's context (operations around it, fault timeline) is attached. */
    record Found(int check, String description, long atNanos, List<Op> involved) {}

    private final List<Found> kept = new ArrayList<>();
    private final int[] counts = new int[11];

    void add(int check, String description, long atNanos, Op... involved) {
        add(check, description, atNanos, List.of(involved));
    }

    void add(int check, String description, long atNanos, List<Op> involved) {
        if (counts[check]++ < KEPT_PER_CHECK) {
            kept.add(new Found(check, description, atNanos, List.copyOf(involved)));
        }
    }

    int count(int check) {
        return counts[check];
    }

    List<Found> kept() {
        return kept;
    }
}
