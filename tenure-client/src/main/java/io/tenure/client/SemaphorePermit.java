package io.tenure.client;

import java.util.concurrent.CompletableFuture;

/**
 * Permits of a semaphore held by a lease: the semaphore's name, how many, and the fencing token
 * of this grant (each grant has its own; tokens of a name strictly increase across grants).
 * Ownership belongs to the (lease, token) pair, not to a thread; the permits are held until
 * {@link #release()}, the lease's revocation, or its expiry on the server (which may happen
 * behind the client's back once the lease is {@linkplain Lease#lost() lost}).
 */
public final class SemaphorePermit implements AutoCloseable {
    private final TenureSemaphore semaphore;
    private final int permits;
    private final long fencingToken;
    private final Lease lease;
    private volatile boolean released;
    /** The release sent to the server; a failed one is sent again by the next release. Guarded by this. */
    private CompletableFuture<Void> releasing;

    SemaphorePermit(TenureSemaphore semaphore, int permits, long fencingToken, Lease lease) {
        this.semaphore = semaphore;
        this.permits = permits;
        this.fencingToken = fencingToken;
        this.lease = lease;
    }

    /** The semaphore's name. */
    public String name() {
        return semaphore.name();
    }

    /** How many permits this grant holds. */
    public int permits() {
        return permits;
    }

    /** The log position of the grant: unique, and strictly increasing across grants of this semaphore. */
    public long fencingToken() {
        return fencingToken;
    }

    /** The lease that holds the permits. */
    public Lease lease() {
        return lease;
    }

    /** True while not released and the lease is {@linkplain Lease#isValid() valid}: a hint, not a guarantee (send the token). */
    public boolean isValid() {
        return !released && lease.isValid();
    }

    /**
     * Returns the permits, granting them to the waiters in turn. Idempotent; a server answer that
     * this grant is gone (released, or its lease ended) is not an error.
     *
     * @throws UnavailableException if no member could be reached while the lease is valid; call again to retry
     */
    public void release() {
        Futures.await(releaseAsync(), "the release of semaphore '" + name() + "'");
    }

    /** The asynchronous form of {@link #release()}. */
    public CompletableFuture<Void> releaseAsync() {
        released = true;
        synchronized (this) {
            if (releasing == null || releasing.isCompletedExceptionally()) {
                releasing = semaphore.releaseOnServer(fencingToken, lease).exceptionally(failure -> {
                    RuntimeException cause = Futures.rethrowable(failure);
                    if (cause instanceof FailedPreconditionException || cause instanceof LeaseNotFoundException) {
                        return null; // already released, or gone with its lease
                    }
                    if (cause instanceof UnavailableException && !lease.isValid()) {
                        return null; // it ends with the lost lease
                    }
                    throw cause;
                });
            }
            return releasing.copy();
        }
    }

    /** Same as {@link #release()}. */
    @Override
    public void close() {
        release();
    }

    @Override
    public String toString() {
        return "SemaphorePermit{name='" + name() + "', permits=" + permits + ", fencingToken=" + fencingToken + ", lease=" + lease.id()
                + ", valid=" + isValid() + "}";
    }
}
