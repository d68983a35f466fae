package io.tenure.core.lock;

/** Releases a lock held by (lease, token), handing it to the next live waiter. */
public record LockRelease(String key, long leaseId, long fencingToken) implements LockCommand {}
