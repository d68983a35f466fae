package io.tenure.core.semaphore;

/**
 * Asks for {@code permits} of semaphore {@code key}, whose limit is {@code limit}, for a lease.
 * The first request creates the semaphore with that limit; while it exists (held or waited for),
 * a request with another limit is refused. When the permits are not available now, {@code queue}
 * puts the lease at the back of the FIFO queue; otherwise nothing changes. Asking again while
 * holding returns the same grant; asking again while waiting keeps the place.
 *
 * <p>{@code requestId} (0 = none) names one acquire of its client, as for locks: once the grant
 * it led to is released or its wait withdrawn, a late copy of it is refused.
 */
public record SemaphoreAcquire(String key, long leaseId, int limit, int permits, boolean queue, long requestId)
        implements SemaphoreCommand {}
