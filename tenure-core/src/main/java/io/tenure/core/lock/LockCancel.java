package io.tenure.core.lock;

/**
 * Gives up a wait (a timeout, a caller that went away). When the grant won the race the lock
 * is held by the lease and the result says so: the caller then owns it and must use or release it.
 */
public record LockCancel(String key, long leaseId) implements LockCommand {}
