package io.tenure.client;

import java.util.List;

/**
 * A semaphore as read linearizably: its limit, the permits free, the holders in grant order
 * (each with its permits and fencing token) and the waiters in queue order. {@code exists} is
 * false when nobody holds or waits (the semaphore is then deleted, and its next acquire may set
 * another limit). {@code revision} is that of the state read: watch from {@code revision + 1}
 * to miss nothing after it.
 */
public record SemaphoreDescription(String name, boolean exists, int limit, int available, List<Holder> holders, List<Waiter> waiters,
                                   long revision) {

    /** A grant: the lease, its client id, its permits and its fencing token. */
    public record Holder(long leaseId, String clientId, int permits, long fencingToken) {}

    /** A lease waiting for {@code permits}, queued by the command at {@code joinedRevision}. */
    public record Waiter(long leaseId, String clientId, int permits, long joinedRevision) {}
}
