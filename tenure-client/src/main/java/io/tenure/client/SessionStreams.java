package io.tenure.client;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.StreamObserver;
import io.tenure.proto.v1.BarrierServiceGrpc;
import io.tenure.proto.v1.CounterServiceGrpc;
import io.tenure.proto.v1.DoubleBarrierServiceGrpc;
import io.tenure.proto.v1.ElectionServiceGrpc;
import io.tenure.proto.v1.KvServiceGrpc;
import io.tenure.proto.v1.LatchServiceGrpc;
import io.tenure.proto.v1.LockServiceGrpc;
import io.tenure.proto.v1.SemaphoreServiceGrpc;
import io.tenure.proto.v1.SessionAnswer;
import io.tenure.proto.v1.SessionCall;
import io.tenure.proto.v1.SessionRequest;
import io.tenure.proto.v1.SessionResponse;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client's session streams: one {@code LockService.Session} stream per member carries every
 * call of every kind this client makes through that member (lock acquires, tries, releases and
 * cancels; lease grants and revokes; semaphore, election, barrier, double barrier and latch
 * calls; counter and key-value calls, their linearizable gets included: each RPC that has a
 * {@link Route}), many to a message both ways, instead of one HTTP/2 stream, header block and
 * trailer per call. On two shared cores the per-call machinery of unary gRPC was two thirds of a
 * member's CPU and nearly all of a client's. Keep-alives have their own stream
 * ({@link KeepAliveStreams}); lists, signals, listings and watches stay unary.
 *
 * <p>{@link FailoverCall} sends each attempt through here as a {@link SessionCall} (its RPC's
 * {@link Route} sets the request on it) and hears back the same way as from a unary call: the
 * answer (the response its unary RPC gives, of the call's own kind), or the status the unary RPC
 * would have ended with. So retries, failover and shed handling stay where they are. A call's
 * deadline is kept here: when it passes, the member is told to forget the call ({@code abandon})
 * and the attempt ends with {@code DEADLINE_EXCEEDED}. When a stream ends, every call open on it
 * ends with the stream's status (a dead member: {@code UNAVAILABLE}), and the next call opens a
 * new stream.
 *
 * <p>A member that does not know the stream (an older release) answers it {@code UNIMPLEMENTED},
 * and one that does not carry a kind of call (an older release) answers that call
 * {@code UNIMPLEMENTED}: the attempt then ends with {@link NotCarried}, {@link #carries} says no
 * from then on (for every call to that member, or for that kind), and the caller sends it, and
 * the later ones, as unary calls.
 *
 * <p>Writes: a caller appends its call to the stream's outbox and, unless another caller is
 * writing, writes the outbox in one message, again while more arrived meanwhile; concurrent
 * callers so share messages without a writer thread or a timer.
 */
final class SessionStreams {
    private static final Logger log = LoggerFactory.getLogger(SessionStreams.class);
    /** The RPCs a session carries, by full method name. */
    private static final Map<String, Route<?, ?>> ROUTES = routes();

    /**
     * How an RPC travels in a session: {@code call} sets its request on a {@link SessionCall},
     * {@code answer} reads its response from the {@link SessionAnswer} field of the same number.
     */
    record Route<Req, Resp>(BiConsumer<SessionCall.Builder, Req> call, Function<SessionAnswer, Resp> answer) {
        /** {@code request} as a call (without its id). */
        SessionCall.Builder callOf(Req request) {
            SessionCall.Builder builder = SessionCall.newBuilder();
            call.accept(builder, request);
            return builder;
        }
    }

    private static Map<String, Route<?, ?>> routes() {
        Map<String, Route<?, ?>> routes = new HashMap<>();
        add(routes, LockServiceGrpc.getLockMethod(), SessionCall.Builder::setLock, SessionAnswer::getLock);
        add(routes, LockServiceGrpc.getTryLockMethod(), SessionCall.Builder::setTryLock, SessionAnswer::getTryLock);
        add(routes, LockServiceGrpc.getUnlockMethod(), SessionCall.Builder::setUnlock, SessionAnswer::getUnlock);
        add(routes, LockServiceGrpc.getDowngradeMethod(), SessionCall.Builder::setDowngrade, SessionAnswer::getDowngrade);
        add(routes, LockServiceGrpc.getLockCancelMethod(), SessionCall.Builder::setLockCancel, SessionAnswer::getLockCancel);
        add(routes, LockServiceGrpc.getLeaseGrantMethod(), SessionCall.Builder::setLeaseGrant, SessionAnswer::getLeaseGrant);
        add(routes, LockServiceGrpc.getLeaseRevokeMethod(), SessionCall.Builder::setLeaseRevoke, SessionAnswer::getLeaseRevoke);
        add(routes, SemaphoreServiceGrpc.getAcquireMethod(), SessionCall.Builder::setSemaphoreAcquire, SessionAnswer::getSemaphoreAcquire);
        add(routes, SemaphoreServiceGrpc.getReleaseMethod(), SessionCall.Builder::setSemaphoreRelease, SessionAnswer::getSemaphoreRelease);
        add(routes, SemaphoreServiceGrpc.getCancelMethod(), SessionCall.Builder::setSemaphoreCancel, SessionAnswer::getSemaphoreCancel);
        add(routes, ElectionServiceGrpc.getCampaignMethod(), SessionCall.Builder::setCampaign, SessionAnswer::getCampaign);
        add(routes, ElectionServiceGrpc.getProclaimMethod(), SessionCall.Builder::setProclaim, SessionAnswer::getProclaim);
        add(routes, ElectionServiceGrpc.getResignMethod(), SessionCall.Builder::setResign, SessionAnswer::getResign);
        add(routes, ElectionServiceGrpc.getCancelMethod(), SessionCall.Builder::setCampaignCancel, SessionAnswer::getCampaignCancel);
        add(routes, ElectionServiceGrpc.getLeaderMethod(), SessionCall.Builder::setLeader, SessionAnswer::getLeader);
        add(routes, BarrierServiceGrpc.getAwaitMethod(), SessionCall.Builder::setBarrierAwait, SessionAnswer::getBarrierAwait);
        add(routes, BarrierServiceGrpc.getLeaveMethod(), SessionCall.Builder::setBarrierLeave, SessionAnswer::getBarrierLeave);
        add(routes, DoubleBarrierServiceGrpc.getEnterMethod(), SessionCall.Builder::setDoubleBarrierEnter, SessionAnswer::getDoubleBarrierEnter);
        add(routes, DoubleBarrierServiceGrpc.getLeaveMethod(), SessionCall.Builder::setDoubleBarrierLeave, SessionAnswer::getDoubleBarrierLeave);
        add(routes, DoubleBarrierServiceGrpc.getCancelMethod(), SessionCall.Builder::setDoubleBarrierCancel,
                SessionAnswer::getDoubleBarrierCancel);
        add(routes, LatchServiceGrpc.getTrySetCountMethod(), SessionCall.Builder::setLatchSetCount, SessionAnswer::getLatchSetCount);
        add(routes, LatchServiceGrpc.getCountDownMethod(), SessionCall.Builder::setLatchCountDown, SessionAnswer::getLatchCountDown);
        add(routes, LatchServiceGrpc.getAwaitMethod(), SessionCall.Builder::setLatchAwait, SessionAnswer::getLatchAwait);
        add(routes, LatchServiceGrpc.getCancelMethod(), SessionCall.Builder::setLatchCancel, SessionAnswer::getLatchCancel);
        add(routes, CounterServiceGrpc.getAddMethod(), SessionCall.Builder::setCounterAdd, SessionAnswer::getCounterAdd);
        add(routes, CounterServiceGrpc.getSetMethod(), SessionCall.Builder::setCounterSet, SessionAnswer::getCounterSet);
        add(routes, CounterServiceGrpc.getCompareAndSetMethod(), SessionCall.Builder::setCounterCompareAndSet,
                SessionAnswer::getCounterCompareAndSet);
        add(routes, CounterServiceGrpc.getGetMethod(), SessionCall.Builder::setCounterGet, SessionAnswer::getCounterGet);
        add(routes, KvServiceGrpc.getPutMethod(), SessionCall.Builder::setKvPut, SessionAnswer::getKvPut);
        add(routes, KvServiceGrpc.getCompareAndSetMethod(), SessionCall.Builder::setKvCompareAndSet, SessionAnswer::getKvCompareAndSet);
        add(routes, KvServiceGrpc.getDeleteMethod(), SessionCall.Builder::setKvDelete, SessionAnswer::getKvDelete);
        add(routes, KvServiceGrpc.getGetMethod(), SessionCall.Builder::setKvGet, SessionAnswer::getKvGet);
        add(routes, KvServiceGrpc.getTxnMethod(), SessionCall.Builder::setKvTxn, SessionAnswer::getKvTxn);
        return Map.copyOf(routes);
    }

    private static <Req, Resp> void add(Map<String, Route<?, ?>> routes, MethodDescriptor<Req, Resp> method,
                                        BiConsumer<SessionCall.Builder, Req> call, Function<SessionAnswer, Resp> answer) {
        routes.put(method.getFullMethodName(), new Route<>(call, answer));
    }

    /** A call sent through a session. */
    interface Sent {
        /** The caller stopped waiting: the member forgets the call; nothing is answered. */
        void cancel();
    }

    /**
     * How a call ends that the member does not carry in a session (it has no stream, or not this
     * kind of call): nothing was done; send it as a unary call.
     */
    static final class NotCarried extends RuntimeException {
        NotCarried(String message) {
            super(message, null, false, false);
        }
    }

    private final Endpoints endpoints;
    private final ScheduledExecutorService scheduler;
    /** Runs the answers of calls that did not ask for the transport thread. */
    private final Executor callbacks;
    private final AtomicLong ids = new AtomicLong();
    /** The open stream to each member, by endpoint index; replaced when it ends. */
    private final Stream[] streams;
    /** Members that answered the stream UNIMPLEMENTED. */
    private final boolean[] unaryOnly;
    /** The kinds of call each member answered UNIMPLEMENTED in a session. */
    private final List<Set<SessionCall.CallCase>> notCarried = new ArrayList<>();

    SessionStreams(Endpoints endpoints, ScheduledExecutorService scheduler, Executor callbacks) {
        this.endpoints = endpoints;
        this.scheduler = scheduler;
        this.callbacks = callbacks;
        this.streams = new Stream[endpoints.size()];
        this.unaryOnly = new boolean[endpoints.size()];
        for (int i = 0; i < endpoints.size(); i++) {
            notCarried.add(ConcurrentHashMap.newKeySet());
        }
    }

    /** How {@code method} travels in a session, or null for an RPC that stays unary (reads, watches, keep-alives). */
    @SuppressWarnings("unchecked")
    static <Req, Resp> Route<Req, Resp> route(MethodDescriptor<Req, Resp> method) {
        return (Route<Req, Resp>) ROUTES.get(method.getFullMethodName());
    }

    /** Whether the member at {@code endpoint} carries calls of {@code kind} in its session, as far as this client knows. */
    boolean carries(int endpoint, SessionCall.CallCase kind) {
        synchronized (this) {
            if (unaryOnly[endpoint]) {
                return false;
            }
        }
        return !notCarried.get(endpoint).contains(kind);
    }

    /**
     * Sends {@code call} (its id is set here) to the member at {@code endpoint}; {@code attempt}
     * hears once, on {@code answers} (null: a thread of the client's own, never the transport):
     * the answer of the call's kind, or the status its unary RPC would have failed with, or
     * {@link NotCarried}.
     *
     * @param timeoutNanos the call's deadline from now, or negative for none
     */
    Sent send(int endpoint, SessionCall.Builder call, long timeoutNanos, Executor answers, StreamObserver<SessionAnswer> attempt) {
        Pending pending = new Pending(call.setId(ids.incrementAndGet()), attempt, answers);
        stream(endpoint).open(pending, timeoutNanos);
        return pending;
    }

    private synchronized Stream stream(int endpoint) {
        Stream stream = streams[endpoint];
        if (stream == null || stream.ended) {
            stream = new Stream(endpoint);
            streams[endpoint] = stream;
            stream.start();
        }
        return stream;
    }

    private synchronized void ended(Stream stream, boolean unimplemented) {
        if (streams[stream.endpoint] == stream) {
            streams[stream.endpoint] = null;
        }
        if (unimplemented) {
            unaryOnly[stream.endpoint] = true;
        }
    }

    /** One call waiting for its answer on a stream. */
    private final class Pending implements Sent {
        final SessionCall.Builder call;
        final StreamObserver<SessionAnswer> attempt;
        final Executor answers;
        final AtomicBoolean done = new AtomicBoolean();
        volatile Stream stream;
        volatile ScheduledFuture<?> deadline;

        Pending(SessionCall.Builder call, StreamObserver<SessionAnswer> attempt, Executor answers) {
            this.call = call;
            this.attempt = attempt;
            this.answers = answers;
        }

        long id() {
            return call.getId();
        }

        void answered(SessionAnswer answer) {
            if (!done.compareAndSet(false, true)) {
                return;
            }
            stopDeadline();
            deliver(() -> attempt.onNext(answer));
        }

        void fail(RuntimeException failure) {
            if (!done.compareAndSet(false, true)) {
                return;
            }
            stopDeadline();
            deliver(() -> attempt.onError(failure));
        }

        private void deliver(Runnable answer) {
            Executor on = answers != null ? answers : callbacks;
            try {
                on.execute(answer);
            } catch (RejectedExecutionException closed) {
                answer.run();
            }
        }

        private void stopDeadline() {
            ScheduledFuture<?> timer = deadline;
            if (timer != null) {
                timer.cancel(false);
            }
        }

        /** The deadline passed: the member forgets the call, the attempt ends as a unary call's would. */
        void expired() {
            Stream on = stream;
            if (on != null) {
                on.forget(this);
            }
            fail(Status.DEADLINE_EXCEEDED.withDescription("no answer within the call's deadline").asRuntimeException());
        }

        @Override
        public void cancel() {
            if (!done.compareAndSet(false, true)) {
                return;
            }
            stopDeadline();
            Stream on = stream;
            if (on != null) {
                on.forget(this);
            }
        }
    }

    /** One Session stream to one member. */
    private final class Stream implements ClientResponseObserver<SessionRequest, SessionResponse> {
        final int endpoint;
        final Map<Long, Pending> open = new ConcurrentHashMap<>();
        final Queue<SessionCall> outbox = new ConcurrentLinkedQueue<>();
        final AtomicBoolean writing = new AtomicBoolean();
        volatile boolean ended;
        /** Why it ended, once it has. */
        volatile Status endStatus = Status.UNAVAILABLE;
        volatile boolean answeredOnce;
        private ClientCallStreamObserver<SessionRequest> requests;

        Stream(int endpoint) {
            this.endpoint = endpoint;
        }

        void start() {
            // Answers are read on the transport thread and handed to each call's own executor.
            ClientCall<SessionRequest, SessionResponse> call = endpoints.channel(endpoint).newCall(LockServiceGrpc.getSessionMethod(),
                    CallOptions.DEFAULT.withExecutor(FailoverCall.ON_TRANSPORT_THREAD));
            StreamObserver<SessionRequest> sending = ClientCalls.asyncBidiStreamingCall(call, this);
            synchronized (this) {
                if (requests == null) {
                    requests = (ClientCallStreamObserver<SessionRequest>) sending;
                }
            }
        }

        @Override
        public synchronized void beforeStart(ClientCallStreamObserver<SessionRequest> requestStream) {
            requests = requestStream;
        }

        void open(Pending pending, long timeoutNanos) {
            pending.stream = this;
            open.put(pending.id(), pending);
            if (ended) {
                // Ended while this call was joining it: the attempt fails as the stream did, and
                // the caller's retry takes the next stream.
                if (open.remove(pending.id()) != null) {
                    Status status = endStatus;
                    pending.fail(status.getCode() == Status.Code.UNIMPLEMENTED ? noStream() : status.asRuntimeException());
                }
                return;
            }
            if (timeoutNanos >= 0) {
                try {
                    pending.deadline = scheduler.schedule(pending::expired, Math.max(1, timeoutNanos), TimeUnit.NANOSECONDS);
                } catch (RejectedExecutionException closed) {
                    open.remove(pending.id());
                    pending.fail(Status.CANCELLED.withDescription("the client is closed").asRuntimeException());
                    return;
                }
            }
            write(pending.call.build());
        }

        void forget(Pending pending) {
            if (open.remove(pending.id()) != null && !ended) {
                write(SessionCall.newBuilder().setAbandon(pending.id()).build());
            }
        }

        private void write(SessionCall call) {
            outbox.add(call);
            while (writing.compareAndSet(false, true)) {
                SessionRequest.Builder message = SessionRequest.newBuilder();
                for (SessionCall c = outbox.poll(); c != null; c = outbox.poll()) {
                    message.addCalls(c);
                }
                if (message.getCallsCount() > 0) {
                    try {
                        synchronized (this) {
                            if (!ended) {
                                requests.onNext(message.build());
                            }
                        }
                    } catch (RuntimeException e) {
                        // The call was cancelled or closed under us: its end (onError) fails what is open.
                        log.debug("session to {}: write failed ({})", endpoints.target(endpoint), e.toString());
                    }
                }
                writing.set(false);
                if (outbox.isEmpty()) {
                    break;
                }
            }
        }

        @Override
        public void onNext(SessionResponse response) {
            answeredOnce = true;
            for (SessionAnswer answer : response.getAnswersList()) {
                Pending pending = open.remove(answer.getId());
                if (pending == null) {
                    continue; // abandoned, or expired
                }
                SessionCall.CallCase kind = pending.call.getCallCase();
                if (answer.getAnswerCase() == SessionAnswer.AnswerCase.ERROR) {
                    if (answer.getError().getCode() == Status.Code.UNIMPLEMENTED.value()) {
                        notCarried.get(endpoint).add(kind);
                        log.debug("{} does not carry {} calls in a session (an older release): they go unary", endpoints.target(endpoint), kind);
                        pending.fail(new NotCarried(endpoints.target(endpoint) + " does not carry " + kind + " calls in a session"));
                    } else {
                        pending.fail(failure(answer));
                    }
                } else if (answer.getAnswerCase().getNumber() == kind.getNumber()) {
                    pending.answered(answer);
                } else {
                    pending.fail(Status.INTERNAL.withDescription("the member answered call " + answer.getId() + " (" + kind
                            + ") with " + answer.getAnswerCase()).asRuntimeException());
                }
            }
        }

        private StatusRuntimeException failure(SessionAnswer answer) {
            Status status = Status.fromCodeValue(answer.getError().getCode()).withDescription(answer.getError().getMessage());
            if (answer.getError().getRetryAfterMs() > 0) {
                Metadata trailers = new Metadata();
                trailers.put(StatusErrors.RETRY_AFTER_MS, Long.toString(answer.getError().getRetryAfterMs()));
                return status.asRuntimeException(trailers);
            }
            return status.asRuntimeException();
        }

        @Override
        public void onError(Throwable t) {
            end(Status.fromThrowable(t));
        }

        @Override
        public void onCompleted() {
            end(Status.UNAVAILABLE.withDescription("the member closed the session stream"));
        }

        private void end(Status status) {
            boolean unimplemented = status.getCode() == Status.Code.UNIMPLEMENTED && !answeredOnce;
            endStatus = unimplemented ? status : status.getCode() == Status.Code.UNIMPLEMENTED
                    ? Status.INTERNAL.withDescription(status.getDescription()) : status;
            ended = true;
            ended(this, unimplemented);
            List<Pending> failed = new ArrayList<>(open.values());
            open.clear();
            if (unimplemented) {
                log.debug("{} has no session stream (an older release): its calls go unary", endpoints.target(endpoint));
            }
            RuntimeException failure = unimplemented ? noStream() : status.asRuntimeException();
            for (Pending pending : failed) {
                pending.fail(failure);
            }
        }

        private NotCarried noStream() {
            return new NotCarried(endpoints.target(endpoint) + " has no session stream");
        }

        void close() {
            synchronized (this) {
                if (requests != null && !ended) {
                    requests.cancel("the client is closing", null);
                }
            }
        }
    }

    /** Cancels every stream; their open calls end CANCELLED. */
    void close() {
        List<Stream> all = new ArrayList<>();
        synchronized (this) {
            for (Stream s : streams) {
                if (s != null) {
                    all.add(s);
                }
            }
        }
        all.forEach(Stream::close);
    }
}
