package io.tenure.core.lock;

/**
 * Gives up a wait (a timeout, a caller that went away). When the grant won the race the lock
 * is held by the lease and the result says so: the caller then owns it and must use or release it.
 *
 * <p>{@code requestId} (0 = none) is the {@link LockAcquire#requestId} of the acquire given up:
 * a copy of that acquire applied after this command is refused, even when it arrives after it.
 */
public record LockCancel(String key, long leaseId, long requestId) implements LockCommand {

    /** A withdrawal that names no acquire request. */
    public LockCancel(String key, long leaseId) {
        this(key, leaseId, 0);
    }
}
