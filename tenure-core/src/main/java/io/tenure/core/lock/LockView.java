package io.tenure.core.lock;

import java.util.List;

/**
 * A held lock: its holder, the holder's fencing token, and the waiters in grant order.
 *
 * @param createRevision the revision at which the lock went from free to held
 * @param version        the number of grants since then (1 for the first holder)
 */
public record LockView(String key, String holder, long leaseId, long fencingToken, byte[] metadata,
                       long createRevision, long version, List<Waiter> waiters) {

    /** A lease waiting for the lock; {@code joinedAt} is the log position of its acquire. */
    public record Waiter(long leaseId, String clientId, long joinedAt) {}
}
