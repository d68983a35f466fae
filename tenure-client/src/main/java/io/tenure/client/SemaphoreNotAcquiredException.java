package io.tenure.client;

/**
 * Permits were not granted within the caller's timeout. Nothing is held: the wait was withdrawn.
 * Carries how many permits were free and how many leases waited when the server answered.
 */
public class SemaphoreNotAcquiredException extends TenureException {
    private final String name;
    private final int available;
    private final long waiters;

    public SemaphoreNotAcquiredException(String name, int permits, int available, long waiters) {
        super("semaphore '" + name + "': " + permits + " permits not acquired (" + available + " free"
                + (waiters > 0 ? ", " + waiters + " waiting" : "") + ")");
        this.name = name;
        this.available = available;
        this.waiters = waiters;
    }

    public String name() {
        return name;
    }

    /** The permits free when the attempt ended. */
    public int available() {
        return available;
    }

    /** The leases queued when the attempt ended. */
    public long waiters() {
        return waiters;
    }
}
