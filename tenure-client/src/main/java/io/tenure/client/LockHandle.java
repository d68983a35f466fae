package io.tenure.client;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A granted lock: its key, the fencing token of the grant, and the lease that holds it.
 *
 * <p>Ownership belongs to the (lease, fencing token) pair, not to a thread: any thread may use
 * or release the handle, and the lock is held exactly as long as the server keeps both. It ends
 * when the handle is released, when the lease is revoked, or when the server expires the lease;
 * the last can happen behind the client's back once the lease is {@linkplain Lease#lost() lost}.
 *
 * <p>{@link #isValid()} is a hint for stopping work early, not a guarantee: a pause between the
 * check and the protected write can outlast the lease. Send {@link #fencingToken()} with every
 * write to the guarded resource and let the resource refuse tokens lower than one it has seen
 * (see {@link io.tenure.client.fence.FenceGuard}); tokens of a key strictly increase across grants.
 */
public final class LockHandle implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(LockHandle.class);

    private final String key;
    private final long fencingToken;
    private final Lease lease;
    private volatile LockMode mode;
    private volatile boolean released;
    /** The unlock sent to the server; a failed one is sent again by the next release. Guarded by this. */
    private CompletableFuture<Void> unlocked;
    /** Whether {@link #unlocked} is answered on gRPC's transport thread (sent by {@link #release()}). Guarded by this. */
    private boolean unlockedOnTransportThread;

    LockHandle(String key, long fencingToken, Lease lease) {
        this(key, fencingToken, lease, LockMode.WRITE);
    }

    LockHandle(String key, long fencingToken, Lease lease, LockMode mode) {
        this.key = key;
        this.fencingToken = fencingToken;
        this.lease = lease;
        this.mode = mode;
    }

    /** How the lease holds the lock: {@link LockMode#WRITE} alone, or {@link LockMode#READ} beside other readers. */
    public LockMode mode() {
        return mode;
    }

    /** Whether the lock is held in read mode (shared with other readers). */
    public boolean isShared() {
        return mode == LockMode.READ;
    }

    /**
     * Turns this write-mode hold into a read-mode hold without letting go: the handle keeps its
     * fencing token, and the readers queued right behind it are granted beside it. Downgrading a
     * read-mode handle does nothing. A write that must not interleave with another writer can be
     * followed by reads of what it wrote, with other readers let in but no writer.
     *
     * @return this handle, now in read mode
     * @throws LockReleasedException if the handle was released
     * @throws LeaseLostException    if its lease is lost
     * @throws NotHolderException    if the server no longer ties this grant to the lease
     */
    public LockHandle downgrade() {
        return Futures.await(downgrade(FailoverCall.ON_TRANSPORT_THREAD), "the downgrade of lock '" + key + "'");
    }

    /** The asynchronous form of {@link #downgrade()}. */
    public CompletableFuture<LockHandle> downgradeAsync() {
        return downgrade(null);
    }

    private CompletableFuture<LockHandle> downgrade(Executor answers) {
        if (mode == LockMode.READ) {
            return CompletableFuture.completedFuture(this);
        }
        try {
            ensureValid();
        } catch (TenureException e) {
            return CompletableFuture.failedFuture(e);
        }
        return lease.client().downgradeOnServer(key, lease.id(), fencingToken, answers).thenApply(done -> {
            mode = LockMode.READ;
            return this;
        });
    }

    /** The lock's key (its name). */
    public String key() {
        return key;
    }

    /** The log position of the grant: unique, and strictly increasing across grants of this key. */
    public long fencingToken() {
        return fencingToken;
    }

    /** The lease that holds the lock. */
    public Lease lease() {
        return lease;
    }

    /** True while the handle is not released and its lease is {@linkplain Lease#isValid() valid}. */
    public boolean isValid() {
        return !released && lease.isValid();
    }

    /**
     * Returns this handle if it may still be used for protected work, so that a write can be
     * written as {@code store.put(value, lock.ensureValid().fencingToken())}.
     *
     * @throws LockReleasedException if the handle was released
     * @throws LeaseLostException    if its lease is lost (the server may have given the lock away)
     */
    public LockHandle ensureValid() {
        if (released) {
            throw new LockReleasedException(key, fencingToken);
        }
        if (!lease.isValid()) {
            throw lease.lostException();
        }
        return this;
    }

    /**
     * Releases the lock (Unlock with key, lease and token), handing it to the next waiter.
     * Idempotent: once the server has confirmed, later calls do nothing. A server answer that
     * this (lease, token) no longer holds the lock, or that the lease is gone, means the lock is
     * already released and is not an error. The handle is invalid from the first call on.
     *
     * @throws UnavailableException if no member could be reached while the lease is still
     *                              valid; call again to retry. With a lost lease the failure is
     *                              only logged: the server frees the lock when it ends the lease.
     */
    public void release() {
        Futures.await(release(FailoverCall.ON_TRANSPORT_THREAD), "the release of lock '" + key + "'");
    }

    /** The asynchronous form of {@link #release()}. */
    public CompletableFuture<Void> releaseAsync() {
        return release(null);
    }

    /** {@code answers}: {@link FailoverCall#ON_TRANSPORT_THREAD} for {@link #release()}, which only blocks on the result. */
    private CompletableFuture<Void> release(Executor answers) {
        released = true;
        CompletableFuture<Void> releasing;
        boolean onTransportThread;
        synchronized (this) {
            if (unlocked == null || unlocked.isCompletedExceptionally()) {
                unlockedOnTransportThread = answers != null;
                unlocked = lease.client().unlockOnServer(key, lease.id(), fencingToken, answers).exceptionally(failure -> {
                    RuntimeException cause = Futures.rethrowable(failure);
                    if (cause instanceof NotHolderException || cause instanceof LeaseNotFoundException) {
                        log.debug("lock '{}' (token {}) was already released: {}", key, fencingToken, cause.getMessage());
                        return null;
                    }
                    if (cause instanceof UnavailableException && !lease.isValid()) {
                        log.debug("lock '{}' not released ({}); it ends with lost lease {}", key, cause.getMessage(), lease.id());
                        return null;
                    }
                    throw cause;
                });
            }
            releasing = unlocked;
            onTransportThread = unlockedOnTransportThread;
        }
        if (answers == null && onTransportThread) {
            // A blocking release() is under way, answered on gRPC's transport thread: what the
            // caller chains on this future must run elsewhere.
            return releasing.whenCompleteAsync((ignored, failure) -> { });
        }
        return releasing.copy();
    }

    /** Same as {@link #release()}. */
    @Override
    public void close() {
        release();
    }

    @Override
    public String toString() {
        return "LockHandle{key='" + key + "', mode=" + mode + ", fencingToken=" + fencingToken + ", lease=" + lease.id()
                + ", valid=" + isValid() + "}";
    }
}
