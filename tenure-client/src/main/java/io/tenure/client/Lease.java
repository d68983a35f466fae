package io.tenure.client;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A lease granted by the server and kept alive by this client; locks are held by leases, so
 * while a lease is lost every lock acquired with it must be presumed taken by someone else.
 *
 * <h2>Keep-alive and the safe window</h2>
 * The client renews the lease every TTL/3 over one keep-alive stream. An acknowledged renewal
 * sent at time {@code s} makes the lease safe until {@code s + W}, its {@linkplain #safeWindow()
 * safe window}: the server renewed it no earlier than {@code s}, so it cannot expire it before
 * {@code s + TTL}. When that moment passes without a newer acknowledgement, the client declares
 * the lease lost <em>before</em> the server could expire it and hand its locks to another holder:
 *
 * <pre>
 *  client                                      server
 *  s     keep-alive ───────────────────────▶  renews: expires no sooner than s + TTL
 *        ack ◀────────────────────────────
 *        safe until s + W
 *        ... partition, or a stop-the-world pause: nothing acknowledged ...
 *  s + W       lost() completes (UNREACHABLE), isValid() turns false
 *  s + TTL     the earliest the server may expire the lease and grant its locks to others
 * </pre>
 *
 * <p>{@code W} is one keep-alive period (TTL/3) plus 2.5 s for a failover, kept between TTL/2 and
 * 5/6 of the TTL: TTL/2 for TTLs of 15 s and more, 5.8 s for 10 s, 4.2 s (5/6) for the 5 s a
 * cluster grants at least. A leader that dies just before a keep-alive thus leaves 2.5 s (TTL/6
 * for TTLs over 15 s) for the failover, and at least TTL/6 separates the client's giving up from
 * the server's earliest expiry.</p>
 *
 * <h2>What this does not protect against</h2>
 * A thread can check {@link #isValid()}, then be paused (GC, SIGSTOP, a swapped-out VM) for
 * longer than the remaining margin, and resume to write after the server has expired the lease
 * and granted the lock to another client. No client-side check closes that gap: pass the lock's
 * {@linkplain LockHandle#fencingToken() fencing token} with every write and have the resource
 * reject tokens lower than the highest it has seen.
 *
 * <h2>Ending</h2>
 * {@link #lost()} completes exactly once: {@code UNREACHABLE} (no acknowledgement in time),
 * {@code EXPIRED} (the server says the lease is gone), {@code REVOKED} ({@link #revoke()} or
 * {@link #close()}), or {@code CLOSED} (the client was closed). A lost lease never becomes valid
 * again; grant a new one. Thread-safe.
 *
 * <h2>Leases that are not renewed</h2>
 * A lease from {@link TenureClient#grantExpiringLease} is never renewed: it ends at its TTL even
 * while this process lives on (a job that must hold its lock no longer than a deadline). The client
 * trusts it until 5/6 of the TTL after the grant was sent, then {@link #lost()} completes with
 * {@code EXPIRED}; everything else above holds.
 */
public final class Lease implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Lease.class);

    private final TenureClient client;
    private final long id;
    private final Duration ttl;
    private final String clientId;
    private final LeaseKeeper keeper;
    /** Handed to users, so that completing or cancelling it cannot disturb the keeper's own. */
    private final CompletableFuture<LeaseLoss> lostView;
    /** The revoke sent to the server; a failed one is sent again by the next call. Guarded by this. */
    private CompletableFuture<Void> revoked;

    Lease(TenureClient client, long id, Duration ttl, String clientId, LeaseKeeper keeper) {
        this.client = client;
        this.id = id;
        this.ttl = ttl;
        this.clientId = clientId;
        this.keeper = keeper;
        this.lostView = keeper.lost().copy();
    }

    /** The lease id the server knows it by. */
    public long id() {
        return id;
    }

    /** The TTL the server granted. */
    public Duration ttl() {
        return ttl;
    }

    /** The holder name others see for this lease's locks. */
    public String clientId() {
        return clientId;
    }

    /** The smallest TTL the client asks for; a cluster's own minimum is higher (10 election timeouts, 5 s by default). */
    public static final Duration MIN_TTL = Duration.ofSeconds(1);
    /** The largest TTL a server grants. */
    public static final Duration MAX_TTL = Duration.ofHours(24);

    /**
     * True while the lease is not lost and the client's monotonic clock is before
     * {@link #safeUntil()}. Checked against the clock on every call, so it turns false on
     * time even if the keep-alive timers were delayed (a pause, a starved scheduler).
     */
    public boolean isValid() {
        return keeper.isValid();
    }

    /**
     * The moment, on the client's monotonic clock ({@link System#nanoTime()} unless another
     * {@link MonotonicClock} was given), until which the lease is safe: the send time of the last
     * acknowledged renewal (or of the grant) plus the {@linkplain #safeWindow() safe window}. It only moves forward.
     */
    public long safeUntil() {
        return keeper.safeUntilNanos();
    }

    /**
     * How long after the send of an acknowledged keep-alive the lease stays safe without another:
     * TTL/3 plus 2.5 s, kept between TTL/2 and 5/6 of the TTL (see the class comment).
     */
    public Duration safeWindow() {
        return safeWindowFor(ttl);
    }

    /** The {@linkplain #safeWindow() safe window} of a lease of {@code ttl}. */
    public static Duration safeWindowFor(Duration ttl) {
        return Duration.ofNanos(LeaseKeeper.safeWindowNanos(ttl.toNanos()));
    }

    /** How long the lease stays safe from now without another acknowledged keep-alive; zero once it is not valid. */
    public Duration remaining() {
        if (!isValid()) {
            return Duration.ZERO;
        }
        return Duration.ofNanos(Math.max(0, keeper.safeUntilNanos() - client.clock().nanoTime()));
    }

    /** Whether keep-alives are being acknowledged (CONNECTED), overdue (SUSPENDED), or the lease is LOST. */
    public ConnectionState state() {
        return keeper.state();
    }

    /**
     * Calls {@code listener} with every later change of {@link #state()}, in order, on a client
     * thread (keep it short). SUSPENDED warns that the lease cannot be renewed right now; LOST comes
     * just before {@link #lost()} completes.
     */
    public void addStateListener(Consumer<ConnectionState> listener) {
        keeper.addStateListener(Objects.requireNonNull(listener, "listener"));
    }

    public void removeStateListener(Consumer<ConnectionState> listener) {
        keeper.removeStateListener(listener);
    }

    /**
     * Completes once, with the reason, when the client stops trusting the lease; never completes
     * while it is valid. Stop the work bound to the lease when it does. Dependents run on a
     * client thread: keep them short, or hand off to an executor.
     */
    public CompletableFuture<LeaseLoss> lost() {
        return lostView;
    }

    /**
     * Revokes the lease: keep-alives stop, {@link #lost()} completes with {@code REVOKED} (unless
     * the lease was already lost), and the server releases every lock the lease holds, handing
     * each to its next waiter. A lease the server no longer knows counts as revoked.
     *
     * @throws UnavailableException if no member could be reached; the lease is lost for this
     *                              client all the same, the server expires it after its TTL, and a
     *                              later call tries again
     */
    public void revoke() {
        Futures.await(revokeAsync(), "the revoke of lease " + id);
    }

    /** The asynchronous form of {@link #revoke()}; keep-alives stop at once. */
    public CompletableFuture<Void> revokeAsync() {
        keeper.stop(LeaseLoss.Reason.REVOKED, "revoked by the client");
        CompletableFuture<Void> revoking;
        synchronized (this) {
            if (revoked == null || revoked.isCompletedExceptionally()) {
                revoked = client.revokeOnServer(id).exceptionally(failure -> {
                    if (Futures.rethrowable(failure) instanceof LeaseNotFoundException alreadyGone) {
                        log.debug("lease {} was already gone when revoked: {}", id, alreadyGone.getMessage());
                        return null;
                    }
                    throw Futures.rethrowable(failure);
                });
            }
            revoking = revoked;
        }
        return revoking.copy();
    }

    /** Revokes the lease like {@link #revoke()}, but logs instead of throwing when it cannot. */
    @Override
    public void close() {
        try {
            revoke();
        } catch (TenureException e) {
            log.warn("lease {} could not be revoked ({}); the server expires it after its TTL of {} ms",
                    id, e.getMessage(), ttl.toMillis());
        }
    }

    LeaseKeeper keeper() {
        return keeper;
    }

    TenureClient client() {
        return client;
    }

    /** The exception for operations that need this lease while it is not valid. */
    LeaseLostException lostException() {
        LeaseLoss loss = keeper.loss();
        if (loss == null) {
            // The window closed but no timer has noticed yet; describe it the way the keeper would.
            loss = new LeaseLoss(LeaseLoss.Reason.UNREACHABLE,
                    "no keep-alive acknowledged within the safe window of the last acknowledged one");
        }
        return new LeaseLostException(id, loss);
    }

    @Override
    public String toString() {
        return "Lease{id=" + id + ", ttl=" + ttl.toMillis() + "ms, clientId='" + clientId + "', valid=" + isValid() + "}";
    }
}
