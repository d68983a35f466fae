package io.tenure.core.semaphore;

import java.util.List;

/**
 * A semaphore that exists (held, waited for, or idle): its limit, its holders in grant order, each
 * with its own fencing token, and its waiters in queue order.
 *
 * @param createRevision the revision at which it was created
 * @param version        the number of grants since then
 * @param idleSince      the log position since which nobody holds or waits (it keeps its limit
 *                       until the leader forgets it); 0 while in use
 */
public record SemaphoreView(String key, int limit, int available, List<Holder> holders, List<Waiter> waiters,
                            long createRevision, long version, long idleSince) {

    /** A semaphore in use. */
    public SemaphoreView(String key, int limit, int available, List<Holder> holders, List<Waiter> waiters,
                         long createRevision, long version) {
        this(key, limit, available, holders, waiters, createRevision, version, 0);
    }

    /** A grant: the lease, its client id, the permits it holds, and its fencing token. */
    public record Holder(long leaseId, String clientId, int permits, long fencingToken) {}

    /** A lease waiting for {@code permits}; {@code joinedAt} is the log position of its acquire. */
    public record Waiter(long leaseId, String clientId, int permits, long joinedAt) {}
}
