package io.tenure.client;

import java.util.List;

/**
 * A semaphore as read linearizably: its limit, the permits free, the holders in grant order
 * (each with its permits and fencing token) and the waiters in queue order. A semaphore nobody
 * holds or waits for is idle ({@link #isIdle()}, since {@code idleSinceRevision}): it keeps its
 * limit until the leader forgets it after the member's idle time (60 s by default); then
 * {@code exists} is false and its next acquire may set another limit. {@code revision} is that
 * of the state read: watch from {@code revision + 1} to miss nothing after it.
 */
public record SemaphoreDescription(String name, boolean exists, int limit, int available, List<Holder> holders, List<Waiter> waiters,
                                   long revision, long idleSinceRevision) {

    /** A description without the idle revision (as before idle semaphores). */
    public SemaphoreDescription(String name, boolean exists, int limit, int available, List<Holder> holders, List<Waiter> waiters,
                                long revision) {
        this(name, exists, limit, available, holders, waiters, revision, 0);
    }

    /** Whether it exists with nobody holding or waiting: it keeps its limit until forgotten. */
    public boolean isIdle() {
        return idleSinceRevision > 0;
    }

    /** A grant: the lease, its client id, its permits and its fencing token. */
    public record Holder(long leaseId, String clientId, int permits, long fencingToken) {}

    /** A lease waiting for {@code permits}, queued by the command at {@code joinedRevision}. */
    public record Waiter(long leaseId, String clientId, int permits, long joinedRevision) {}
}
