package io.tenure.core.semaphore;

import java.util.List;

/**
 * A semaphore that exists (held or waited for): its limit, its holders in grant order, each with
 * its own fencing token, and its waiters in queue order.
 *
 * @param createRevision the revision at which it was created
 * @param version        the number of grants since then
 */
public record SemaphoreView(String key, int limit, int available, List<Holder> holders, List<Waiter> waiters,
                            long createRevision, long version) {

    /** A grant: the lease, its client id, the permits it holds, and its fencing token. */
    public record Holder(long leaseId, String clientId, int permits, long fencingToken) {}

    /** A lease waiting for {@code permits}; {@code joinedAt} is the log position of its acquire. */
    public record Waiter(long leaseId, String clientId, int permits, long joinedAt) {}
}
