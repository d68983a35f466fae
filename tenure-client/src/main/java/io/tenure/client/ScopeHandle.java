package io.tenure.client;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Scopes held by a lease: the {@linkplain #parts() parts} granted together, all or nothing, and
 * the one {@linkplain #fencingToken() fencing token} of that grant. A {@linkplain Scope#named
 * named} scope is a plain lock, and its handle is the lock's grant.
 *
 * <p>Ownership belongs to the (lease, fencing token) pair, not to a thread: any thread may use or
 * release the handle, and the scopes are held exactly as long as the server keeps both. They end
 * when the handle is released, when the lease is revoked, or when the server expires the lease;
 * the last can happen behind the client's back once the lease is {@linkplain Lease#lost() lost}.
 * Threads of one client share its session lease: one thread asking for a scope that overlaps what
 * another thread of the same client holds gets a {@link DeadlockException}, not a wait (the lease
 * would wait for itself). Use a lease or a client per worker for work on overlapping scopes.
 *
 * <p>{@link #isValid()} is a hint for stopping work early, not a guarantee: a pause between the
 * check and the protected write can outlast the lease. Send {@link #fencingToken()} with every
 * write to the guarded resource and let the resource refuse tokens lower than one it has seen for
 * an overlapping scope; tokens strictly increase across grants, and a later grant of an
 * overlapping scope always has a higher one.
 */
public final class ScopeHandle implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ScopeHandle.class);

    private final List<ScopePart> parts;
    private final long fencingToken;
    private final Lease lease;
    /** For a named scope: the lock grant this handle is; null for a set of scopes. */
    private final LockHandle lock;
    private volatile boolean released;
    /** The release sent to the server; a failed one is sent again by the next release. Guarded by this. */
    private CompletableFuture<Void> releasing;

    ScopeHandle(List<ScopePart> parts, long fencingToken, Lease lease) {
        this.parts = List.copyOf(parts);
        this.fencingToken = fencingToken;
        this.lease = lease;
        this.lock = null;
    }

    /** The handle of a named scope: the grant of lock {@code lock.key()} in its mode. */
    ScopeHandle(LockHandle lock) {
        this.parts = List.of(new ScopePart(Scope.named(lock.key()), lock.isShared() ? ScopeMode.SHARED : ScopeMode.EXCLUSIVE));
        this.fencingToken = lock.fencingToken();
        this.lease = lock.lease();
        this.lock = lock;
    }

    /** The parts held, in the order asked for. */
    public List<ScopePart> parts() {
        return parts;
    }

    /** The log position of the grant: one token for every part, above that of any earlier grant of an overlapping scope. */
    public long fencingToken() {
        return fencingToken;
    }

    /**
     * The token with the parts it may write under, for a {@link io.tenure.client.fence.ScopeFenceGuard}:
     * the parts held exclusively (a shared part lets its holder read, not write, so a write under
     * it is refused as a scope mismatch).
     */
    public io.tenure.client.fence.ScopedToken scopedToken() {
        return new io.tenure.client.fence.ScopedToken(fencingToken,
                parts.stream().filter(p -> p.mode() == ScopeMode.EXCLUSIVE).map(ScopePart::scope).toList());
    }

    /** The lease that holds the scopes. */
    public Lease lease() {
        return lease;
    }

    /** True while the handle is not released and its lease is {@linkplain Lease#isValid() valid}. */
    public boolean isValid() {
        return !released && lease.isValid();
    }

    /**
     * Returns this handle if it may still be used for protected work:
     * {@code store.write(range, data, held.ensureValid().fencingToken())}.
     *
     * @throws LockReleasedException if the handle was released
     * @throws LeaseLostException    if its lease is lost (the server may have given the scopes away)
     */
    public ScopeHandle ensureValid() {
        if (released) {
            throw new LockReleasedException(ScopeNotAcquiredException.describe(parts), fencingToken);
        }
        if (!lease.isValid()) {
            throw lease.lostException();
        }
        return this;
    }

    /**
     * Lets go of every part at once, granting the waiters that can now hold. Idempotent: once the
     * server has confirmed, later calls do nothing; a server answer that this grant is gone
     * (released already, or its lease ended) is not an error. The handle is invalid from the first
     * call on.
     *
     * @throws UnavailableException if no member could be reached while the lease is still valid;
     *                              call again to retry. With a lost lease the failure is only
     *                              logged: the server frees the scopes when it ends the lease.
     */
    public void release() {
        Futures.await(releaseAsync(), "the release of " + this);
    }

    /** The asynchronous form of {@link #release()}. */
    public CompletableFuture<Void> releaseAsync() {
        released = true;
        if (lock != null) {
            return lock.releaseAsync();
        }
        synchronized (this) {
            if (releasing == null || releasing.isCompletedExceptionally()) {
                releasing = lease.client().scopeLocks().releaseOnServer(lease, fencingToken).exceptionally(failure -> {
                    RuntimeException cause = Futures.rethrowable(failure);
                    if (cause instanceof FailedPreconditionException || cause instanceof LeaseNotFoundException) {
                        log.debug("scopes [{}] (token {}) were already released: {}", ScopeNotAcquiredException.describe(parts),
                                fencingToken, cause.getMessage());
                        return null;
                    }
                    if (cause instanceof UnavailableException && !lease.isValid()) {
                        log.debug("scopes [{}] not released ({}); they end with lost lease {}", ScopeNotAcquiredException.describe(parts),
                                cause.getMessage(), lease.id());
                        return null;
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
        return "ScopeHandle{parts=" + parts + ", fencingToken=" + fencingToken + ", lease=" + lease.id() + ", valid=" + isValid() + "}";
    }
}
