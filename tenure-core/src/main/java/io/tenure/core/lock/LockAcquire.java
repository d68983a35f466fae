package io.tenure.core.lock;

/**
 * Asks for a lock for a lease. When the lock is held by another lease, {@code queue} puts the
 * lease at the back of the lock's FIFO queue; otherwise the command fails without a change.
 * Asking again for a lock the lease holds returns the same grant; asking again while waiting
 * keeps the place in the queue.
 */
public record LockAcquire(String key, long leaseId, byte[] metadata, boolean queue) implements LockCommand {}
