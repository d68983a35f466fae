package io.tenure.core.lock;

/**
 * Asks for a lock for a lease, in write mode (exclusive: no other holder) or, with
 * {@code shared}, in read mode (beside other readers). When the lease cannot hold it now,
 * {@code queue} puts the lease at the back of the lock's FIFO queue; otherwise the command fails
 * without a change. Asking again in the same mode for a lock the lease holds returns the same
 * grant; asking again while waiting keeps the place in the queue.
 *
 * <p>{@code requestId} (0 = none) names one acquire of its client, the same on every retry of it.
 * Once the grant it led to is released, or its wait withdrawn, a late copy of it (a retry still
 * in flight, or one a member forwarded again) is refused instead of acquiring anew for a caller
 * that stopped waiting.
 */
public record LockAcquire(String key, long leaseId, byte[] metadata, boolean queue, long requestId, boolean shared)
        implements LockCommand {

    /** A write-mode (exclusive) acquire. */
    public LockAcquire(String key, long leaseId, byte[] metadata, boolean queue, long requestId) {
        this(key, leaseId, metadata, queue, requestId, false);
    }

    /** A write-mode acquire that no client request names (its copies are not told apart). */
    public LockAcquire(String key, long leaseId, byte[] metadata, boolean queue) {
        this(key, leaseId, metadata, queue, 0, false);
    }
}
