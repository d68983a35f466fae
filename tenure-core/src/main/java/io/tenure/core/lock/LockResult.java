package io.tenure.core.lock;

import io.tenure.core.kernel.Result;

/** What a lock command did. */
public sealed interface LockResult extends Result {

    /** The lock is held by the lease with this fencing token; {@code again} when it already held it (in the same mode). */
    record Granted(String key, long leaseId, long fencingToken, boolean again) implements LockResult {}

    /** The lease waits for the lock; {@code joinedAt} orders the queue, {@code ahead} waiters are before it. */
    record Queued(String key, long leaseId, long joinedAt, int ahead, String holder) implements LockResult {}

    /** A try-lock found the lock held by another lease ({@code holder}: the first holder in grant order), or queued for. */
    record Busy(String key, String holder, long holderLeaseId, int waiters) implements LockResult {}

    /**
     * The lock was released; {@code nextFencingToken} is the token of the first waiter it was
     * handed to, 0 when nobody was granted (none waited, or readers still hold it).
     */
    record Released(String key, long nextFencingToken) implements LockResult {}

    /**
     * The lease's write-mode hold is a read-mode hold now, with the same {@code fencingToken};
     * {@code readersGranted} readers queued behind it were granted beside it.
     */
    record Downgraded(String key, long leaseId, long fencingToken, int readersGranted) implements LockResult {}

    /**
     * The wait was withdrawn (or there was none). {@code holder} (the holder's client id, empty
     * when the lock is free) and {@code waiters} are as of the withdrawal.
     */
    record Cancelled(String key, long leaseId, String holder, int waiters) implements LockResult {}
}
