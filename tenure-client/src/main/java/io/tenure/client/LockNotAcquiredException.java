package io.tenure.client;

/**
 * A lock was not granted within the caller's timeout. Nothing is held: the server has withdrawn
 * the wait. Carries who held the lock, and how many waited ahead, when the server answered.
 */
public class LockNotAcquiredException extends TenureException {
    private final String key;
    private final String holder;
    private final long waiters;

    public LockNotAcquiredException(String key, String holder, long waiters) {
        super("lock '" + key + "' not acquired: held by "
                + (holder == null || holder.isEmpty() ? "another lease" : "'" + holder + "'")
                + (waiters > 0 ? ", " + waiters + " waiting ahead" : ""));
        this.key = key;
        this.holder = holder == null ? "" : holder;
        this.waiters = waiters;
    }

    /** For a subclass that words its own message (a set of scopes: {@link ScopeNotAcquiredException}). */
    protected LockNotAcquiredException(String message, String key, String holder, long waiters) {
        super(message);
        this.key = key;
        this.holder = holder == null ? "" : holder;
        this.waiters = waiters;
    }

    public String key() {
        return key;
    }

    /** The holder's client id when the attempt ended; empty if the server did not say. */
    public String holder() {
        return holder;
    }

    /** The number of waiters that were ahead when the attempt ended. */
    public long waiters() {
        return waiters;
    }
}
