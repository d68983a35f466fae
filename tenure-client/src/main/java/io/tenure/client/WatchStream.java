package io.tenure.client;

import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.tenure.proto.v1.Event;
import io.tenure.proto.v1.KeyValue;
import io.tenure.proto.v1.LockServiceGrpc;
import io.tenure.proto.v1.WatchRequest;
import io.tenure.proto.v1.WatchResponse;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps one {@link Watch} going over one {@code Watch} stream at a time, moving to another member
 * when the stream breaks, without a gap or a duplicate (ARCHITECTURE.md, I10):
 *
 * <ul>
 *   <li>every stream creates the watch with {@code start_revision} = the revision after the last
 *       event accepted, or the original start revision while none was; a watch from 0 ("from the
 *       next change") is pinned, when the first member confirms it, to the revision after that
 *       member's header revision, so a reconnect misses nothing in between;</li>
 *   <li>an event whose revision is below that point is dropped: a lagging member, or one that
 *       replays from a different place, can neither repeat an event nor go back in time;</li>
 *   <li>a broken stream (member died, {@code UNAVAILABLE}, the member cancelled the watch because
 *       it is shutting down or we fell behind) is reopened on the next endpoint at once, then with
 *       the jittered backoff of {@link FailoverCall#backoffNanos} (50 ms doubling to 250 ms); a
 *       stream that was served for {@link FailoverCall#MAX_BACKOFF} starts the series over;</li>
 *   <li>it ends on compaction, on a refusal no member would answer otherwise
 *       ({@link #TERMINAL}), when the caller closes it, or when the client closes; never because
 *       members are unreachable.</li>
 * </ul>
 *
 * <p>Thread safety: stream callbacks and timers change state under the monitor, as in
 * {@link LeaseKeeper}; what the listener must see is queued there and delivered after the
 * monitor is released, by one thread at a time in queue order, so listener calls never overlap,
 * keep revision order across streams, and never run while this object is locked.
 */
final class WatchStream {
    private static final Logger log = LoggerFactory.getLogger(WatchStream.class);
    /** Statuses no member or later attempt would answer differently; anything else is retried. */
    private static final Set<Status.Code> TERMINAL = EnumSet.of(Status.Code.INVALID_ARGUMENT,
            Status.Code.UNIMPLEMENTED, Status.Code.PERMISSION_DENIED, Status.Code.UNAUTHENTICATED);
    /** The server's cancel reason for a watch it refused as malformed. */
    private static final String REFUSED = "INVALID_ARGUMENT";

    private final String key;
    private final boolean prefix;
    /** The key is a pattern (seed 004's tokens) matched against every name. */
    private final boolean pattern;
    private final WatchListener listener;
    private final Endpoints endpoints;
    private final MonotonicClock clock;
    private final ScheduledExecutorService scheduler;
    private final CompletableFuture<Long> started = new CompletableFuture<>();
    private final CompletableFuture<Void> ended = new CompletableFuture<>();
    private volatile long lastDelivered;
    /** Set by the caller's close: the listener is not called again. */
    private volatile boolean silenced;

    // Guarded by this.
    /**
     * The start revision of the next stream, and the lowest revision still to deliver: events
     * below it are duplicates or older. 0 only for a watch from the next change that no member
     * has confirmed yet.
     */
    private long resumeFrom;
    private Attempt stream; // null while waiting to reconnect, and once finished
    private long attempts;
    private int breaksInARow;
    private ScheduledFuture<?> reconnectTimer;
    private boolean finished;
    private boolean startQueued;
    private final ListenerCalls outbox = new ListenerCalls(this);

    WatchStream(String key, boolean prefix, long startRevision, WatchListener listener,
                Endpoints endpoints, MonotonicClock clock, ScheduledExecutorService scheduler) {
        this(key, prefix, false, startRevision, listener, endpoints, clock, scheduler);
    }

    WatchStream(String key, boolean prefix, boolean pattern, long startRevision, WatchListener listener,
                Endpoints endpoints, MonotonicClock clock, ScheduledExecutorService scheduler) {
        this.key = key;
        this.prefix = prefix;
        this.pattern = pattern;
        this.resumeFrom = startRevision;
        this.listener = listener;
        this.endpoints = endpoints;
        this.clock = clock;
        this.scheduler = scheduler;
    }

    String key() {
        return key;
    }

    boolean prefix() {
        return prefix;
    }

    boolean pattern() {
        return pattern;
    }

    long lastDelivered() {
        return lastDelivered;
    }

    CompletableFuture<Long> started() {
        return started;
    }

    /** Completes once the watch has ended and its final listener call (if any) has run. */
    CompletableFuture<Void> ended() {
        return ended;
    }

    /** False from the moment the watch ends, before its final listener call runs. */
    synchronized boolean isOpen() {
        return !finished;
    }

    /** Opens the first stream, on the preferred endpoint. */
    void start() {
        synchronized (this) {
            if (!finished && stream == null && attempts == 0) {
                open(endpoints.preferred());
            }
        }
        deliver();
    }

    /** The caller's close: cancels the watch on the server, and the listener hears nothing more. */
    void close() {
        silenced = true;
        synchronized (this) {
            if (!finished) {
                log.debug("watch {}: closed by the caller", this);
                endLocked(null, null, null, "closed by the client");
            }
        }
        deliver();
    }

    /** The client is closing: the watch ends with {@code onError}. */
    void clientClosed() {
        synchronized (this) {
            failLocked(new TenureException("the Tenure client was closed; watch on " + describe() + " ended"), false);
        }
        deliver();
    }

    // Entry points (stream callbacks, timers) change state under the monitor, then deliver what
    // they queued after releasing it.

    private void onResponse(Attempt from, WatchResponse response) {
        synchronized (this) {
            responseLocked(from, response);
        }
        deliver();
    }

    private void onBroken(Attempt from, Throwable failure) {
        synchronized (this) {
            brokenLocked(from, failure);
        }
        deliver();
    }

    private void reconnect(int endpoint) {
        synchronized (this) {
            if (!finished && stream == null) {
                open(endpoint);
            }
        }
        deliver();
    }

    private void responseLocked(Attempt from, WatchResponse response) {
        if (finished || from != stream) {
            return; // an answer on a stream we already gave up
        }
        if (response.getWatchId() != from.watchId) {
            log.debug("watch {}: response for unknown watch id {} on {}; ignored", this, response.getWatchId(), target(from));
            return;
        }
        if (response.getCanceled()) {
            canceledLocked(from, response);
            return;
        }
        if (response.getCreated()) {
            createdLocked(from, response);
        }
        for (Event event : response.getEventsList()) {
            acceptLocked(from, event);
        }
    }

    private void createdLocked(Attempt from, WatchResponse response) {
        from.createdAtNanos = clock.nanoTime();
        from.created = true;
        long revision = response.getHeader().getRevision();
        if (resumeFrom == 0 && response.hasHeader()) {
            // "From the next change" is pinned to the revision the member had when it created the
            // watch: a member may still send events at or below it, so where a stream breaks
            // would decide whether they are seen; dropping them makes the watch exactly "after
            // this revision", which a reconnect can continue without a gap.
            resumeFrom = revision + 1;
        }
        log.debug("watch {}: created on {} at revision {}, delivering from {}", this, target(from), revision, resumeFrom);
        if (!startQueued) {
            startQueued = true;
            outbox.add(() -> started.complete(revision));
        }
    }

    private void acceptLocked(Attempt from, Event proto) {
        long revision = proto.getKv().getModRevision();
        if (revision <= 0 || revision < resumeFrom) {
            log.debug("watch {}: dropped event at revision {} from {}: delivering from {}", this, revision, target(from), resumeFrom);
            return;
        }
        resumeFrom = revision + 1;
        if (proto.getType() != Event.EventType.PUT && proto.getType() != Event.EventType.DELETE) {
            log.warn("watch {}: skipped event of unknown type {} at revision {}", this, proto.getTypeValue(), revision);
            return;
        }
        WatchEvent event = toEvent(proto);
        outbox.add(() -> {
            if (!silenced) {
                lastDelivered = event.revision();
                callListener(() -> listener.onEvent(event), "onEvent");
            }
        });
    }

    private void canceledLocked(Attempt from, WatchResponse response) {
        String reason = response.getCancelReason();
        if (response.getCompactRevision() > 0) {
            long compactRevision = response.getCompactRevision();
            log.info("watch {}: revision {} is compacted on {} (oldest retained {}); the watch ends",
                    this, resumeFrom, target(from), compactRevision);
            endLocked(() -> listener.onCompacted(compactRevision), "onCompacted",
                    new TenureException("watch on " + describe() + " could not continue from revision " + resumeFrom
                            + ": the oldest retained revision is " + compactRevision),
                    "compacted");
            return;
        }
        if (reason.startsWith(REFUSED)) {
            failLocked(new InvalidArgumentException(reason, null), true);
            return;
        }
        // The member ended the watch but another, or this one later, can serve it: it is
        // shutting down, or this watch fell too far behind.
        brokenLocked(from, Status.UNAVAILABLE.withDescription("the member cancelled the watch: " + reason).asRuntimeException());
    }

    private void brokenLocked(Attempt from, Throwable failure) {
        if (finished || from != stream) {
            return;
        }
        stream = null;
        from.cancel("the watch moves to another member"); // no-op when the call has ended already
        Status status = failure == null
                ? Status.UNAVAILABLE.withDescription("the member ended the watch stream")
                : Status.fromThrowable(failure);
        if (TERMINAL.contains(status.getCode())) {
            failLocked(StatusErrors.toException(status.asRuntimeException(), target(from), LockServiceGrpc.getWatchMethod().getFullMethodName()), true);
            return;
        }
        if (endpoints.isClosed()) {
            failLocked(new TenureException("the Tenure client was closed; watch on " + describe() + " ended"), false);
            return;
        }
        long now = clock.nanoTime();
        if (from.created && now - from.createdAtNanos >= FailoverCall.MAX_BACKOFF.toNanos()) {
            breaksInARow = 0; // it was served for a while: a fresh failure, retried at once
        }
        breaksInARow++;
        long delay = FailoverCall.backoffNanos(breaksInARow);
        int next = endpoints.retryAfter(from.endpoint);
        log.debug("watch {}: stream to {} broke ({}); resuming from revision {} on {} in {} ms", this, target(from),
                status, resumeFrom, endpoints.target(next), TimeUnit.NANOSECONDS.toMillis(delay));
        if (delay == 0) {
            open(next);
            return;
        }
        try {
            reconnectTimer = scheduler.schedule(() -> reconnect(next), delay, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            failLocked(new TenureException("the client's scheduler was shut down; watch on " + describe() + " ended", e), false);
        }
    }

    private void open(int endpoint) {
        Attempt opening = new Attempt(endpoint, ++attempts);
        // Current before the call starts: with a direct executor its callbacks may run inside it.
        stream = opening;
        WatchRequest.Builder create = WatchRequest.newBuilder();
        if (pattern) {
            create.setPattern(key);
        } else {
            create.setKey(key).setPrefix(prefix);
        }
        create.setStartRevision(resumeFrom).setWatchId(opening.watchId).setPrevKv(true);
        try {
            LockServiceGrpc.newStub(endpoints.channel(endpoint)).watch(opening);
            if (stream == opening) {
                opening.requests.onNext(create.build());
            }
        } catch (RuntimeException e) {
            brokenLocked(opening, e);
        }
    }

    /** @param refused true when a member refused the watch, false when the client is shutting down */
    private void failLocked(TenureException error, boolean refused) {
        if (finished) {
            return;
        }
        if (refused) {
            log.warn("watch {}: refused: {}", this, error.getMessage());
        } else {
            log.debug("watch {}: ended: {}", this, error.getMessage());
        }
        endLocked(() -> listener.onError(error), "onError", error, error.getMessage());
    }

    /**
     * Ends the watch: no reconnect, the stream cancelled (which cancels the watch on the member),
     * then, in the listener's queue, the final listener call (if any) and the futures.
     */
    private void endLocked(Runnable finalCall, String finalCallName, Throwable startFailure, String why) {
        finished = true;
        if (reconnectTimer != null) {
            reconnectTimer.cancel(false);
        }
        Attempt closing = stream;
        stream = null;
        if (closing != null) {
            closing.cancel("watch ended: " + why);
        }
        if (finalCall != null) {
            outbox.add(() -> {
                if (!silenced) {
                    callListener(finalCall, finalCallName);
                }
            });
        }
        outbox.add(() -> {
            if (startFailure == null) {
                started.cancel(false);
            } else {
                started.completeExceptionally(startFailure);
            }
            ended.complete(null);
        });
    }

    private void deliver() {
        outbox.run();
    }

    private void callListener(Runnable call, String method) {
        try {
            call.run();
        } catch (RuntimeException e) {
            log.warn("watch {}: the listener's {} failed; the watch goes on", this, method, e);
        }
    }

    private static WatchEvent toEvent(Event proto) {
        KeyValue kv = proto.getKv();
        boolean put = proto.getType() == Event.EventType.PUT;
        KeyValue prev = proto.hasPrevKv() ? proto.getPrevKv() : null;
        return new WatchEvent(put ? WatchEvent.Type.PUT : WatchEvent.Type.DELETE,
                kv.getKey().toStringUtf8(),
                kv.getModRevision(),
                put ? kv.getHolder() : "",
                put ? kv.getLease() : 0,
                put ? kv.getMetadata().toByteArray() : null,
                prev == null ? "" : prev.getHolder(),
                prev == null ? 0 : prev.getModRevision(),
                put ? kv.getCreateRevision() : 0,
                proto.getKind());
    }

    private String target(Attempt attempt) {
        return endpoints.target(attempt.endpoint);
    }

    private String describe() {
        return (pattern ? "pattern '" : prefix ? "prefix '" : "key '") + key + "'";
    }

    @Override
    public String toString() {
        return describe();
    }

    /** One {@code Watch} stream carrying this watch; callbacks of every stream but the current one are ignored. */
    private final class Attempt implements ClientResponseObserver<WatchRequest, WatchResponse> {
        final int endpoint;
        /** Unique on its stream; the attempt number keeps logs readable. */
        final long watchId;
        ClientCallStreamObserver<WatchRequest> requests;
        // Guarded by the WatchStream.
        boolean created;
        long createdAtNanos;

        Attempt(int endpoint, long watchId) {
            this.endpoint = endpoint;
            this.watchId = watchId;
        }

        @Override
        public void beforeStart(ClientCallStreamObserver<WatchRequest> requestStream) {
            this.requests = requestStream;
        }

        @Override
        public void onNext(WatchResponse response) {
            onResponse(this, response);
        }

        @Override
        public void onError(Throwable failure) {
            onBroken(this, failure);
        }

        @Override
        public void onCompleted() {
            onBroken(this, null);
        }

        void cancel(String why) {
            if (requests != null) {
                requests.cancel(why, null);
            }
        }
    }
}
