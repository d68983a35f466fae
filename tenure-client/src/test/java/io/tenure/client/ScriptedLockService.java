package io.tenure.client;

import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.grpc.Metadata;
import io.tenure.proto.v1.LeaseGrantBatchRequest;
import io.tenure.proto.v1.LeaseGrantBatchResponse;
import io.tenure.proto.v1.LeaseGrantRequest;
import io.tenure.proto.v1.LeaseGrantResult;
import io.tenure.proto.v1.LeaseGrantResponse;
import io.tenure.proto.v1.LeaseKeepAliveRequest;
import io.tenure.proto.v1.LeaseKeepAliveResponse;
import io.tenure.proto.v1.LeaseRevokeRequest;
import io.tenure.proto.v1.LeaseRevokeResponse;
import io.tenure.proto.v1.LockCancelRequest;
import io.tenure.proto.v1.LockCancelResponse;
import io.tenure.proto.v1.LockRequest;
import io.tenure.proto.v1.LockResponse;
import io.tenure.proto.v1.LockServiceGrpc;
import io.tenure.proto.v1.StatusRequest;
import io.tenure.proto.v1.StatusResponse;
import io.tenure.proto.v1.TryLockRequest;
import io.tenure.proto.v1.TryLockResponse;
import io.tenure.proto.v1.UnlockRequest;
import io.tenure.proto.v1.UnlockResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * A LockService whose answers the test scripts: it records every request and can stop
 * acknowledging keep-alives, hold them, answer ttl=0, or break streams. Not a lock server.
 */
final class ScriptedLockService extends LockServiceGrpc.LockServiceImplBase {
    enum KeepAlives {
        /** Acknowledge each keep-alive at once with the lease's TTL. */
        ACK,
        /** Receive keep-alives and never answer them. */
        SILENT,
        /** Keep the acknowledgements until {@link #releaseHeldAcks()}. */
        HOLD,
        /** Answer ttl = 0: the lease is gone. */
        EXPIRED,
        /** Fail the stream with UNAVAILABLE on each keep-alive. */
        BREAK
    }

    final String name;
    volatile KeepAlives keepAlives = KeepAlives.ACK;
    /** Answers Lock requests; returning null parks the call until the client cancels it. */
    volatile Function<LockRequest, LockResponse> lockAnswer =
            request -> LockResponse.newBuilder().setKey(request.getName()).setAcquired(true).setFencingToken(1L << 16).build();
    volatile Function<TryLockRequest, TryLockResponse> tryLockAnswer =
            request -> TryLockResponse.newBuilder().setKey(request.getName()).setAcquired(true).setFencingToken(1L << 16).build();
    /** When set, Unlock fails with it. */
    volatile Status unlockFailure;
    /** When true, Unlock calls are recorded but kept unanswered until {@link #releaseHeldUnlocks()}. */
    volatile boolean holdUnlocks;
    private final Queue<Runnable> heldUnlocks = new ConcurrentLinkedQueue<>();
    /** When set, Status fails with it. */
    volatile Status statusFailure;
    /** When set, LeaseGrant records the request and fails with it. */
    volatile Status grantFailure;
    /** The next this many LeaseGrant calls are shed: RESOURCE_EXHAUSTED with {@link #shedHintMs} as the retry hint. */
    final AtomicInteger shedGrants = new AtomicInteger();
    /** The retry hint of a shed grant, in milliseconds; a negative one sends no hint (a limit, not a shed). */
    volatile long shedHintMs = 100;
    /** When true, LeaseGrant calls are kept unanswered until {@link #releaseHeldGrants()}. */
    volatile boolean holdGrants;
    private final Queue<Runnable> heldGrants = new java.util.concurrent.ConcurrentLinkedQueue<>();
    /** LeaseGrantBatch calls received (each grant of a batch is also added to {@link #grants}). */
    final AtomicInteger grantBatches = new AtomicInteger();
    /** When true, LeaseGrantBatch answers UNIMPLEMENTED, as a member from before it does. */
    volatile boolean batchUnimplemented;
    /** When set, LeaseRevoke revokes the lease and then fails with it, as if the answer was lost. */
    volatile Status revokeAnswerLost;

    final BlockingQueue<LeaseGrantRequest> grants = new LinkedBlockingQueue<>();
    final BlockingQueue<LeaseKeepAliveRequest> keepAlivesReceived = new LinkedBlockingQueue<>();
    final BlockingQueue<Long> revokes = new LinkedBlockingQueue<>();
    final BlockingQueue<LockRequest> locks = new LinkedBlockingQueue<>();
    final BlockingQueue<UnlockRequest> unlocks = new LinkedBlockingQueue<>();
    final BlockingQueue<LockCancelRequest> cancels = new LinkedBlockingQueue<>();
    /** Answers LockCancel requests: by default the wait is withdrawn (not acquired). */
    volatile Function<LockCancelRequest, LockCancelResponse> cancelAnswer =
            request -> LockCancelResponse.newBuilder().setKey(request.getName()).build();
    final AtomicInteger statusCalls = new AtomicInteger();
    final AtomicInteger streamsOpened = new AtomicInteger();
    /** Leases whose keep-alives are received but never answered (the others are, as the mode says). */
    final java.util.Set<Long> unanswered = java.util.concurrent.ConcurrentHashMap.newKeySet();
    /** Keep-alive requests that carried several leases. */
    final AtomicInteger batchedKeepAlives = new AtomicInteger();
    /** Completes when a parked Lock call is cancelled by the client. */
    final CompletableFuture<Void> parkedLockCancelled = new CompletableFuture<>();

    /** Granted leases and their TTLs; shared by the members of one test, as replication would. */
    private final Map<Long, Long> ttlMsByLease;
    private final List<StreamObserver<LeaseKeepAliveResponse>> openStreams = new CopyOnWriteArrayList<>();
    private final Queue<Runnable> heldAcks = new ConcurrentLinkedQueue<>();
    private final Queue<StreamObserver<LockResponse>> parkedLocks = new ConcurrentLinkedQueue<>();

    ScriptedLockService(String name, Map<Long, Long> ttlMsByLease) {
        this.name = name;
        this.ttlMsByLease = ttlMsByLease;
    }

    /** Sends the acknowledgements kept in {@link KeepAlives#HOLD} mode. */
    void releaseHeldAcks() {
        Runnable ack;
        while ((ack = heldAcks.poll()) != null) {
            ack.run();
        }
    }

    /** Answers the Unlock calls kept in {@link #holdUnlocks} mode. */
    void releaseHeldUnlocks() {
        holdUnlocks = false;
        Runnable unlock;
        while ((unlock = heldUnlocks.poll()) != null) {
            unlock.run();
        }
    }

    /** Fails every open keep-alive stream with {@code status}. */
    void breakStreams(Status status) {
        for (StreamObserver<LeaseKeepAliveResponse> stream : openStreams) {
            openStreams.remove(stream);
            stream.onError(status.asRuntimeException());
        }
    }

    /** Ends every parked Lock call with {@code status}, as a member that stops serving does. */
    void failParkedLocks(Status status) {
        StreamObserver<LockResponse> parked;
        while ((parked = parkedLocks.poll()) != null) {
            parked.onError(status.asRuntimeException());
        }
    }

    /** Keep-alive streams open and not cancelled by the client. */
    int openKeepAliveStreams() {
        return (int) openStreams.stream()
                .filter(r -> !((ServerCallStreamObserver<LeaseKeepAliveResponse>) r).isCancelled()).count();
    }

    /** How many Lock calls are parked and not cancelled. */
    int parkedLockCount() {
        return (int) parkedLocks.stream()
                .filter(call -> !((ServerCallStreamObserver<LockResponse>) call).isCancelled()).count();
    }

    @Override
    public void leaseGrant(LeaseGrantRequest request, StreamObserver<LeaseGrantResponse> responses) {
        grants.add(request);
        Status failure = grantFailure;
        if (failure != null) {
            responses.onError(failure.asRuntimeException());
            return;
        }
        if (shedGrants.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
            Metadata trailers = new Metadata();
            if (shedHintMs >= 0) {
                trailers.put(StatusErrors.RETRY_AFTER_MS, Long.toString(shedHintMs));
            }
            responses.onError(Status.RESOURCE_EXHAUSTED.withDescription("this member is behind").asRuntimeException(trailers));
            return;
        }
        Runnable answer = () -> {
            responses.onNext(granted(request));
            responses.onCompleted();
        };
        if (holdGrants) {
            heldGrants.add(answer);
        } else {
            answer.run();
        }
    }

    /** Answers the grants held so far, oldest first. */
    void releaseHeldGrants() {
        Runnable answer;
        while ((answer = heldGrants.poll()) != null) {
            answer.run();
        }
    }

    private LeaseGrantResponse granted(LeaseGrantRequest request) {
        ttlMsByLease.put(request.getId(), request.getTtlMs());
        return LeaseGrantResponse.newBuilder().setId(request.getId()).setTtl(request.getTtl()).setTtlMs(request.getTtlMs()).build();
    }

    /** Grants each lease of the batch, except one asking for a TTL of exactly 1,234 ms, refused as INVALID_ARGUMENT. */
    @Override
    public void leaseGrantBatch(LeaseGrantBatchRequest request, StreamObserver<LeaseGrantBatchResponse> responses) {
        grantBatches.incrementAndGet();
        if (batchUnimplemented) {
            responses.onError(Status.UNIMPLEMENTED.withDescription("Method not found: LeaseGrantBatch").asRuntimeException());
            return;
        }
        LeaseGrantBatchResponse.Builder answer = LeaseGrantBatchResponse.newBuilder();
        for (LeaseGrantRequest grant : request.getGrantsList()) {
            grants.add(grant);
            answer.addResults(grant.getTtlMs() == 1_234
                    ? LeaseGrantResult.newBuilder().setErrorCode("INVALID_ARGUMENT").setErrorMessage("ttl 1234 ms is refused here").build()
                    : LeaseGrantResult.newBuilder().setGranted(granted(grant)).build());
        }
        responses.onNext(answer.build());
        responses.onCompleted();
    }

    @Override
    public StreamObserver<LeaseKeepAliveRequest> leaseKeepAlive(StreamObserver<LeaseKeepAliveResponse> responses) {
        streamsOpened.incrementAndGet();
        openStreams.add(responses);
        return new StreamObserver<>() {
            @Override
            public void onNext(LeaseKeepAliveRequest request) {
                LeaseKeepAliveResponse renewed;
                LeaseKeepAliveResponse expired;
                if (request.getIdsCount() == 0 && unanswered.contains(request.getId())) {
                    keepAlivesReceived.add(request);
                    return;
                }
                if (request.getIdsCount() == 0) {
                    keepAlivesReceived.add(request);
                    long ttlMs = ttlMsByLease.getOrDefault(request.getId(), 0L);
                    renewed = LeaseKeepAliveResponse.newBuilder()
                            .setId(request.getId()).setTtl((ttlMs + 999) / 1000).setTtlMs(ttlMs).build();
                    expired = LeaseKeepAliveResponse.newBuilder().setId(request.getId()).build();
                } else {
                    // Several leases in one request (the client batches): recorded one by one.
                    batchedKeepAlives.incrementAndGet();
                    LeaseKeepAliveResponse.Builder all = LeaseKeepAliveResponse.newBuilder();
                    LeaseKeepAliveResponse.Builder none = LeaseKeepAliveResponse.newBuilder();
                    List<Long> ids = new ArrayList<>();
                    if (request.getId() != 0) {
                        ids.add(request.getId());
                    }
                    ids.addAll(request.getIdsList());
                    for (long id : ids) {
                        keepAlivesReceived.add(LeaseKeepAliveRequest.newBuilder().setId(id).build());
                        all.addRenewedIds(id).addRenewedTtlMs(ttlMsByLease.getOrDefault(id, 0L));
                        none.addRenewedIds(id).addRenewedTtlMs(0);
                    }
                    renewed = all.build();
                    expired = none.build();
                }
                switch (keepAlives) {
                    case ACK -> responses.onNext(renewed);
                    case SILENT -> { }
                    case HOLD -> heldAcks.add(() -> answerIfStillOpen(responses, renewed));
                    case EXPIRED -> responses.onNext(expired);
                    case BREAK -> {
                        openStreams.remove(responses);
                        responses.onError(Status.UNAVAILABLE.withDescription("member " + name + " is not ready").asRuntimeException());
                    }
                }
            }

            @Override
            public void onError(Throwable t) {
                openStreams.remove(responses);
            }

            @Override
            public void onCompleted() {
                openStreams.remove(responses);
                responses.onCompleted();
            }
        };
    }

    /** A held answer may find the client gone, as it would on a real server. */
    private static void answerIfStillOpen(StreamObserver<LeaseKeepAliveResponse> responses, LeaseKeepAliveResponse ack) {
        if (!((ServerCallStreamObserver<LeaseKeepAliveResponse>) responses).isCancelled()) {
            responses.onNext(ack);
        }
    }

    @Override
    public void leaseRevoke(LeaseRevokeRequest request, StreamObserver<LeaseRevokeResponse> responses) {
        revokes.add(request.getId());
        if (ttlMsByLease.remove(request.getId()) == null) {
            responses.onError(Status.NOT_FOUND.withDescription("lease " + request.getId() + " not found").asRuntimeException());
            return;
        }
        Status lost = revokeAnswerLost;
        if (lost != null) {
            responses.onError(lost.asRuntimeException());
            return;
        }
        responses.onNext(LeaseRevokeResponse.getDefaultInstance());
        responses.onCompleted();
    }

    @Override
    public void lock(LockRequest request, StreamObserver<LockResponse> responses) {
        locks.add(request);
        LockResponse answer;
        try {
            answer = lockAnswer.apply(request);
        } catch (RuntimeException refusal) {
            responses.onError(refusal);
            return;
        }
        if (answer == null) {
            ((ServerCallStreamObserver<LockResponse>) responses)
                    .setOnCancelHandler(() -> parkedLockCancelled.complete(null));
            parkedLocks.add(responses);
            return;
        }
        responses.onNext(answer);
        responses.onCompleted();
    }

    @Override
    public void tryLock(TryLockRequest request, StreamObserver<TryLockResponse> responses) {
        responses.onNext(tryLockAnswer.apply(request));
        responses.onCompleted();
    }

    @Override
    public void lockCancel(LockCancelRequest request, StreamObserver<LockCancelResponse> responses) {
        cancels.add(request);
        responses.onNext(cancelAnswer.apply(request));
        responses.onCompleted();
    }

    @Override
    public void unlock(UnlockRequest request, StreamObserver<UnlockResponse> responses) {
        unlocks.add(request);
        if (holdUnlocks) {
            heldUnlocks.add(() -> {
                responses.onNext(UnlockResponse.getDefaultInstance());
                responses.onCompleted();
            });
            return;
        }
        Status failure = unlockFailure;
        if (failure != null) {
            responses.onError(failure.asRuntimeException());
            return;
        }
        responses.onNext(UnlockResponse.getDefaultInstance());
        responses.onCompleted();
    }

    @Override
    public void status(StatusRequest request, StreamObserver<StatusResponse> responses) {
        statusCalls.incrementAndGet();
        Status failure = statusFailure;
        if (failure != null) {
            responses.onError(failure.asRuntimeException());
            return;
        }
        responses.onNext(StatusResponse.newBuilder().setMemberName(name).setLeader(name).build());
        responses.onCompleted();
    }

    /**
     * Whether this member speaks the Session stream (as members of this release do); when not,
     * it answers it UNIMPLEMENTED, as an older release would. Each call in a session goes to the
     * unary handler above, so the scripts apply to both.
     */
    volatile boolean sessions = true;
    /** Session streams opened by clients. */
    final AtomicInteger sessionsOpened = new AtomicInteger();
    /** Session messages received, and calls they carried. */
    final AtomicInteger sessionMessages = new AtomicInteger();
    final AtomicInteger sessionCalls = new AtomicInteger();
    final BlockingQueue<Long> abandons = new LinkedBlockingQueue<>();
    /** Kinds of call this member answers UNIMPLEMENTED in a session, as an older release answers kinds it does not carry. */
    final java.util.Set<io.tenure.proto.v1.SessionCall.CallCase> notCarried = java.util.concurrent.ConcurrentHashMap.newKeySet();

    @Override
    public StreamObserver<io.tenure.proto.v1.SessionRequest> session(StreamObserver<io.tenure.proto.v1.SessionResponse> responses) {
        if (!sessions) {
            return super.session(responses);
        }
        sessionsOpened.incrementAndGet();
        ServerCallStreamObserver<io.tenure.proto.v1.SessionResponse> stream = (ServerCallStreamObserver<io.tenure.proto.v1.SessionResponse>) responses;
        Map<Long, InSession<?>> open = new java.util.concurrent.ConcurrentHashMap<>();
        stream.setOnCancelHandler(() -> open.values().forEach(InSession::cancelled));
        return new StreamObserver<>() {
            @Override
            public void onNext(io.tenure.proto.v1.SessionRequest request) {
                sessionMessages.incrementAndGet();
                for (io.tenure.proto.v1.SessionCall call : request.getCallsList()) {
                    long id = call.getId();
                    if (notCarried.contains(call.getCallCase())) {
                        unimplemented(stream, id);
                        sessionCalls.incrementAndGet();
                        continue;
                    }
                    switch (call.getCallCase()) {
                        case ABANDON -> {
                            abandons.add(call.getAbandon());
                            InSession<?> abandoned = open.remove(call.getAbandon());
                            if (abandoned != null) {
                                abandoned.cancelled();
                            }
                        }
                        case LOCK -> lock(call.getLock(), new InSession<LockResponse>(stream, open, id, (a, r) -> a.setLock(r)));
                        case TRY_LOCK -> tryLock(call.getTryLock(), new InSession<TryLockResponse>(stream, open, id, (a, r) -> a.setTryLock(r)));
                        case UNLOCK -> unlock(call.getUnlock(), new InSession<UnlockResponse>(stream, open, id, (a, r) -> a.setUnlock(r)));
                        case LOCK_CANCEL -> lockCancel(call.getLockCancel(),
                                new InSession<LockCancelResponse>(stream, open, id, (a, r) -> a.setLockCancel(r)));
                        case LEASE_GRANT -> leaseGrant(call.getLeaseGrant(),
                                new InSession<LeaseGrantResponse>(stream, open, id, (a, r) -> a.setLeaseGrant(r)));
                        case LEASE_REVOKE -> leaseRevoke(call.getLeaseRevoke(),
                                new InSession<LeaseRevokeResponse>(stream, open, id, (a, r) -> a.setLeaseRevoke(r)));
                        // As a member answers a kind of call it does not carry.
                        default -> unimplemented(stream, id);
                    }
                    if (call.getCallCase() != io.tenure.proto.v1.SessionCall.CallCase.ABANDON) {
                        sessionCalls.incrementAndGet();
                    }
                }
            }

            @Override
            public void onError(Throwable t) {
                open.values().forEach(InSession::cancelled);
            }

            @Override
            public void onCompleted() {
                stream.onCompleted();
            }
        };
    }

    private static void unimplemented(ServerCallStreamObserver<io.tenure.proto.v1.SessionResponse> stream, long id) {
        synchronized (stream) {
            stream.onNext(io.tenure.proto.v1.SessionResponse.newBuilder().addAnswers(io.tenure.proto.v1.SessionAnswer.newBuilder().setId(id)
                    .setError(io.tenure.proto.v1.SessionError.newBuilder().setCode(Status.Code.UNIMPLEMENTED.value())
                            .setMessage("call: not carried in a session"))).build());
        }
    }

    /** One call of a session, seen by a unary handler as its own call. */
    private static final class InSession<R> extends ServerCallStreamObserver<R> {
        private final ServerCallStreamObserver<io.tenure.proto.v1.SessionResponse> stream;
        private final Map<Long, InSession<?>> open;
        private final long id;
        private final java.util.function.BiConsumer<io.tenure.proto.v1.SessionAnswer.Builder, R> answer;
        private volatile boolean cancelled;
        private volatile Runnable onCancel;

        InSession(ServerCallStreamObserver<io.tenure.proto.v1.SessionResponse> stream, Map<Long, InSession<?>> open, long id,
                  java.util.function.BiConsumer<io.tenure.proto.v1.SessionAnswer.Builder, R> answer) {
            this.stream = stream;
            this.open = open;
            this.id = id;
            this.answer = answer;
            open.put(id, this);
        }

        void cancelled() {
            cancelled = true;
            Runnable handler = onCancel;
            if (handler != null) {
                handler.run();
            }
        }

        private void send(io.tenure.proto.v1.SessionAnswer a) {
            if (open.remove(id) == null) {
                return;
            }
            synchronized (stream) {
                if (!stream.isCancelled()) {
                    stream.onNext(io.tenure.proto.v1.SessionResponse.newBuilder().addAnswers(a).build());
                }
            }
        }

        @Override
        public void onNext(R value) {
            io.tenure.proto.v1.SessionAnswer.Builder a = io.tenure.proto.v1.SessionAnswer.newBuilder().setId(id);
            answer.accept(a, value);
            send(a.build());
        }

        @Override
        public void onError(Throwable t) {
            Status status = Status.fromThrowable(t);
            io.grpc.Metadata trailers = Status.trailersFromThrowable(t);
            String hint = trailers == null ? null : trailers.get(io.grpc.Metadata.Key.of("tenure-retry-after-ms", io.grpc.Metadata.ASCII_STRING_MARSHALLER));
            send(io.tenure.proto.v1.SessionAnswer.newBuilder().setId(id).setError(io.tenure.proto.v1.SessionError.newBuilder()
                    .setCode(status.getCode().value()).setMessage(String.valueOf(status.getDescription()))
                    .setRetryAfterMs(hint == null ? 0 : Long.parseLong(hint))).build());
        }

        @Override
        public void onCompleted() {
        }

        @Override
        public boolean isCancelled() {
            return cancelled || stream.isCancelled();
        }

        @Override
        public void setOnCancelHandler(Runnable onCancelHandler) {
            this.onCancel = onCancelHandler;
        }

        @Override
        public void setCompression(String compression) {
        }

        @Override
        public boolean isReady() {
            return true;
        }

        @Override
        public void setOnReadyHandler(Runnable onReadyHandler) {
        }

        @Override
        public void request(int count) {
        }

        @Override
        public void setMessageCompression(boolean enable) {
        }

        @Override
        public void disableAutoInboundFlowControl() {
        }
    }
}
