package io.tenure.client;

/**
 * How far a {@link Lease} can be trusted, as Curator's connection states tell ZooKeeper users:
 *
 * <pre>
 *  CONNECTED ──(keep-alive unanswered, stream broken)──▶ SUSPENDED ──(acknowledged)──▶ CONNECTED
 *      │                                                     │
 *      └───────────(a safe window without an ack, expired, revoked, closed)──────▶ LOST
 * </pre>
 *
 * <p>SUSPENDED is the warning: the lease is still {@linkplain Lease#isValid() valid} until
 * {@link Lease#safeUntil()}, but the client cannot currently renew it, so work under its locks
 * should reach a safe point or pause new writes. LOST is final.
 */
public enum ConnectionState {
    /** The latest keep-alive was acknowledged in time. */
    CONNECTED,
    /**
     * A keep-alive went unanswered for a tenth of the TTL (at least 200 ms), or the keep-alive
     * stream broke; the client is retrying on other members. The lease is still valid until its
     * safe deadline.
     */
    SUSPENDED,
    /** The lease is lost ({@link Lease#lost()} says why); its locks must be presumed taken by others. */
    LOST
}
