package io.tenure.core.semaphore;

/** Returns the permits of the grant with {@code fencingToken}, held by the lease. */
public record SemaphoreRelease(String key, long leaseId, long fencingToken) implements SemaphoreCommand {}
