package io.tenure.core.semaphore;

/**
 * Gives up the lease's wait for the semaphore. When the grant won the race the lease holds the
 * permits and the result says so. {@code requestId} names the acquire given up (0 = none).
 */
public record SemaphoreCancel(String key, long leaseId, long requestId) implements SemaphoreCommand {}
