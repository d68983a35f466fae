package io.tenure.server.grpc;

import com.google.common.util.concurrent.MoreExecutors;
import com.google.protobuf.ByteString;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallExecutorSupplier;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.tenure.core.Limits;
import io.tenure.core.kernel.LeaseView;
import io.tenure.core.lock.LockView;
import io.tenure.core.watch.KeyValue;
import io.tenure.core.watch.WatchEvent;
import io.tenure.proto.v1.DescribeRequest;
import io.tenure.proto.v1.DescribeResponse;
import io.tenure.proto.v1.Event;
import io.tenure.proto.v1.LeaseGrantBatchRequest;
import io.tenure.proto.v1.LeaseGrantBatchResponse;
import io.tenure.proto.v1.LeaseGrantRequest;
import io.tenure.proto.v1.LeaseGrantResult;
import io.tenure.proto.v1.LeaseGrantResponse;
import io.tenure.proto.v1.LeaseKeepAliveRequest;
import io.tenure.proto.v1.LeaseKeepAliveResponse;
import io.tenure.proto.v1.LeaseListRequest;
import io.tenure.proto.v1.LeaseListResponse;
import io.tenure.proto.v1.LeaseRevokeRequest;
import io.tenure.proto.v1.LeaseRevokeResponse;
import io.tenure.proto.v1.LeaseTimeToLiveRequest;
import io.tenure.proto.v1.LeaseTimeToLiveResponse;
import io.tenure.proto.v1.ListLocksRequest;
import io.tenure.proto.v1.ListLocksResponse;
import io.tenure.proto.v1.LockCancelRequest;
import io.tenure.proto.v1.LockCancelResponse;
import io.tenure.proto.v1.LockRequest;
import io.tenure.proto.v1.LockResponse;
import io.tenure.proto.v1.LockServiceGrpc;
import io.tenure.proto.v1.LockState;
import io.tenure.proto.v1.LockHolder;
import io.tenure.proto.v1.LockMode;
import io.tenure.proto.v1.DowngradeRequest;
import io.tenure.proto.v1.DowngradeResponse;
import io.tenure.proto.v1.LeaseSummary;
import io.tenure.proto.v1.ResponseHeader;
import io.tenure.proto.v1.SessionRequest;
import io.tenure.proto.v1.SessionResponse;
import io.tenure.proto.v1.StatusRequest;
import io.tenure.proto.v1.StatusResponse;
import io.tenure.proto.v1.TryLockRequest;
import io.tenure.proto.v1.TryLockResponse;
import io.tenure.proto.v1.UnlockRequest;
import io.tenure.proto.v1.UnlockResponse;
import io.tenure.proto.v1.Waiter;
import io.tenure.proto.v1.WatchRequest;
import io.tenure.proto.v1.WatchResponse;
import io.tenure.server.Acquires;
import io.tenure.server.Member;
import io.tenure.server.RequestRejected;
import io.tenure.server.lease.LeaseKeeper;
import io.tenure.server.Overloaded;
import io.tenure.server.lock.Locks;
import io.tenure.server.watch.WatchHub;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The gRPC front end: translates {@code tenure.v1} messages to calls on the member's lock, lease
 * and watch services and back. No decisions are made here; failures map to statuses in
 * {@link Statuses}.
 */
public final class GrpcLockService extends LockServiceGrpc.LockServiceImplBase {
    /** Its calls that never wait, for {@link CallThreads}: they check their input, propose a command and return. */
    public static final Set<String> NON_BLOCKING = Set.of(
            LockServiceGrpc.getLockMethod().getFullMethodName(),
            LockServiceGrpc.getTryLockMethod().getFullMethodName(),
            LockServiceGrpc.getUnlockMethod().getFullMethodName(),
            LockServiceGrpc.getLockCancelMethod().getFullMethodName(),
            LockServiceGrpc.getDowngradeMethod().getFullMethodName(),
            LockServiceGrpc.getLeaseGrantMethod().getFullMethodName(),
            LockServiceGrpc.getLeaseGrantBatchMethod().getFullMethodName(),
            LockServiceGrpc.getLeaseRevokeMethod().getFullMethodName(),
            LockServiceGrpc.getLeaseKeepAliveMethod().getFullMethodName(),
            LockServiceGrpc.getSessionMethod().getFullMethodName());

    private final Member member;

    public GrpcLockService(Member member) {
        this.member = member;
    }

    private ResponseHeader header() {
        return member.header();
    }

    /** Answers a unary call with the response made from {@code result}, or with the status of its failure. */
    static <T, R> void answer(CompletableFuture<T> result, StreamObserver<R> observer, Function<T, R> response) {
        result.whenComplete((value, error) -> {
            if (error != null) {
                observer.onError(Statuses.of(error));
                return;
            }
            observer.onNext(response.apply(value));
            observer.onCompleted();
        });
    }

    @Override
    public void lock(LockRequest request, StreamObserver<LockResponse> observer) {
        ServerCallStreamObserver<LockResponse> call = (ServerCallStreamObserver<LockResponse>) observer;
        String badMode = badMode(request.getModeValue());
        if (badMode != null) {
            observer.onError(Statuses.invalid(badMode));
            return;
        }
        Acquires.Wait<Locks.Outcome> wait = member.locks().lock(GrpcAuthentication.principal(), request.getName(), request.getLeaseId(), request.getMetadata().toByteArray(),
                request.getTimeoutMs(), request.getRequestId(), request.getEnqueue(), request.getMode() == LockMode.LOCK_MODE_READ);
        call.setOnCancelHandler(wait::abandon);
        wait.outcome().whenComplete((outcome, error) -> {
            if (call.isCancelled()) {
                if (outcome != null && outcome.acquired()) {
                    // Never released here: the client may hold this grant through another call.
                    member.locks().leftToLease(outcome.key(), request.getLeaseId(), outcome.fencingToken());
                }
                return;
            }
            if (error != null) {
                observer.onError(Statuses.of(error));
                return;
            }
            observer.onNext(lockResponse(outcome));
            observer.onCompleted();
        });
    }

    @Override
    public void tryLock(TryLockRequest request, StreamObserver<TryLockResponse> observer) {
        String badMode = badMode(request.getModeValue());
        if (badMode != null) {
            observer.onError(Statuses.invalid(badMode));
            return;
        }
        answer(member.locks().tryLock(GrpcAuthentication.principal(), request.getName(), request.getLeaseId(), request.getMetadata().toByteArray(),
                request.getRequestId(), request.getMode() == LockMode.LOCK_MODE_READ), observer,
                this::tryLockResponse);
    }

    /** Null for a lock mode this member knows, else why the request's {@code mode} is refused. */
    static String badMode(int mode) {
        return mode == LockMode.LOCK_MODE_WRITE_VALUE || mode == LockMode.LOCK_MODE_READ_VALUE ? null
                : "mode: " + mode + " is not a lock mode (LOCK_MODE_WRITE = 0, LOCK_MODE_READ = 1)";
    }

    @Override
    public void downgrade(DowngradeRequest request, StreamObserver<DowngradeResponse> observer) {
        answer(member.locks().downgrade(GrpcAuthentication.principal(), request.getName(), request.getLeaseId(), request.getFencingToken()), observer,
                this::downgradeResponse);
    }

    DowngradeResponse downgradeResponse(Locks.Downgrade done) {
        return DowngradeResponse.newBuilder().setHeader(header()).setKey(done.key()).setFencingToken(done.fencingToken())
                .setReadersGranted(done.readersGranted()).build();
    }

    @Override
    public void unlock(UnlockRequest request, StreamObserver<UnlockResponse> observer) {
        answer(member.locks().unlock(GrpcAuthentication.principal(), request.getKey(), request.getLeaseId(), request.getFencingToken()), observer,
                this::unlockResponse);
    }

    @Override
    public void lockCancel(LockCancelRequest request, StreamObserver<LockCancelResponse> observer) {
        answer(member.locks().cancel(GrpcAuthentication.principal(), request.getName(), request.getLeaseId(), request.getRequestId()), observer,
                this::lockCancelResponse);
    }

    @Override
    public StreamObserver<SessionRequest> session(StreamObserver<SessionResponse> observer) {
        return new GrpcSession(member, this, (ServerCallStreamObserver<SessionResponse>) observer);
    }

    LockResponse lockResponse(Locks.Outcome outcome) {
        return LockResponse.newBuilder()
                .setHeader(header())
                .setKey(outcome.key())
                .setFencingToken(outcome.fencingToken())
                .setAcquired(outcome.acquired())
                .setHolder(outcome.holder())
                .setWaiters(outcome.waiters())
                .build();
    }

    TryLockResponse tryLockResponse(Locks.Outcome outcome) {
        return TryLockResponse.newBuilder()
                .setHeader(header())
                .setKey(outcome.key())
                .setFencingToken(outcome.fencingToken())
                .setAcquired(outcome.acquired())
                .setHolder(outcome.holder())
                .build();
    }

    UnlockResponse unlockResponse(long nextFencingToken) {
        return UnlockResponse.newBuilder().setHeader(header()).setNextFencingToken(nextFencingToken).build();
    }

    LockCancelResponse lockCancelResponse(Locks.Outcome outcome) {
        return LockCancelResponse.newBuilder()
                .setHeader(header())
                .setKey(outcome.key())
                .setAcquired(outcome.acquired())
                .setFencingToken(outcome.fencingToken())
                .build();
    }

    @Override
    public void leaseGrant(LeaseGrantRequest request, StreamObserver<LeaseGrantResponse> observer) {
        LeaseKeeper.GrantRequest grant;
        try {
            grant = grantRequest(request);
        } catch (RequestRejected e) {
            observer.onError(Statuses.of(e));
            return;
        }
        answer(member.leases().grant(GrpcAuthentication.principal(), grant.requestedId(), grant.ttlMillis(), grant.clientId()), observer, this::leaseGrantResponse);
    }

    @Override
    public void leaseGrantBatch(LeaseGrantBatchRequest request, StreamObserver<LeaseGrantBatchResponse> observer) {
        if (request.getGrantsCount() > Limits.MAX_BATCH) {
            observer.onError(Statuses.invalid("grants: at most " + Limits.MAX_BATCH + " per batch, got " + request.getGrantsCount()));
            return;
        }
        // Each grant malformed on its own is refused on its own; the rest go to the service together.
        List<Object> parsed = new ArrayList<>(request.getGrantsCount());
        List<LeaseKeeper.GrantRequest> valid = new ArrayList<>(request.getGrantsCount());
        for (LeaseGrantRequest grant : request.getGrantsList()) {
            try {
                LeaseKeeper.GrantRequest checked = grantRequest(grant);
                valid.add(checked);
                parsed.add(checked);
            } catch (RequestRejected e) {
                parsed.add(e);
            }
        }
        List<CompletableFuture<LeaseKeeper.Granted>> outcomes;
        try {
            outcomes = member.leases().grantAll(GrpcAuthentication.principal(), valid);
        } catch (Overloaded shed) {
            observer.onError(Statuses.of(shed)); // the whole batch: the client retries it after the hint
            return;
        }
        CompletableFuture.allOf(outcomes.toArray(CompletableFuture[]::new)).whenComplete((ignored, error) -> {
            LeaseGrantBatchResponse.Builder response = LeaseGrantBatchResponse.newBuilder().setHeader(header());
            int next = 0;
            for (Object item : parsed) {
                if (item instanceof RequestRejected refused) {
                    response.addResults(refusal(refused));
                    continue;
                }
                CompletableFuture<LeaseKeeper.Granted> outcome = outcomes.get(next++);
                response.addResults(outcome.handle((granted, failure) -> failure == null
                        ? LeaseGrantResult.newBuilder().setGranted(granted(granted)).build()
                        : refusal(failure)).join());
            }
            observer.onNext(response.build());
            observer.onCompleted();
        });
    }

    LeaseGrantResponse leaseGrantResponse(LeaseKeeper.Granted granted) {
        return granted(granted).setHeader(header()).build();
    }

    /** A LeaseGrant as the service takes it: TTL in seconds or milliseconds, checked. */
    static LeaseKeeper.GrantRequest grantRequest(LeaseGrantRequest request) {
        if (request.getTtlMs() < 0 || request.getTtl() < 0) {
            throw RequestRejected.invalid("ttl", "ttl must be positive, got ttl=" + request.getTtl() + " ttl_ms=" + request.getTtlMs());
        }
        if (request.getTtlMs() == 0 && request.getTtl() == 0) {
            throw RequestRejected.invalid("ttl", "ttl (seconds) or ttl_ms must be set to a positive value");
        }
        if (request.getTtlMs() == 0 && request.getTtl() > Long.MAX_VALUE / 1000) {
            throw RequestRejected.invalid("ttl", "ttl is too large: " + request.getTtl() + " s");
        }
        long ttlMillis = request.getTtlMs() > 0 ? request.getTtlMs() : request.getTtl() * 1000;
        return new LeaseKeeper.GrantRequest(request.getId(), ttlMillis, request.getClientId());
    }

    private static LeaseGrantResponse.Builder granted(LeaseKeeper.Granted granted) {
        return LeaseGrantResponse.newBuilder()
                .setId(granted.leaseId())
                .setTtl(seconds(granted.ttlMillis()))
                .setTtlMs(granted.ttlMillis());
    }

    /** One grant's refusal in a batch: the status a LeaseGrant of it alone would have failed with. */
    private static LeaseGrantResult refusal(Throwable failure) {
        io.grpc.Status status = Statuses.of(failure).getStatus();
        return LeaseGrantResult.newBuilder().setErrorCode(status.getCode().name())
                .setErrorMessage(status.getDescription() == null ? "" : status.getDescription()).build();
    }

    @Override
    public void leaseRevoke(LeaseRevokeRequest request, StreamObserver<LeaseRevokeResponse> observer) {
        answer(member.leases().revoke(GrpcAuthentication.principal(), request.getId()), observer, ignored -> leaseRevokeResponse());
    }

    LeaseRevokeResponse leaseRevokeResponse() {
        return LeaseRevokeResponse.newBuilder().setHeader(header()).build();
    }

    @Override
    public StreamObserver<LeaseKeepAliveRequest> leaseKeepAlive(StreamObserver<LeaseKeepAliveResponse> observer) {
        ServerCallStreamObserver<LeaseKeepAliveResponse> call = (ServerCallStreamObserver<LeaseKeepAliveResponse>) observer;
        return new StreamObserver<>() {
            /** The stream failed or was completed: acknowledgements still pending are dropped. */
            private boolean ended;

            @Override
            public void onNext(LeaseKeepAliveRequest request) {
                if (request.getIdsCount() == 0) {
                    long id = request.getId();
                    send(member.leases().keepAlive(GrpcAuthentication.principal(), id), ttlMillis -> LeaseKeepAliveResponse.newBuilder()
                            .setHeader(header())
                            .setId(id)
                            .setTtl(seconds(ttlMillis))
                            .setTtlMs(ttlMillis)
                            .build());
                    return;
                }
                // Several leases in one request: one answer listing each with its TTL.
                int count = request.getIdsCount() + (request.getId() != 0 ? 1 : 0);
                long[] ids = new long[count];
                int at = 0;
                if (request.getId() != 0) {
                    ids[at++] = request.getId();
                }
                for (int i = 0; i < request.getIdsCount(); i++) {
                    ids[at++] = request.getIds(i);
                }
                send(member.leases().keepAliveAll(GrpcAuthentication.principal(), ids), ttls -> {
                    LeaseKeepAliveResponse.Builder answer = LeaseKeepAliveResponse.newBuilder().setHeader(header());
                    for (int i = 0; i < ids.length; i++) {
                        answer.addRenewedIds(ids[i]).addRenewedTtlMs(ttls[i]);
                    }
                    return answer.build();
                });
            }

            /** Sends the answer to one request once renewed; a failure ends the stream, and nothing is sent after the end. */
            private <T> void send(CompletableFuture<T> renewal, Function<T, LeaseKeepAliveResponse> answer) {
                renewal.whenComplete((value, error) -> {
                    synchronized (call) {
                        if (ended || call.isCancelled()) {
                            return;
                        }
                        if (error != null) {
                            ended = true;
                            observer.onError(Statuses.of(error));
                            return;
                        }
                        observer.onNext(answer.apply(value));
                    }
                });
            }

            @Override
            public void onError(Throwable t) {
                // The client went away; pending acknowledgements are dropped above.
            }

            @Override
            public void onCompleted() {
                synchronized (call) {
                    if (!ended && !call.isCancelled()) {
                        ended = true;
                        observer.onCompleted();
                    }
                }
            }
        };
    }

    @Override
    public void leaseTimeToLive(LeaseTimeToLiveRequest request, StreamObserver<LeaseTimeToLiveResponse> observer) {
        answer(member.leases().lookup(GrpcAuthentication.principal(), request.getId()), observer, ttl -> {
            LeaseTimeToLiveResponse.Builder response = LeaseTimeToLiveResponse.newBuilder().setHeader(header()).setId(request.getId());
            if (ttl == null) {
                response.setTtl(-1).setTtlMs(-1);
            } else {
                LeaseView lease = ttl.lease();
                response.setTtl(TimeUnit.MILLISECONDS.toSeconds(ttl.remainingMillis()))
                        .setTtlMs(ttl.remainingMillis())
                        .setGrantedTtl(seconds(lease.ttlMillis()))
                        .setGrantedTtlMs(lease.ttlMillis())
                        .setClientId(lease.clientId());
                if (request.getKeys()) {
                    response.addAllKeys(lease.held()).addAllWaiting(lease.waiting());
                }
            }
            return response.build();
        });
    }

    @Override
    public StreamObserver<WatchRequest> watch(StreamObserver<WatchResponse> observer) {
        ServerCallStreamObserver<WatchResponse> call = (ServerCallStreamObserver<WatchResponse>) observer;
        Map<Long, WatchHub.Watcher> watchers = new ConcurrentHashMap<>();
        Runnable closeAll = () -> {
            watchers.values().forEach(WatchHub.Watcher::close);
            watchers.clear();
        };
        call.setOnCancelHandler(closeAll);
        call.setOnReadyHandler(() -> watchers.values().forEach(WatchHub.Watcher::resume));
        return new StreamObserver<>() {
            @Override
            public void onNext(WatchRequest request) {
                long watchId = request.getWatchId();
                if (request.getCancel()) {
                    WatchHub.Watcher w = watchers.remove(watchId);
                    if (w != null) {
                        w.close();
                    }
                    send(WatchResponse.newBuilder().setHeader(header()).setWatchId(watchId).setCanceled(true)
                            .setCancelReason("cancelled by the client").build());
                    return;
                }
                boolean byPattern = !request.getPattern().isEmpty();
                String problem;
                if (byPattern && (!request.getKey().isEmpty() || request.getPrefix())) {
                    problem = "pattern: a watch names a key, a prefix or a pattern, not several (leave key and prefix unset with a pattern)";
                } else if (byPattern) {
                    problem = io.tenure.core.watch.KeyPattern.check("pattern", request.getPattern());
                } else if (request.getKey().isEmpty() && !request.getPrefix()) {
                    problem = "key must not be empty (set prefix to watch every key, or give a pattern)";
                } else {
                    problem = null;
                }
                if (problem == null) {
                    problem = request.getStartRevision() < 0 ? "start_revision must not be negative, got " + request.getStartRevision()
                            : watchers.containsKey(watchId) ? "watch_id " + watchId + " is already in use on this stream"
                            : unknownKind(request.getKindsList());
                }
                if (problem != null) {
                    send(WatchResponse.newBuilder().setHeader(header()).setWatchId(watchId).setCanceled(true)
                            .setCancelReason("INVALID_ARGUMENT: " + problem).build());
                    return;
                }
                try {
                    member.admission().admit("watch");
                } catch (Overloaded shed) {
                    // Ends this watch only; the client reopens it after its backoff.
                    send(WatchResponse.newBuilder().setHeader(header()).setWatchId(watchId).setCanceled(true)
                            .setCancelReason("RESOURCE_EXHAUSTED: " + shed.getMessage()).build());
                    return;
                }
                boolean prevKv = request.getPrevKv();
                java.util.Set<String> kinds = java.util.Set.copyOf(request.getKindsList());
                WatchHub.Sink sink = new WatchHub.Sink() {
                    @Override
                    public void send(List<WatchEvent> events) {
                        WatchResponse.Builder response = WatchResponse.newBuilder().setHeader(header()).setWatchId(watchId);
                        for (WatchEvent e : events) {
                            if (kinds.isEmpty() || kinds.contains(e.kind())) {
                                response.addEvents(toProto(e, prevKv));
                            }
                        }
                        if (response.getEventsCount() > 0) {
                            GrpcLockService.send(call, response.build());
                        }
                    }

                    @Override
                    public boolean ready() {
                        return call.isReady();
                    }

                    @Override
                    public void cancelled(String reason) {
                        watchers.remove(watchId);
                        GrpcLockService.send(call, WatchResponse.newBuilder().setHeader(header()).setWatchId(watchId)
                                .setCanceled(true).setCancelReason(reason).build());
                    }
                };
                // Created is sent before any event can be: the hub delivers on another thread only after open returns.
                synchronized (call) {
                    WatchHub.Opened opened;
                    try {
                        opened = byPattern
                                ? member.watches().open(GrpcAuthentication.principal(), kinds,
                                        io.tenure.core.watch.KeyPattern.parse("pattern", request.getPattern()), request.getStartRevision(), sink)
                                : member.watches().open(GrpcAuthentication.principal(), kinds, request.getKey(), request.getPrefix(),
                                        request.getStartRevision(), sink);
                    } catch (io.tenure.server.PermissionDenied denied) {
                        send(WatchResponse.newBuilder().setHeader(header()).setWatchId(watchId).setCanceled(true)
                                .setCancelReason("PERMISSION_DENIED: " + denied.getMessage()).build());
                        return;
                    }
                    if (opened.watcher() == null) {
                        send(WatchResponse.newBuilder().setHeader(header()).setWatchId(watchId).setCreated(true)
                                .setCanceled(true).setCompactRevision(opened.compactRevision())
                                .setCancelReason("start_revision " + request.getStartRevision()
                                        + " is older than the oldest retained revision " + opened.compactRevision())
                                .build());
                        return;
                    }
                    watchers.put(watchId, opened.watcher());
                    send(WatchResponse.newBuilder().setHeader(header()).setWatchId(watchId).setCreated(true).build());
                }
            }

            @Override
            public void onError(Throwable t) {
                closeAll.run();
            }

            @Override
            public void onCompleted() {
                closeAll.run();
                synchronized (call) {
                    if (!call.isCancelled()) {
                        observer.onCompleted();
                    }
                }
            }

            private void send(WatchResponse response) {
                GrpcLockService.send(call, response);
            }
        };
    }

    private static void send(ServerCallStreamObserver<WatchResponse> call, WatchResponse response) {
        synchronized (call) {
            if (!call.isCancelled()) {
                call.onNext(response);
            }
        }
    }

    /** Null when every kind named is one whose events a watch may ask for; else the refusal, naming the field. */
    private String unknownKind(List<String> kinds) {
        java.util.Set<String> known = member.stateMachine().read(io.tenure.core.TenureState::watchedKinds);
        for (String kind : kinds) {
            if (!known.contains(kind)) {
                return "kinds: '" + kind + "' is not a kind of resource; one of " + new java.util.TreeSet<>(known);
            }
        }
        return null;
    }

    static Event toProto(WatchEvent e, boolean withPrev) {
        Event.Builder event = Event.newBuilder()
                .setType(e.type() == WatchEvent.Type.PUT ? Event.EventType.PUT : Event.EventType.DELETE)
                .setKv(toProto(e.kv()))
                .setKind(e.kind());
        if (withPrev && e.prevKv() != null) {
            event.setPrevKv(toProto(e.prevKv()));
        }
        return event.build();
    }

    /** value = the holder's client id, then a newline and the metadata when there is any. */
    private static io.tenure.proto.v1.KeyValue toProto(KeyValue kv) {
        byte[] holder = kv.holder().getBytes(StandardCharsets.UTF_8);
        ByteString value = ByteString.copyFrom(holder);
        if (kv.metadata().length > 0) {
            value = value.concat(ByteString.copyFrom(new byte[] {'\n'})).concat(ByteString.copyFrom(kv.metadata()));
        }
        return io.tenure.proto.v1.KeyValue.newBuilder()
                .setKey(ByteString.copyFromUtf8(kv.key()))
                .setValue(value)
                .setLease(kv.leaseId())
                .setCreateRevision(kv.createRevision())
                .setModRevision(kv.modRevision())
                .setVersion(kv.version())
                .setHolder(kv.holder())
                .setMetadata(ByteString.copyFrom(kv.metadata()))
                .build();
    }

    /**
     * Status after a linearizable read barrier, so its revision includes every write acknowledged
     * before the call. With no leader reachable it still answers, from this member's own view,
     * with no leader named: Status is how an operator finds out what is wrong.
     */
    @Override
    public void status(StatusRequest request, StreamObserver<StatusResponse> observer) {
        member.readBarrier().handle((ignored, error) -> {
            try {
                StatusResponse status = member.status(header());
                if (error != null) {
                    status = status.toBuilder().clearLeader().clearLeaderEndpoint().build();
                }
                observer.onNext(status);
                observer.onCompleted();
            } catch (RuntimeException e) {
                observer.onError(Statuses.of(e));
            }
            return null;
        });
    }

    @Override
    public void describe(DescribeRequest request, StreamObserver<DescribeResponse> observer) {
        answer(member.locks().read(GrpcAuthentication.principal(), request.getName()), observer, read -> {
            LockState lock = read.locks().isEmpty()
                    ? LockState.newBuilder().setKey(request.getName()).setHeld(false).setHolderTtlRemainingMs(-1).build()
                    : lockState(read.locks().get(0));
            return DescribeResponse.newBuilder().setHeader(header(read.revision())).setLock(lock).build();
        });
    }

    @Override
    public void listLocks(ListLocksRequest request, StreamObserver<ListLocksResponse> observer) {
        answer(member.locks().list(GrpcAuthentication.principal(), request.getPrefix(), request.getLimit()), observer, read -> {
            ListLocksResponse.Builder response = ListLocksResponse.newBuilder().setHeader(header(read.revision())).setMore(read.more());
            read.locks().forEach(lock -> response.addLocks(lockState(lock)));
            return response.build();
        });
    }

    private LockState lockState(LockView lock) {
        LockState.Builder state = LockState.newBuilder()
                .setKey(lock.key())
                .setHeld(true)
                .setHolder(lock.holder())
                .setLeaseId(lock.leaseId())
                .setFencingToken(lock.fencingToken())
                .setMetadata(ByteString.copyFrom(lock.metadata()))
                .setCreateRevision(lock.createRevision())
                .setVersion(lock.version())
                .setHolderTtlRemainingMs(member.leases().remainingMillis(lock.leaseId()))
                .setMode(lock.shared() ? LockMode.LOCK_MODE_READ : LockMode.LOCK_MODE_WRITE);
        for (LockView.Holder holder : lock.holders()) {
            state.addHolders(LockHolder.newBuilder().setLeaseId(holder.leaseId()).setClientId(holder.clientId())
                    .setFencingToken(holder.fencingToken()).setMetadata(ByteString.copyFrom(holder.metadata()))
                    .setTtlRemainingMs(member.leases().remainingMillis(holder.leaseId())));
        }
        for (LockView.Waiter waiter : lock.waiters()) {
            state.addWaiters(Waiter.newBuilder().setLeaseId(waiter.leaseId()).setClientId(waiter.clientId())
                    .setJoinedRevision(waiter.joinedAt()).setMode(waiter.shared() ? LockMode.LOCK_MODE_READ : LockMode.LOCK_MODE_WRITE));
        }
        return state.build();
    }


    /** A header whose revision is that of the state a read saw. */
    private ResponseHeader header(long revision) {
        return header().toBuilder().setRevision(revision).build();
    }

    private static long seconds(long millis) {
        return (millis + 999) / 1000;
    }

    /**
     * The live leases in id order after {@code after_id}, read linearizably (after a read barrier,
     * from the applied state), each with its remaining TTL on this member's clock.
     */
    @Override
    public void leaseList(LeaseListRequest request, StreamObserver<LeaseListResponse> observer) {
        answer(member.leases().list(GrpcAuthentication.principal(), request.getAfterId(), request.getLimit()), observer, page -> {
            LeaseListResponse.Builder response = LeaseListResponse.newBuilder().setHeader(header(page.revision())).setMore(page.more());
            for (LeaseView lease : page.leases()) {
                response.addLeases(LeaseSummary.newBuilder()
                        .setId(lease.leaseId())
                        .setClientId(lease.clientId())
                        .setTtlMs(lease.ttlMillis())
                        .setRemainingMs(member.leases().remainingMillis(lease.leaseId()))
                        .setHeld(lease.held().size())
                        .setWaiting(lease.waiting().size())
                        .setGrantedRevision(lease.grantedAt()));
            }
            return response.build();
        });
    }
}
