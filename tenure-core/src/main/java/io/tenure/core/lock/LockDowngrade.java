package io.tenure.core.lock;

/**
 * Turns the write-mode hold of (lease, token) into a read-mode hold without letting go: the
 * lease keeps its fencing token, and the readers queued at the head of the lock's queue are
 * granted beside it. Downgrading a read-mode hold of the same grant again succeeds again.
 */
public record LockDowngrade(String key, long leaseId, long fencingToken) implements LockCommand {}
