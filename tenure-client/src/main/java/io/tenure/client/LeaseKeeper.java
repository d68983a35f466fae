package io.tenure.client;

import io.grpc.Status;
import io.tenure.client.KeepAliveStreams.Attachment;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps one lease alive over the client's {@code LeaseKeepAlive} stream to a member (shared with
 * the client's other leases, see {@link KeepAliveStreams}) and decides, from the injected clock
 * alone, when the lease may no longer be trusted (ARCHITECTURE.md, I6):
 *
 * <ul>
 *   <li>a keep-alive is sent every TTL/3, counted from the send of the grant;</li>
 *   <li>an acknowledgement makes the lease safe until <em>the send time</em> of the keep-alive
 *       it answers plus the safe window ({@link #safeWindowNanos}: TTL/3 plus a failover
 *       allowance, between TTL/2 and 5/6 of the TTL): the server renewed no earlier than that
 *       send, so it cannot expire the lease before send + TTL, and the rest is margin for
 *       clock drift and for acting on a check of {@link Lease#isValid()};</li>
 *   <li>the lease is lost (UNREACHABLE) as soon as that moment passes without a newer
 *       acknowledgement, EXPIRED when an acknowledgement says ttl = 0, and never comes back;</li>
 *   <li>a broken stream is reopened at once (on the next endpoint), then with doubling backoff,
 *       and the reopened stream immediately carries a keep-alive: that is the retry of the one
 *       the break swallowed. Reopening stops when the safe window closes.</li>
 * </ul>
 *
 * <p>Acknowledgements are matched to sends in stream order. Should a server ever answer out of
 * order, an ack is credited to an earlier send than its own, which only shortens the window.
 *
 * <p>Thread safety: timers and gRPC callbacks enter through methods that take the monitor; the
 * loss is published (future completed, listeners run) after the monitor is released, so user
 * code reacting to a loss never runs while this keeper is locked by another thread.
 */
final class LeaseKeeper {
    private static final Logger log = LoggerFactory.getLogger(LeaseKeeper.class);
    /** The second reconnect waits this long, and each later one twice the previous (the first is immediate). */
    static final Duration FIRST_RECONNECT_BACKOFF = Duration.ofMillis(25);
    /**
     * A keep-alive unanswered for a tenth of the TTL (at least 200 ms) moves the stream to the
     * next member: a member that is paused or cut off keeps the connection open and answers
     * nothing, and waiting for the transport to notice would use up the safe window.
     */
    static final int STALL_FRACTION_OF_TTL = 10;
    static final Duration MIN_STALL = Duration.ofMillis(200);

    /**
     * What a failover may take (a dead leader noticed, another elected and ready, the keep-alive
     * forwarded to it) before a kept-alive lease is in danger: measured here up to about 2 s with
     * the default 500 ms election timeout (docs/benchmarks.md, "Shorter TTLs").
     */
    static final Duration FAILOVER_ALLOWANCE = Duration.ofMillis(2_500);

    /**
     * How long an acknowledged keep-alive keeps a lease of {@code ttlNanos} safe, counted from its
     * send: one keep-alive period (TTL/3) plus {@link #FAILOVER_ALLOWANCE}, so that a leader that
     * dies just before a keep-alive leaves that long for the failover; at least TTL/2 and at most
     * 5/6 of the TTL, so that TTL/6 at least is left between the client giving the lease up and
     * the earliest moment the server may expire it.
     */
    static long safeWindowNanos(long ttlNanos) {
        long window = ttlNanos / 3 + FAILOVER_ALLOWANCE.toNanos();
        return Math.max(ttlNanos / 2, Math.min(window, ttlNanos - ttlNanos / 6));
    }

    private final long leaseId;
    private final long ttlNanos;
    /** False for a lease granted by {@link TenureClient#grantExpiringLease}: no keep-alive is ever sent. */
    private final boolean renews;
    private final Endpoints endpoints;
    private final KeepAliveStreams streams;
    private final MonotonicClock clock;
    private final LeaseTimers timers;
    private final CompletableFuture<LeaseLoss> lost = new CompletableFuture<>();
    private final Set<Consumer<LeaseLoss>> lossListeners = ConcurrentHashMap.newKeySet();
    private final List<Consumer<ConnectionState>> stateListeners = new CopyOnWriteArrayList<>();

    // Written under the monitor; volatile so validity checks never wait for a keeper busy sending.
    private volatile long lastAckedSendNanos;
    private volatile long safeUntilNanos;
    private volatile LeaseLoss loss;
    private volatile ConnectionState state = ConnectionState.CONNECTED;

    // Guarded by this.
    private LeaseLoss unpublished;
    /** State changes not yet told to the listeners, oldest first. */
    private final ArrayDeque<ConnectionState> unpublishedStates = new ArrayDeque<>();
    /** Stream actions decided under the monitor, run by {@link #runAfterUnlock()} after it is released. */
    private final ArrayDeque<Runnable> afterUnlock = new ArrayDeque<>();
    private long nextTickNanos;
    private Attachment stream; // null while reconnecting
    private int breaksInARow;
    private LeaseTimers.Timer tickTimer;
    private LeaseTimers.Timer lossTimer;
    private LeaseTimers.Timer reconnectTimer;

    /**
     * @param grantSentNanos when the grant request was sent: the grant is the first renewal, and
     *                       the server granted no earlier than this
     */
    LeaseKeeper(long leaseId, Duration ttl, long grantSentNanos, Endpoints endpoints, KeepAliveStreams streams,
                MonotonicClock clock, LeaseTimers timers) {
        this(leaseId, ttl, grantSentNanos, endpoints, streams, clock, timers, true);
    }

    /**
     * @param renews false for a lease that is never renewed: no stream, no keep-alive; it is
     *               trusted until 5/6 of its TTL after the grant's send (TTL/6 is left, as for a
     *               renewed lease, between giving it up and the server's earliest expiry), then
     *               lost ({@code EXPIRED})
     */
    LeaseKeeper(long leaseId, Duration ttl, long grantSentNanos, Endpoints endpoints, KeepAliveStreams streams,
                MonotonicClock clock, LeaseTimers timers, boolean renews) {
        this.leaseId = leaseId;
        this.ttlNanos = ttl.toNanos();
        this.renews = renews;
        this.endpoints = endpoints;
        this.streams = streams;
        this.clock = clock;
        this.timers = timers;
        this.lastAckedSendNanos = grantSentNanos;
        this.safeUntilNanos = grantSentNanos + (renews ? safeWindowNanos(ttlNanos) : ttlNanos - ttlNanos / 6);
        this.nextTickNanos = grantSentNanos + ttlNanos / 3;
    }

    /** Opens the stream and starts the timers; the lease may already be lost if the grant took the whole safe window. */
    void start() {
        synchronized (this) {
            long now = clock.nanoTime();
            if (!passedSafeWindow(now)) {
                armLossTimer(now);
                if (renews) {
                    scheduleTick(now);
                    openStream();
                }
            }
        }
        publishLoss();
    }

    boolean isValid() {
        return loss == null && clock.nanoTime() - safeUntilNanos < 0;
    }

    long safeUntilNanos() {
        return safeUntilNanos;
    }

    long lastAckedSendNanos() {
        return lastAckedSendNanos;
    }

    /** Completes once, with the first loss; never completes while the lease is trusted. */
    CompletableFuture<LeaseLoss> lost() {
        return lost;
    }

    /** The loss, or null while the lease is trusted (the safe window may still have just passed). */
    LeaseLoss loss() {
        return loss;
    }

    ConnectionState state() {
        return state;
    }

    /** Calls {@code listener} with every later change of {@link #state()}, in order, never under the keeper's monitor. */
    void addStateListener(Consumer<ConnectionState> listener) {
        stateListeners.add(listener);
    }

    void removeStateListener(Consumer<ConnectionState> listener) {
        stateListeners.remove(listener);
    }

    /**
     * Calls {@code listener} once when the lease is lost (at once if it already is), unless the
     * returned action runs first. Unlike a dependent of {@link #lost()}, a removed listener
     * leaves nothing behind, so per-call listeners on a long-lived lease do not accumulate.
     */
    Runnable onLoss(Consumer<LeaseLoss> listener) {
        lossListeners.add(listener);
        LeaseLoss current = loss;
        if (current != null && lossListeners.remove(listener)) {
            listener.accept(current);
        }
        return () -> lossListeners.remove(listener);
    }

    /** Stops keeping the lease alive and declares it lost for {@code reason}; no-op once lost. */
    void stop(LeaseLoss.Reason reason, String message) {
        synchronized (this) {
            markLost(reason, message);
        }
        publishLoss();
    }

    // Entry points (timers, stream callbacks) change state under the monitor, then publish a
    // loss, if they declared one, after releasing it.

    private void tick() {
        synchronized (this) {
            tickLocked();
        }
        publishLoss();
    }

    /** An acknowledgement for this lease arrived on {@code from}; called by the stream, on a gRPC thread. */
    void onAck(Attachment from, long ttlMillis) {
        synchronized (this) {
            ackLocked(from, ttlMillis);
        }
        publishLoss();
    }

    /** The stream {@code from} ended ({@code failure} null: the member closed it); called by the stream, on the scheduler. */
    void onBroken(Attachment from, Throwable failure) {
        synchronized (this) {
            brokenLocked(from, failure);
        }
        publishLoss();
    }

    private void reconnect() {
        synchronized (this) {
            reconnectLocked();
        }
        publishLoss();
    }

    private void onLossDeadline() {
        synchronized (this) {
            if (loss == null) {
                long now = clock.nanoTime();
                if (!passedSafeWindow(now)) {
                    armLossTimer(now); // the window moved since it was armed (or the timer ran a hair early): wait for the real deadline
                }
            }
        }
        publishLoss();
    }

    private void tickLocked() {
        if (loss != null) {
            return;
        }
        long now = clock.nanoTime();
        if (passedSafeWindow(now)) {
            return;
        }
        long period = ttlNanos / 3;
        // After a pause, skip the ticks that were missed instead of sending a burst.
        do {
            nextTickNanos += period;
        } while (nextTickNanos - now <= 0);
        scheduleTick(now);
        if (stream != null) {
            send(stream, now);
        } // else a reconnect is pending and sends on the new stream
    }

    private void ackLocked(Attachment from, long ttlMillis) {
        if (loss != null || from != stream) {
            return; // an answer on a stream we already gave up
        }
        Long sentAt = from.pendingSends.pollFirst();
        if (sentAt == null) {
            log.warn("lease {}: keep-alive answer without a request in flight; ignored", leaseId);
            return;
        }
        long now = clock.nanoTime();
        // A late answer cannot revive a lease whose window has closed: the server may already
        // have expired it.
        if (passedSafeWindow(now)) {
            return;
        }
        if (ttlMillis <= 0) {
            markLost(LeaseLoss.Reason.EXPIRED, "the server no longer has lease " + leaseId
                    + " (keep-alive answered ttl=0)");
            return;
        }
        long ackTtlNanos = TimeUnit.MILLISECONDS.toNanos(ttlMillis);
        long until = sentAt + safeWindowNanos(ackTtlNanos);
        if (until - safeUntilNanos > 0) {
            lastAckedSendNanos = sentAt;
            safeUntilNanos = until;
            // The loss timer stays armed for the old deadline: it finds the window moved and
            // re-arms then, once per renewal, instead of a cancelled timer per acknowledgement.
        }
        breaksInARow = 0;
        if (from.pendingSends.isEmpty()) {
            changeState(ConnectionState.CONNECTED);
        }
    }

    private void brokenLocked(Attachment from, Throwable failure) {
        if (loss != null || from != stream) {
            return;
        }
        stream = null;
        afterUnlock.add(from::detach);
        Status status = failure == null
                ? Status.UNAVAILABLE.withDescription("the server ended the keep-alive stream")
                : Status.fromThrowable(failure);
        if (status.getCode() == Status.Code.NOT_FOUND) {
            markLost(LeaseLoss.Reason.EXPIRED, "the server no longer has lease " + leaseId + ": "
                    + status.getDescription());
            return;
        }
        changeState(ConnectionState.SUSPENDED);
        // A member that broke the stream is suspect; the next one may serve us.
        endpoints.failedOver(from.endpoint());
        breaksInARow++;
        long delay = reconnectDelayNanos(breaksInARow);
        log.debug("lease {}: keep-alive stream to {} broke ({}); reopening in {} ms",
                leaseId, endpoints.target(from.endpoint()), status, TimeUnit.NANOSECONDS.toMillis(delay));
        reconnectTimer = schedule(this::reconnect, delay);
    }

    private void reconnectLocked() {
        if (loss != null || stream != null) {
            return;
        }
        long now = clock.nanoTime();
        if (passedSafeWindow(now)) {
            return;
        }
        openStream();
        if (stream != null) {
            send(stream, now); // retry the keep-alive the broken stream swallowed
        }
    }

    /** Declares the lease lost if its safe window has closed at {@code now}; caller holds the monitor. */
    private boolean passedSafeWindow(long now) {
        if (now - safeUntilNanos < 0) {
            return false;
        }
        if (!renews) {
            markLost(LeaseLoss.Reason.EXPIRED, "lease " + leaseId + " is not renewed, and 5/6 of its TTL ("
                    + TimeUnit.NANOSECONDS.toMillis(ttlNanos) + " ms) have passed since its grant was sent; the server ends it at its TTL");
            return true;
        }
        markLost(LeaseLoss.Reason.UNREACHABLE, "no keep-alive of lease " + leaseId
                + " was acknowledged within its safe window (" + TimeUnit.NANOSECONDS.toMillis(safeWindowNanos(ttlNanos))
                + " ms) of sending the last acknowledged one, " + TimeUnit.NANOSECONDS.toMillis(now - lastAckedSendNanos)
                + " ms ago; the server may expire it soon");
        return true;
    }

    private void openStream() {
        Attachment attached = streams.attach(endpoints.preferred(), leaseId, this);
        stream = attached;
        if (attached.ended()) {
            brokenLocked(attached, Status.UNAVAILABLE.withDescription("the keep-alive stream ended as it was opened").asRuntimeException());
        }
    }

    private void send(Attachment to, long now) {
        // Record before sending: the answer may arrive before the send returns.
        to.pendingSends.addLast(now);
        try {
            to.send();
        } catch (RuntimeException e) {
            // The call was already closed; reopen now rather than wait for its onError.
            brokenLocked(to, e);
            return;
        }
        long stall = Math.max(MIN_STALL.toNanos(), ttlNanos / STALL_FRACTION_OF_TTL);
        schedule(() -> onStall(to, now), stall);
    }

    private void onStall(Attachment to, long sentAt) {
        synchronized (this) {
            long stall = Math.max(MIN_STALL.toNanos(), ttlNanos / STALL_FRACTION_OF_TTL);
            long now = clock.nanoTime();
            if (loss == null && stream == to && to.pendingSends.contains(sentAt) && to.answeredSince(now - stall)) {
                // The member answers other leases on this stream: it is slow (busy), not gone.
                // Moving would break the stream for every lease on it and resend them all at
                // once; this keep-alive's own window still ends the lease if it never comes.
                schedule(() -> onStall(to, sentAt), stall);
            } else if (loss == null && stream == to && to.pendingSends.contains(sentAt)) {
                log.debug("lease {}: keep-alive to {} unanswered for {} ms; moving to the next member",
                        leaseId, endpoints.target(to.endpoint()), TimeUnit.NANOSECONDS.toMillis(clock.nanoTime() - sentAt));
                // The member answers none of this client's leases either: they all move.
                afterUnlock.add(() -> to.abandon("keep-alive unanswered; moving to another member"));
                brokenLocked(to, Status.UNAVAILABLE.withDescription("keep-alive unanswered").asRuntimeException());
            }
        }
        publishLoss();
    }

    private long reconnectDelayNanos(int breaks) {
        if (breaks <= 1) {
            return streams.reconnectSpreadNanos(ttlNanos);
        }
        long delay = FIRST_RECONNECT_BACKOFF.toNanos() << Math.min(breaks - 2, 20);
        return Math.min(delay, ttlNanos / 6);
    }

    private void scheduleTick(long now) {
        tickTimer = schedule(this::tick, nextTickNanos - now);
    }

    private void armLossTimer(long now) {
        if (lossTimer != null) {
            lossTimer.cancel();
        }
        lossTimer = schedule(this::onLossDeadline, safeUntilNanos - now, false);
    }

    private LeaseTimers.Timer schedule(Runnable task, long delayNanos) {
        return schedule(task, delayNanos, true);
    }

    /** On the lease timers: {@code late} never before the delay (less than a millisecond after it), else never after it. */
    private LeaseTimers.Timer schedule(Runnable task, long delayNanos, boolean late) {
        try {
            return late ? timers.notBefore(task, delayNanos) : timers.notAfter(task, delayNanos);
        } catch (RejectedExecutionException e) {
            markLost(LeaseLoss.Reason.CLOSED, "the client's scheduler was shut down");
            return null;
        }
    }

    /** Caller holds the monitor; the loss is published by {@link #publishLoss()} after it is released. */
    private void markLost(LeaseLoss.Reason reason, String message) {
        if (loss != null) {
            return;
        }
        LeaseLoss declared = new LeaseLoss(reason, message);
        loss = declared;
        unpublished = declared;
        changeState(ConnectionState.LOST);
        for (LeaseTimers.Timer timer : new LeaseTimers.Timer[] {tickTimer, lossTimer, reconnectTimer}) {
            if (timer != null) {
                timer.cancel();
            }
        }
        Attachment closing = stream;
        stream = null;
        if (closing != null) {
            afterUnlock.add(closing::detach);
        }
    }

    /** Caller holds the monitor; listeners hear of it from {@link #publishLoss()}. LOST is final. */
    private void changeState(ConnectionState next) {
        if (state == next || state == ConnectionState.LOST) {
            return;
        }
        state = next;
        unpublishedStates.addLast(next);
    }

    /** Tells the listeners of state changes, then of a loss, in the order they happened; never under the monitor. */
    private void publishLoss() {
        runAfterUnlock();
        publishStates();
        LeaseLoss declared;
        synchronized (this) {
            declared = unpublished;
            unpublished = null;
        }
        if (declared == null) {
            return;
        }
        if (declared.reason() == LeaseLoss.Reason.UNREACHABLE || declared.reason() == LeaseLoss.Reason.EXPIRED) {
            log.warn("lease {} lost ({}): {}", leaseId, declared.reason(), declared.message());
        } else {
            log.debug("lease {} ended ({}): {}", leaseId, declared.reason(), declared.message());
        }
        lost.complete(declared);
        for (Consumer<LeaseLoss> listener : lossListeners) {
            if (lossListeners.remove(listener)) {
                try {
                    listener.accept(declared);
                } catch (RuntimeException e) {
                    log.warn("lease {}: a loss listener failed", leaseId, e);
                }
            }
        }
    }

    /**
     * Runs what the keeper decided under its monitor but must not do there: leaving or breaking a
     * shared stream can end it at once (with a direct executor, inside the call), and its end is
     * told to every other lease on it, each under its own keeper's monitor.
     */
    private void runAfterUnlock() {
        while (true) {
            Runnable next;
            synchronized (this) {
                next = afterUnlock.pollFirst();
            }
            if (next == null) {
                return;
            }
            next.run();
        }
    }

    private void publishStates() {
        // One publisher at a time, so that listeners see the changes in order.
        synchronized (stateListeners) {
            while (true) {
                ConnectionState next;
                synchronized (this) {
                    next = unpublishedStates.pollFirst();
                }
                if (next == null) {
                    return;
                }
                if (next == ConnectionState.SUSPENDED) {
                    log.info("lease {} suspended: no keep-alive acknowledged for now; safe for {} ms more",
                            leaseId, Math.max(0, TimeUnit.NANOSECONDS.toMillis(safeUntilNanos - clock.nanoTime())));
                }
                for (Consumer<ConnectionState> listener : stateListeners) {
                    try {
                        listener.accept(next);
                    } catch (RuntimeException e) {
                        log.warn("lease {}: a state listener failed", leaseId, e);
                    }
                }
            }
        }
    }
}
