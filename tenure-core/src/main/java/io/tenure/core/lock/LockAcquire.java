package io.tenure.core.lock;

/**
 * Asks for a lock for a lease. When the lock is held by another lease, {@code queue} puts the
 * lease at the back of the lock's FIFO queue; otherwise the command fails without a change.
 * Asking again for a lock the lease holds returns the same grant; asking again while waiting
 * keeps the place in the queue.
 *
 * <p>{@code requestId} (0 = none) names one acquire of its client, the same on every retry of it.
 * Once the grant it led to is released, or its wait withdrawn, a late copy of it (a retry still
 * in flight, or one a member forwarded again) is refused instead of acquiring anew for a caller
 * that stopped waiting.
 */
public record LockAcquire(String key, long leaseId, byte[] metadata, boolean queue, long requestId) implements LockCommand {

    /** An acquire that no client request names (its copies are not told apart). */
    public LockAcquire(String key, long leaseId, byte[] metadata, boolean queue) {
        this(key, leaseId, metadata, queue, 0);
    }
}
