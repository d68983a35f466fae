package io.tenure.client;

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
 * write to the guarded resource and let the resource refuse tokens lower than one it has seen;
 * tokens of a key strictly increase across grants.
 */
public final class LockHandle implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(LockHandle.class);

    private final String key;
    private final long fencingToken;
    private final Lease lease;
    private volatile boolean released;
    private boolean unlockedOnServer; // guarded by this

    LockHandle(String key, long fencingToken, Lease lease) {
        this.key = key;
        this.fencingToken = fencingToken;
        this.lease = lease;
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
        released = true;
        synchronized (this) {
            if (unlockedOnServer) {
                return;
            }
            try {
                lease.client().unlockOnServer(key, lease.id(), fencingToken);
            } catch (NotHolderException | LeaseNotFoundException alreadyReleased) {
                log.debug("lock '{}' (token {}) was already released: {}", key, fencingToken, alreadyReleased.getMessage());
            } catch (UnavailableException e) {
                if (lease.isValid()) {
                    throw e;
                }
                log.debug("lock '{}' not released ({}); it ends with lost lease {}", key, e.getMessage(), lease.id());
            }
            unlockedOnServer = true;
        }
    }

    /** Same as {@link #release()}. */
    @Override
    public void close() {
        release();
    }

    @Override
    public String toString() {
        return "LockHandle{key='" + key + "', fencingToken=" + fencingToken + ", lease=" + lease.id()
                + ", valid=" + isValid() + "}";
    }
}
