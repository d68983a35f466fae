package io.tenure.core.semaphore;

import io.tenure.core.kernel.Result;

/** What a semaphore command did. */
public sealed interface SemaphoreResult extends Result {

    /** The lease holds {@code permits} with this fencing token; {@code again} when it already held them. */
    record Granted(String key, long leaseId, int permits, long fencingToken, boolean again) implements SemaphoreResult {}

    /** The lease waits; {@code ahead} waiters are before it, and {@code available} permits are free now. */
    record Queued(String key, long leaseId, long joinedAt, int ahead, int available) implements SemaphoreResult {}

    /** A try found too few permits free (or earlier waiters): {@code available} of the limit, {@code waiters} queued. */
    record Busy(String key, int available, int waiters) implements SemaphoreResult {}

    /** The grant's permits were returned; {@code handedTo} waiters were granted with them. */
    record Released(String key, int handedTo) implements SemaphoreResult {}

    /** The wait was withdrawn (or there was none); {@code available} permits were free and {@code waiters} remained, as of the withdrawal. */
    record Cancelled(String key, long leaseId, int available, int waiters) implements SemaphoreResult {}
}
