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
import io.tenure.proto.v1.LockCancelRequest;
import io.tenure.proto.v1.LockRequest;
import io.tenure.proto.v1.LockServiceGrpc;
import io.tenure.proto.v1.SessionAnswer;
import io.tenure.proto.v1.SessionCall;
import io.tenure.proto.v1.SessionRequest;
import io.tenure.proto.v1.SessionResponse;
import io.tenure.proto.v1.TryLockRequest;
import io.tenure.proto.v1.UnlockRequest;
import java.util.ArrayList;
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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client's session streams: one {@code LockService.Session} stream per member carries every
 * lock call this client makes through that member (acquire, try, release, cancel), many to a
 * message both ways, instead of one HTTP/2 stream, header block and trailer per call. On two
 * shared cores the per-call machinery of unary gRPC was two thirds of a member's CPU and nearly
 * all of a client's.
 *
 * <p>{@link FailoverCall} sends each attempt through here as it would start a unary call, and
 * hears back the same way: a response, or the status the unary RPC would have ended with. So
 * retries, failover and shed handling stay where they are. A call's deadline is kept here: when
 * it passes, the member is told to forget the call ({@code abandon}) and the attempt ends with
 * {@code DEADLINE_EXCEEDED}. When a stream ends, every call open on it ends with the stream's
 * status (a dead member: {@code UNAVAILABLE}), and the next call opens a new stream.
 *
 * <p>A member that does not know the stream (an older release) answers it {@code UNIMPLEMENTED};
 * the calls open on it then go as unary calls, and so does every later call to that member.
 *
 * <p>Writes: a caller appends its call to the stream's outbox and, unless another caller is
 * writing, writes the outbox in one message, again while more arrived meanwhile; concurrent
 * callers so share messages without a writer thread or a timer.
 */
final class SessionStreams {
    private static final Logger log = LoggerFactory.getLogger(SessionStreams.class);
    private static final Set<String> CARRIED = Set.of(
            LockServiceGrpc.getLockMethod().getFullMethodName(),
            LockServiceGrpc.getTryLockMethod().getFullMethodName(),
            LockServiceGrpc.getUnlockMethod().getFullMethodName(),
            LockServiceGrpc.getLockCancelMethod().getFullMethodName());

    /** A call sent through a session (or, to a member without sessions, as a unary call). */
    interface Sent {
        /** The caller stopped waiting: the member forgets the call; nothing is answered. */
        void cancel();
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

    SessionStreams(Endpoints endpoints, ScheduledExecutorService scheduler, Executor callbacks) {
        this.endpoints = endpoints;
        this.scheduler = scheduler;
        this.callbacks = callbacks;
        this.streams = new Stream[endpoints.size()];
        this.unaryOnly = new boolean[endpoints.size()];
    }

    /** Whether {@code method} goes through the session stream (to members that have it). */
    static boolean carries(MethodDescriptor<?, ?> method) {
        return CARRIED.contains(method.getFullMethodName());
    }

    /**
     * Sends {@code request} to the member at {@code endpoint}; {@code attempt} hears the answer
     * once, on {@code answers} (null: a thread of the client's own, never the transport).
     *
     * @param timeoutNanos the call's deadline from now, or negative for none
     */
    <Req, Resp> Sent send(int endpoint, MethodDescriptor<Req, Resp> method, Req request, long timeoutNanos,
                          Executor answers, StreamObserver<Resp> attempt) {
        Pending<Resp> pending = new Pending<>(attempt, answers);
        boolean unary;
        synchronized (this) {
            unary = unaryOnly[endpoint];
        }
        if (unary) {
            pending.sendUnary(endpoint, method, request, timeoutNanos);
            return pending;
        }
        pending.call = SessionCall.newBuilder().setId(ids.incrementAndGet());
        switch (method.getBareMethodName()) {
            case "Lock" -> pending.call.setLock((LockRequest) request);
            case "TryLock" -> pending.call.setTryLock((TryLockRequest) request);
            case "Unlock" -> pending.call.setUnlock((UnlockRequest) request);
            case "LockCancel" -> pending.call.setLockCancel((LockCancelRequest) request);
            default -> throw new IllegalArgumentException(method.getFullMethodName() + " does not travel in a session");
        }
        pending.resend = () -> pending.sendUnary(endpoint, method, request, timeoutNanos);
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

    /** One call: waiting for its answer on a stream, or sent as a unary call. */
    private final class Pending<Resp> implements Sent {
        final StreamObserver<Resp> attempt;
        final Executor answers;
        final AtomicBoolean done = new AtomicBoolean();
        SessionCall.Builder call;
        /** Sends the call as a unary call instead: to a member without sessions. */
        Runnable resend;
        volatile Stream stream;
        volatile ScheduledFuture<?> deadline;
        volatile ClientCall<?, ?> unaryCall;

        Pending(StreamObserver<Resp> attempt, Executor answers) {
            this.attempt = attempt;
            this.answers = answers;
        }

        long id() {
            return call.getId();
        }

        <Req> void sendUnary(int endpoint, MethodDescriptor<Req, Resp> method, Req request, long timeoutNanos) {
            ClientCall<Req, Resp> unary = endpoints.channel(endpoint).newCall(method, FailoverCall.unaryOptions(timeoutNanos, answers));
            unaryCall = unary;
            if (done.get()) {
                return;
            }
            try {
                ClientCalls.asyncUnaryCall(unary, request, attempt);
            } catch (RuntimeException e) {
                fail(Status.fromThrowable(e).asRuntimeException());
            }
        }

        @SuppressWarnings("unchecked")
        void answered(Object response) {
            if (!done.compareAndSet(false, true)) {
                return;
            }
            stopDeadline();
            deliver(() -> attempt.onNext((Resp) response));
        }

        void fail(StatusRuntimeException failure) {
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
            ClientCall<?, ?> unary = unaryCall;
            if (unary != null) {
                unary.cancel("cancelled by the caller", null);
            }
        }
    }

    /** One Session stream to one member. */
    private final class Stream implements ClientResponseObserver<SessionRequest, SessionResponse> {
        final int endpoint;
        final Map<Long, Pending<?>> open = new ConcurrentHashMap<>();
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

        void open(Pending<?> pending, long timeoutNanos) {
            pending.stream = this;
            open.put(pending.id(), pending);
            if (ended) {
                // Ended while this call was joining it: the attempt fails as the stream did, and
                // the caller's retry takes the next stream.
                if (open.remove(pending.id()) != null) {
                    Status status = endStatus;
                    if (status.getCode() == Status.Code.UNIMPLEMENTED) {
                        pending.stream = null;
                        pending.resend.run();
                    } else {
                        pending.fail(status.asRuntimeException());
                    }
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

        void forget(Pending<?> pending) {
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
                Pending<?> pending = open.remove(answer.getId());
                if (pending == null) {
                    continue; // abandoned, or expired
                }
                switch (answer.getAnswerCase()) {
                    case LOCK -> pending.answered(answer.getLock());
                    case TRY_LOCK -> pending.answered(answer.getTryLock());
                    case UNLOCK -> pending.answered(answer.getUnlock());
                    case LOCK_CANCEL -> pending.answered(answer.getLockCancel());
                    case ERROR -> pending.fail(failure(answer));
                    default -> pending.fail(Status.INTERNAL.withDescription("the member answered call " + answer.getId()
                            + " with nothing this client knows (" + answer.getAnswerCase() + ")").asRuntimeException());
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
            List<Pending<?>> failed = new ArrayList<>(open.values());
            open.clear();
            if (unimplemented) {
                log.debug("{} has no session stream (an older release): its calls go unary", endpoints.target(endpoint));
                for (Pending<?> pending : failed) {
                    pending.stream = null;
                    pending.stopDeadline();
                    pending.resend.run();
                }
                return;
            }
            StatusRuntimeException failure = status.asRuntimeException();
            for (Pending<?> pending : failed) {
                pending.fail(failure);
            }
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
