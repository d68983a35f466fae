package io.tenure.core.lock;

import java.util.List;

/**
 * A held lock: its holders with their fencing tokens, and the waiters in grant order. A lock held
 * in write mode has one holder; in read mode, one or more. {@code holder}, {@code leaseId},
 * {@code fencingToken} and {@code metadata} are those of the first holder in grant order (the
 * only one in write mode).
 *
 * @param createRevision the revision at which the lock went from free to held
 * @param version        the number of grants since then (1 for the first holder)
 * @param shared         whether it is held in read mode
 * @param holders        every holder, in grant order
 */
public record LockView(String key, String holder, long leaseId, long fencingToken, byte[] metadata,
                       long createRevision, long version, List<Waiter> waiters, boolean shared, List<Holder> holders) {

    /** A lease holding the lock; {@code fencingToken} is the stamp of its grant. */
    public record Holder(long leaseId, String clientId, long fencingToken, byte[] metadata) {}

    /** A lease waiting for the lock, in read mode when {@code shared}; {@code joinedAt} is the log position of its acquire. */
    public record Waiter(long leaseId, String clientId, long joinedAt, boolean shared) {

        /** A write-mode waiter. */
        public Waiter(long leaseId, String clientId, long joinedAt) {
            this(leaseId, clientId, joinedAt, false);
        }
    }
}
