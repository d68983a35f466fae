package io.tenure.client;

import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.tenure.proto.v1.Signal;
import io.tenure.proto.v1.SignalListenRequest;
import io.tenure.proto.v1.SignalListenResponse;
import io.tenure.proto.v1.SignalServiceGrpc;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps one {@link Subscription} going over one {@code Listen} stream at a time. A broken stream
 * (member died, {@code UNAVAILABLE}, the member shutting down) is opened again on the next
 * endpoint at once, then with {@link FailoverCall}'s backoff, naming the listener it replaces so
 * that the old registration goes. Signals applied while no stream is registered are missed
 * (signals are not stored). It ends on a refusal ({@link #TERMINAL}), when its lease ends, when
 * it is cut off as too slow, when closed, or when the client closes.
 *
 * <p>Thread safety as in {@link WatchStream}: state changes under the monitor; listener calls are
 * queued there and run after it is released, one at a time, in order.
 */
final class ListenStream {
    private static final Logger log = LoggerFactory.getLogger(ListenStream.class);
    /** Statuses that end the subscription: another member would answer the same, or the listener is gone. */
    private static final Set<Status.Code> TERMINAL = EnumSet.of(Status.Code.INVALID_ARGUMENT, Status.Code.NOT_FOUND,
            Status.Code.FAILED_PRECONDITION, Status.Code.ALREADY_EXISTS, Status.Code.RESOURCE_EXHAUSTED,
            Status.Code.UNIMPLEMENTED, Status.Code.PERMISSION_DENIED, Status.Code.UNAUTHENTICATED);

    private final String pattern;
    private final String group;
    private final SignalListener listener;
    private final Endpoints endpoints;
    private final MonotonicClock clock;
    private final ScheduledExecutorService scheduler;
    private final CompletableFuture<Void> started = new CompletableFuture<>();
    private final CompletableFuture<Void> ended = new CompletableFuture<>();
    private volatile boolean silenced;

    // Guarded by this.
    private long leaseId;
    /** The listener id the last member registered, which the next stream replaces (0: none yet). */
    private long registeredId;
    private Attempt stream;
    private int breaksInARow;
    private long registeredAtNanos;
    private boolean finished;
    private final ListenerCalls outbox = new ListenerCalls(this);

    ListenStream(String pattern, String group, SignalListener listener, Endpoints endpoints, MonotonicClock clock,
                 ScheduledExecutorService scheduler) {
        this.pattern = pattern;
        this.group = group;
        this.listener = listener;
        this.endpoints = endpoints;
        this.clock = clock;
        this.scheduler = scheduler;
    }

    String pattern() {
        return pattern;
    }

    String group() {
        return group;
    }

    CompletableFuture<Void> started() {
        return started;
    }

    CompletableFuture<Void> ended() {
        return ended;
    }

    synchronized boolean isOpen() {
        return !finished;
    }

    /** Opens the first stream with lease {@code leaseId}, on the preferred endpoint. */
    void start(long leaseId) {
        synchronized (this) {
            this.leaseId = leaseId;
            if (!finished && stream == null) {
                open(endpoints.preferred());
            }
        }
        deliver();
    }

    /** The lease could not be had: the subscription ends before it started. */
    void failToStart(Throwable error) {
        synchronized (this) {
            failLocked(StatusErrors.toException(error, null));
        }
        deliver();
    }

    void close() {
        silenced = true;
        synchronized (this) {
            endLocked(null, null);
        }
        deliver();
    }

    void clientClosed() {
        synchronized (this) {
            failLocked(new TenureException("the Tenure client was closed; the subscription to '" + pattern + "' ended"));
        }
        deliver();
    }

    private void onResponse(Attempt from, SignalListenResponse response) {
        synchronized (this) {
            if (finished || from != stream) {
                return;
            }
            if (response.getListenerId() != 0) {
                registeredId = response.getListenerId();
                registeredAtNanos = clock.nanoTime();
                from.registered = true;
                log.debug("subscription {}: listener {} registered on {}", this, registeredId, endpoints.target(from.endpoint));
                if (!started.isDone()) {
                    outbox.add(() -> started.complete(null));
                }
            }
            for (Signal signal : response.getSignalsList()) {
                String channel = signal.getChannel();
                byte[] payload = signal.getPayload().toByteArray();
                outbox.add(() -> {
                    if (!silenced) {
                        try {
                            listener.onSignal(channel, payload);
                        } catch (RuntimeException e) {
                            log.warn("subscription {}: the listener's onSignal threw; the signal counts as delivered", this, e);
                        }
                    }
                });
            }
        }
        deliver();
    }

    private void onBroken(Attempt from, Throwable failure) {
        synchronized (this) {
            brokenLocked(from, failure);
        }
        deliver();
    }

    private void brokenLocked(Attempt from, Throwable failure) {
        if (finished || from != stream) {
            return;
        }
        stream = null;
        from.cancel("the subscription moves to another member");
        Status status = failure == null ? Status.UNAVAILABLE.withDescription("the member ended the listen stream") : Status.fromThrowable(failure);
        if (TERMINAL.contains(status.getCode())) {
            failLocked(StatusErrors.toException(status.asRuntimeException(), endpoints.target(from.endpoint),
                    SignalServiceGrpc.getListenMethod().getFullMethodName()));
            return;
        }
        if (endpoints.isClosed()) {
            failLocked(new TenureException("the Tenure client was closed; the subscription to '" + pattern + "' ended"));
            return;
        }
        if (from.registered && clock.nanoTime() - registeredAtNanos >= FailoverCall.MAX_BACKOFF.toNanos()) {
            breaksInARow = 0;
        }
        breaksInARow++;
        long delay = FailoverCall.backoffNanos(breaksInARow);
        int next = endpoints.retryAfter(from.endpoint);
        log.debug("subscription {}: stream to {} broke ({}); listening again on {} in {} ms", this, endpoints.target(from.endpoint),
                status, endpoints.target(next), TimeUnit.NANOSECONDS.toMillis(delay));
        if (delay == 0) {
            open(next);
            return;
        }
        try {
            scheduler.schedule(() -> {
                synchronized (this) {
                    if (!finished && stream == null) {
                        open(next);
                    }
                }
                deliver();
            }, delay, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            failLocked(new TenureException("the client's scheduler was shut down; the subscription to '" + pattern + "' ended", e));
        }
    }

    private void open(int endpoint) {
        Attempt opening = new Attempt(endpoint);
        stream = opening;
        SignalListenRequest request = SignalListenRequest.newBuilder().setPattern(pattern).setGroup(group).setLeaseId(leaseId)
                .setReplaces(registeredId).build();
        try {
            SignalServiceGrpc.newStub(endpoints.channel(endpoint)).listen(request, opening);
        } catch (RuntimeException e) {
            brokenLocked(opening, e);
        }
    }

    private void failLocked(TenureException error) {
        if (finished) {
            return;
        }
        log.debug("subscription {}: ended: {}", this, error.getMessage());
        endLocked(() -> {
            if (!silenced) {
                listener.onError(error);
            }
        }, error);
    }

    /** Ends the subscription: the stream cancelled (which unregisters the listener), then the final listener call and the futures. */
    private void endLocked(Runnable finalCall, Throwable startFailure) {
        if (finished) {
            return;
        }
        finished = true;
        Attempt last = stream;
        stream = null;
        if (last != null) {
            last.cancel("the subscription was closed");
        }
        if (finalCall != null) {
            outbox.add(finalCall);
        }
        outbox.add(() -> {
            if (startFailure != null) {
                started.completeExceptionally(startFailure);
            } else {
                started.cancel(false);
            }
            ended.complete(null);
        });
    }

    private void deliver() {
        outbox.run();
    }

    @Override
    public String toString() {
        return "'" + pattern + "'" + (group.isEmpty() ? "" : " group '" + group + "'");
    }

    private final class Attempt implements ClientResponseObserver<SignalListenRequest, SignalListenResponse> {
        final int endpoint;
        ClientCallStreamObserver<SignalListenRequest> call;
        boolean registered;

        Attempt(int endpoint) {
            this.endpoint = endpoint;
        }

        @Override
        public void beforeStart(ClientCallStreamObserver<SignalListenRequest> requestStream) {
            this.call = requestStream;
        }

        @Override
        public void onNext(SignalListenResponse response) {
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
            if (call != null) {
                call.cancel(why, null);
            }
        }
    }
}
