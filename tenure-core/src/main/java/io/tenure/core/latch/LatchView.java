package io.tenure.core.latch;

import java.util.List;

/**
 * A latch whose count is above zero: the count, and who waits for it to reach zero, in arrival order.
 *
 * @param initialCount   the count it was set to
 * @param createRevision the revision of its set-count
 * @param modRevision    the revision of its latest change (the set-count or the latest count-down)
 */
public record LatchView(String key, int count, int initialCount, List<Waiter> waiting, long createRevision, long modRevision) {

    /** A lease waiting at the latch; {@code arrivedAt} is the log position of its await. */
    public record Waiter(long leaseId, String clientId, long arrivedAt) {}
}
