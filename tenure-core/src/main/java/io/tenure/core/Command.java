package io.tenure.core;

/**
 * One replicated state change. Every command is applied on every member in log order by
 * {@link TenureState#apply(long, Command)}; none reads a clock or picks a random number while
 * applied: whatever varies (a lease id, the renewal point an expiry was computed against) is
 * chosen by the proposing member and carried in the command.
 */
public sealed interface Command {

    /** Creates a lease. Granting an id that exists for the same client and TTL returns it again (a retried grant). */
    record LeaseGrant(long leaseId, long ttlMillis, String clientId) implements Command {}

    /**
     * Renews a batch of leases: one command carries every keep-alive a member received in a short
     * window, so keep-alives cost one log entry per batch, not one each.
     */
    record LeaseRenew(long[] leaseIds) implements Command {}

    /** Ends a lease at its holder's request: its locks pass to their next waiters, its waits end. */
    record LeaseRevoke(long leaseId) implements Command {}

    /**
     * Ends a lease whose TTL passed on the leader's clock. Conditional: a no-op unless the lease
     * was last granted or renewed at {@code renewedAt}, so an expiry computed before a renewal
     * (a deposed leader's, a slow proposal) cannot end a lease that was kept alive since.
     */
    record LeaseExpire(long leaseId, long renewedAt) implements Command {}

    /**
     * Asks for a lock for a lease. When the lock is held by another lease, {@code queue} puts the
     * lease at the back of the lock's FIFO queue; otherwise the command fails without a change.
     * Asking again for a lock the lease holds returns the same grant; asking again while waiting
     * keeps the place in the queue.
     */
    record LockAcquire(String key, long leaseId, byte[] metadata, boolean queue) implements Command {}

    /**
     * Gives up a wait (a timeout, a caller that went away). When the grant won the race the lock
     * is held by the lease and the result says so: the caller then owns it and must use or release it.
     */
    record LockCancel(String key, long leaseId) implements Command {}

    /**
     * Records where a member serves clients, so any member can name the leader's endpoint. Each
     * member announces its own once it has a leader, and again when it changes.
     */
    record MemberEndpoint(String member, String clientEndpoint) implements Command {}

    /** Releases a lock held by (lease, token), handing it to the next live waiter. */
    record LockRelease(String key, long leaseId, long fencingToken) implements Command {}

    /**
     * Changes nothing, not even the revision. A member that has applied it has applied everything committed before it
     * was proposed: the read barrier of a linearizable read. Its commit needs a majority that
     * accepts the proposing leader's term, so a leader cut off from the majority cannot pass it.
     */
    record ReadBarrier() implements Command {}
}
