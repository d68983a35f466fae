package io.tenure.client;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.tenure.proto.v1.ClusterServiceGrpc;
import io.tenure.proto.v1.LeaseGrantRequest;
import io.tenure.proto.v1.LeaseGrantResponse;
import io.tenure.proto.v1.LeaseRevokeRequest;
import io.tenure.proto.v1.LockRequest;
import io.tenure.proto.v1.LockResponse;
import io.tenure.proto.v1.LockServiceGrpc;
import io.tenure.proto.v1.Member;
import io.tenure.proto.v1.MemberAddRequest;
import io.tenure.proto.v1.MemberListRequest;
import io.tenure.proto.v1.MemberListResponse;
import io.tenure.proto.v1.MemberRemoveRequest;
import io.tenure.proto.v1.StatusRequest;
import io.tenure.proto.v1.StatusResponse;
import io.tenure.proto.v1.TryLockRequest;
import io.tenure.proto.v1.TryLockResponse;
import io.tenure.proto.v1.UnlockRequest;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Tenure Java client: leases kept alive in the background, and locks held by those leases.
 *
 * <pre>{@code
 * try (TenureClient client = TenureClient.connect(List.of("10.0.0.1:7070", "10.0.0.2:7070"));
 *      Lease lease = client.grantLease(Duration.ofSeconds(10), "billing-worker-3");
 *      LockHandle lock = client.lock("invoices", lease, Duration.ofSeconds(30), null)) {
 *     lease.lost().thenRun(worker::abort);          // stop before the server could give the lock away
 *     storage.write(batch, lock.fencingToken());    // the storage refuses tokens older than it has seen
 * }
 * }</pre>
 *
 * <h2>Failover</h2>
 * Every call goes to one preferred endpoint. When a member answers {@code UNAVAILABLE} (not
 * ready, no leader, shutting down) or the connection to it breaks (it died), the call moves on
 * to the next endpoint at once and the preference moves with it; if that fails too, the call
 * keeps cycling through the endpoints with a jittered backoff (50 ms doubling to 1 s) until it
 * is answered or its time is up: the {@linkplain Builder#requestTimeout request timeout} for
 * most calls, the lock's own timeout plus the request timeout for a lock wait. Each member
 * forwards to the leader, so any endpoint will do. Retrying is safe because every call is
 * idempotent on the server: a grant carries a lease id chosen here, a retried release or revoke
 * succeeds again, and a retried lock wait keeps its place in the queue.
 *
 * <p>A blocking lock wait survives the death of the member it waits on: the client re-issues the
 * same {@code Lock} (same name, lease and metadata) on another member with what remains of the
 * timeout, and the waiter keeps its place in the lock's queue, since the queue is keyed by lock
 * and lease. The wait ends when granted, when the timeout runs out, on a refusal other than
 * {@code UNAVAILABLE}, or when the lease is lost.
 *
 * <p>Server refusals arrive as {@link TenureException} subclasses carrying the server's message.
 *
 * <p>Blocking methods throw; their {@code ...Async} forms complete exceptionally with the same
 * exceptions (wrapped in {@link CompletionException} by dependent stages), and cancelling such
 * a future cancels the request. Interrupting a blocked caller cancels its request too.
 *
 * <p>Thread-safe; share one instance per process. {@link #close()} stops keeping its leases
 * alive ({@link LeaseLoss.Reason#CLOSED}): revoke leases first to free their locks at once.
 */
public final class TenureClient implements AutoCloseable {
    /** How long a call that does not wait on purpose keeps retrying; long enough for a leader election. */
    public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(10);

    private static final Logger log = LoggerFactory.getLogger(TenureClient.class);
    private static final SecureRandom LEASE_IDS = new SecureRandom();

    private final Endpoints endpoints;
    private final MonotonicClock clock;
    private final ScheduledExecutorService scheduler;
    private final boolean ownsScheduler;
    private final Duration requestTimeout;
    private final Set<Lease> openLeases = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    private TenureClient(Builder builder) {
        this.clock = builder.clock;
        this.requestTimeout = builder.requestTimeout;
        this.endpoints = new Endpoints(builder.endpoints, builder.channelFactory);
        if (builder.scheduler != null) {
            this.scheduler = builder.scheduler;
            this.ownsScheduler = false;
        } else {
            ScheduledThreadPoolExecutor keepers = new ScheduledThreadPoolExecutor(1, runnable -> {
                Thread thread = new Thread(runnable, "tenure-lease-keeper");
                thread.setDaemon(true);
                return thread;
            });
            // Loss timers are re-armed on every acknowledgement; don't keep the cancelled ones queued.
            keepers.setRemoveOnCancelPolicy(true);
            this.scheduler = keepers;
            this.ownsScheduler = true;
        }
    }

    /**
     * Connects to a Tenure cluster over plaintext gRPC. Connections are made lazily, so this does
     * not fail when members are down; the first call does.
     *
     * @param endpoints {@code host:port} of one or more members
     * @throws IllegalArgumentException if the list is empty or an endpoint is malformed
     */
    public static TenureClient connect(List<String> endpoints) {
        return builder().endpoints(endpoints).build();
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * Grants a lease and starts keeping it alive (see {@link Lease} for the rules). The request
     * carries a random lease id chosen here, so a grant retried on another member after an
     * {@code UNAVAILABLE} returns the same lease instead of granting a second one.
     *
     * @param ttl      how long the server keeps the lease without a renewal; sent in milliseconds
     *                 (and rounded up to whole seconds for servers that only read seconds)
     * @param clientId the holder name others see for this lease's locks
     * @throws InvalidArgumentException if the server refuses the TTL or client id
     * @throws UnavailableException     if no member could grant it
     */
    public Lease grantLease(Duration ttl, String clientId) {
        return Futures.await(grantLeaseAsync(ttl, clientId), "a lease grant");
    }

    /** The asynchronous form of {@link #grantLease(Duration, String)}. */
    public CompletableFuture<Lease> grantLeaseAsync(Duration ttl, String clientId) {
        Objects.requireNonNull(ttl, "ttl");
        Objects.requireNonNull(clientId, "clientId");
        if (ttl.isNegative() || ttl.isZero()) {
            throw new IllegalArgumentException("lease TTL must be positive, got " + ttl);
        }
        ensureOpen();
        long ttlMs = ceilMillis(ttl);
        LeaseGrantRequest request = LeaseGrantRequest.newBuilder()
                .setId(newLeaseId())
                .setTtlMs(ttlMs)
                .setTtl(Math.max(1, (ttlMs + 999) / 1000))
                .setClientId(clientId)
                .build();
        // Taken before the first attempt: the server granted no earlier, so the safe window
        // counted from here can only be shorter than the truth, never longer.
        long sentAt = clock.nanoTime();
        return unary(LockServiceGrpc.getLeaseGrantMethod(), request)
                .thenApply(granted -> startKeepingAlive(granted, clientId, sentAt));
    }

    /**
     * Acquires lock {@code name} for {@code lease}, waiting in the lock's FIFO queue. Waiters are
     * granted in the order they joined, one per release. A retried request keeps its place.
     *
     * @param timeout  how long to wait: {@code null} or negative waits until granted or the lease
     *                 is lost; zero tries once without waiting
     * @param metadata shown to others with the holder (may be null)
     * @throws LockNotAcquiredException if the lock was not granted in time (carries the holder)
     * @throws LeaseLostException       if the lease is not valid, or is lost while waiting (the
     *                                  wait is withdrawn)
     * @throws LeaseNotFoundException   if the server does not know the lease
     * @throws InvalidArgumentException if the server refuses the name or metadata
     * @throws UnavailableException     if no member could serve the request
     */
    public LockHandle lock(String name, Lease lease, Duration timeout, byte[] metadata) {
        return Futures.await(lockAsync(name, lease, timeout, metadata), "lock '" + name + "'");
    }

    /**
     * The asynchronous form of {@link #lock}; cancelling the future withdraws the wait. When the
     * member serving the wait dies or stops serving, the same request is re-issued on another
     * member with the remaining timeout, keeping the waiter's place (see the class comment).
     */
    public CompletableFuture<LockHandle> lockAsync(String name, Lease lease, Duration timeout, byte[] metadata) {
        Objects.requireNonNull(name, "name");
        checkLease(lease);
        long timeoutMs = timeout == null || timeout.isNegative() ? -1 : ceilMillis(timeout);
        LockRequest request = LockRequest.newBuilder()
                .setName(name)
                .setLeaseId(lease.id())
                .setMetadata(bytes(metadata))
                .setTimeoutMs(timeoutMs)
                .build();
        if (!lease.isValid()) {
            return CompletableFuture.failedFuture(lease.lostException());
        }
        // The server bounds each attempt's wait; the client's deadline only catches a member
        // that never answers, and ends the retries a request timeout after the wait.
        CompletableFuture<LockResponse> call = FailoverCall.lockWait(endpoints, clock, scheduler,
                LockServiceGrpc.getLockMethod(), request, requestTimeout,
                () -> lease.isValid() ? null : lease.lostException()).result();
        // A lost lease can never be granted anything useful: withdraw the wait at once.
        Runnable stopWatchingLease = lease.keeper().onLoss(loss -> call.cancel(false));
        CompletableFuture<LockHandle> result = call.handle((response, failure) -> {
            stopWatchingLease.run();
            if (call.isCancelled() && !lease.isValid()) {
                throw lease.lostException();
            }
            if (failure != null) {
                throw Futures.rethrowable(failure);
            }
            if (!response.getAcquired()) {
                throw new LockNotAcquiredException(name, response.getHolder(), response.getWaiters());
            }
            return granted(response.getKey().isEmpty() ? name : response.getKey(), response.getFencingToken(), lease);
        });
        result.whenComplete((handle, failure) -> {
            if (result.isCancelled()) {
                call.cancel(false);
            }
        });
        return result;
    }

    /**
     * Acquires lock {@code name} for {@code lease} only if it is free (or already held by this
     * lease); never waits and never joins the queue.
     *
     * @return the handle, or empty when another lease holds the lock (use {@link #lock} with a
     *         zero timeout to learn the holder)
     * @throws LeaseLostException if the lease is not valid
     * @throws TenureException    the same server refusals as {@link #lock}
     */
    public Optional<LockHandle> tryLock(String name, Lease lease, byte[] metadata) {
        Objects.requireNonNull(name, "name");
        checkLease(lease);
        if (!lease.isValid()) {
            throw lease.lostException();
        }
        TryLockRequest request = TryLockRequest.newBuilder()
                .setName(name)
                .setLeaseId(lease.id())
                .setMetadata(bytes(metadata))
                .build();
        TryLockResponse response = Futures.await(unary(LockServiceGrpc.getTryLockMethod(), request),
                "try-lock '" + name + "'");
        if (!response.getAcquired()) {
            return Optional.empty();
        }
        return Optional.of(granted(response.getKey().isEmpty() ? name : response.getKey(), response.getFencingToken(), lease));
    }

    /**
     * The serving member's view of the cluster: leader, term, applied and committed positions,
     * members.
     *
     * @throws UnavailableException if no member answered
     */
    public StatusResponse status() {
        return Futures.await(statusAsync(), "status");
    }

    /** The asynchronous form of {@link #status()}. */
    public CompletableFuture<StatusResponse> statusAsync() {
        ensureOpen();
        return unary(LockServiceGrpc.getStatusMethod(), StatusRequest.getDefaultInstance());
    }

    /**
     * The cluster's members as the serving member knows them: name, id, Raft peer address,
     * client endpoint, and which one leads.
     *
     * @throws UnavailableException if no member answered
     */
    public List<Member> members() {
        return Futures.await(membersAsync(), "the member list");
    }

    /** The asynchronous form of {@link #members()}. */
    public CompletableFuture<List<Member>> membersAsync() {
        ensureOpen();
        return unary(ClusterServiceGrpc.getMemberListMethod(), MemberListRequest.getDefaultInstance())
                .thenApply(MemberListResponse::getMembersList);
    }

    /**
     * Adds a voting member through a Raft configuration change. Start the new member first
     * ({@code tenure server --join}); the leader brings it up to date before it votes, which for
     * a long log means a snapshot transfer: give the client a request timeout to match. A
     * membership change is not cut short to try another member (one attempt may take the whole
     * request timeout); it moves on only when a member answers {@code UNAVAILABLE}.
     *
     * @param name        the new member's name (its {@code --id})
     * @param peerAddress {@code host:port} of its Raft (peer) port
     * @return the members after the change
     * @throws AlreadyExistsException   if the name or the peer address is taken; unless an
     *                                  earlier attempt of this same call made the change (a retry
     *                                  after {@code UNAVAILABLE} that finds the member as
     *                                  requested succeeds)
     * @throws InvalidArgumentException if the server refuses the name or address
     * @throws UnavailableException     if no member could make the change
     */
    public List<Member> addMember(String name, String peerAddress) {
        return Futures.await(addMemberAsync(name, peerAddress), "adding member '" + name + "'");
    }

    /** The asynchronous form of {@link #addMember(String, String)}. */
    public CompletableFuture<List<Member>> addMemberAsync(String name, String peerAddress) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(peerAddress, "peerAddress");
        ensureOpen();
        MemberAddRequest request = MemberAddRequest.newBuilder().setName(name).setPeerAddress(peerAddress).build();
        FailoverCall<MemberAddRequest, MemberListResponse> call = FailoverCall.unary(endpoints, clock, scheduler,
                ClusterServiceGrpc.getMemberAddMethod(), request, requestTimeout, false);
        return afterRetry(call, AlreadyExistsException.class, members -> members.stream()
                .anyMatch(m -> m.getName().equals(name) && m.getPeerAddress().equals(peerAddress)));
    }

    /**
     * Removes a member through a Raft configuration change; the cluster goes on with the others.
     *
     * @return the members after the change
     * @throws NotFoundException            if no member has that name; unless an earlier attempt
     *                                      of this same call removed it
     * @throws FailedPreconditionException  if it is the last voting member
     * @throws UnavailableException         if no member could make the change
     */
    public List<Member> removeMember(String name) {
        return Futures.await(removeMemberAsync(name), "removing member '" + name + "'");
    }

    /** The asynchronous form of {@link #removeMember(String)}. */
    public CompletableFuture<List<Member>> removeMemberAsync(String name) {
        Objects.requireNonNull(name, "name");
        ensureOpen();
        MemberRemoveRequest request = MemberRemoveRequest.newBuilder().setName(name).build();
        FailoverCall<MemberRemoveRequest, MemberListResponse> call = FailoverCall.unary(endpoints, clock, scheduler,
                ClusterServiceGrpc.getMemberRemoveMethod(), request, requestTimeout, false);
        return afterRetry(call, NotFoundException.class,
                members -> members.stream().noneMatch(m -> m.getName().equals(name)));
    }

    /**
     * Stops keeping this client's leases alive (their {@link Lease#lost()} completes with
     * {@code CLOSED}; the server expires them after their TTL and then frees their locks), shuts
     * down the channels and, if the client created it, the scheduler. Idempotent.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (Lease lease : openLeases) {
            lease.keeper().stop(LeaseLoss.Reason.CLOSED, "the client was closed");
        }
        openLeases.clear();
        endpoints.close();
        if (ownsScheduler) {
            scheduler.shutdownNow();
        }
    }

    void unlockOnServer(String key, long leaseId, long fencingToken) {
        UnlockRequest request = UnlockRequest.newBuilder()
                .setKey(key).setLeaseId(leaseId).setFencingToken(fencingToken).build();
        Futures.await(unary(LockServiceGrpc.getUnlockMethod(), request), "unlock '" + key + "'");
    }

    void revokeOnServer(long leaseId) {
        LeaseRevokeRequest request = LeaseRevokeRequest.newBuilder().setId(leaseId).build();
        Futures.await(unary(LockServiceGrpc.getLeaseRevokeMethod(), request), "revoke of lease " + leaseId);
    }

    private <Req, Resp> CompletableFuture<Resp> unary(MethodDescriptor<Req, Resp> method, Req request) {
        return FailoverCall.unary(endpoints, clock, scheduler, method, request, requestTimeout).result();
    }

    /**
     * The members after a membership change. A change whose first attempt went through but whose
     * answer was lost is refused when retried ({@code ALREADY_EXISTS}, {@code NOT_FOUND}); when
     * the member list then shows the change as requested, the call succeeded.
     */
    private CompletableFuture<List<Member>> afterRetry(FailoverCall<?, MemberListResponse> call,
            Class<? extends TenureException> refusalOfARetry, java.util.function.Predicate<List<Member>> done) {
        CompletableFuture<List<Member>> result = call.result().thenApply(MemberListResponse::getMembersList)
                .exceptionallyCompose(failure -> {
                    RuntimeException cause = Futures.rethrowable(failure);
                    if (call.attempts() < 2 || !refusalOfARetry.isInstance(cause)) {
                        return CompletableFuture.failedFuture(cause);
                    }
                    return membersAsync().handle((members, listFailure) -> {
                        if (listFailure == null && done.test(members)) {
                            return members;
                        }
                        throw cause;
                    });
                });
        result.whenComplete((members, failure) -> {
            if (result.isCancelled()) {
                call.result().cancel(false);
            }
        });
        return result;
    }

    private Lease startKeepingAlive(LeaseGrantResponse granted, String clientId, long sentAt) {
        long ttlMs = granted.getTtlMs() > 0 ? granted.getTtlMs() : TimeUnit.SECONDS.toMillis(granted.getTtl());
        if (ttlMs <= 0 || granted.getId() == 0) {
            throw new TenureException("the server answered a lease grant without an id or TTL: " + granted);
        }
        Duration ttl = Duration.ofMillis(ttlMs);
        LeaseKeeper keeper = new LeaseKeeper(granted.getId(), ttl, sentAt, endpoints, clock, scheduler);
        Lease lease = new Lease(this, granted.getId(), ttl, clientId, keeper);
        openLeases.add(lease);
        lease.keeper().lost().whenComplete((loss, failure) -> openLeases.remove(lease));
        if (closed) {
            keeper.stop(LeaseLoss.Reason.CLOSED, "the client was closed while the lease was granted");
        } else {
            keeper.start();
        }
        log.debug("lease {} granted (ttl {} ms, client id '{}')", lease.id(), ttlMs, clientId);
        return lease;
    }

    /** A granted lock, unless the lease was lost while the grant was on its way. */
    private LockHandle granted(String key, long fencingToken, Lease lease) {
        LockHandle handle = new LockHandle(key, fencingToken, lease);
        if (!lease.isValid()) {
            // Free it now if the server still ties it to the lease; it goes with the lease otherwise.
            CompletableFuture.runAsync(handle::release).exceptionally(failure -> null);
            throw lease.lostException();
        }
        return handle;
    }

    private void checkLease(Lease lease) {
        Objects.requireNonNull(lease, "lease");
        if (lease.client() != this) {
            throw new IllegalArgumentException("lease " + lease.id() + " belongs to another client");
        }
        ensureOpen();
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("the Tenure client is closed");
        }
    }

    private static long newLeaseId() {
        long id;
        do {
            id = LEASE_IDS.nextLong() & Long.MAX_VALUE;
        } while (id == 0);
        return id;
    }

    private static long ceilMillis(Duration duration) {
        long ms = duration.toMillis();
        return Duration.ofMillis(ms).compareTo(duration) < 0 ? ms + 1 : ms;
    }

    private static ByteString bytes(byte[] metadata) {
        return metadata == null ? ByteString.EMPTY : ByteString.copyFrom(metadata);
    }

    /** Options for {@link TenureClient}; every one but the endpoints has a default. */
    public static final class Builder {
        private List<String> endpoints = List.of();
        private MonotonicClock clock = MonotonicClock.system();
        private ScheduledExecutorService scheduler;
        private Duration requestTimeout = DEFAULT_REQUEST_TIMEOUT;
        private Function<String, ManagedChannel> channelFactory = Endpoints::plaintext;

        private Builder() {
        }

        /** {@code host:port} of one or more members, tried in this order. */
        public Builder endpoints(List<String> endpoints) {
            this.endpoints = List.copyOf(endpoints);
            return this;
        }

        /** The clock every lease-safety decision reads; tests pass a fake one. */
        public Builder clock(MonotonicClock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /**
         * Runs keep-alives, loss deadlines, reconnects and the backoff of retried calls. Its delays must be measured on the same
         * time base as {@link #clock(MonotonicClock)}. Not shut down by {@link TenureClient#close()}.
         * Default: one daemon thread owned by the client.
         */
        public Builder scheduler(ScheduledExecutorService scheduler) {
            this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
            return this;
        }

        /**
         * How long a call that does not wait on purpose may take, all attempts and backoffs on
         * every endpoint included (default 10 s); with several endpoints one attempt gets at most
         * half of it. A lock wait may take its own timeout plus this.
         */
        public Builder requestTimeout(Duration requestTimeout) {
            if (requestTimeout.isNegative() || requestTimeout.isZero()) {
                throw new IllegalArgumentException("request timeout must be positive, got " + requestTimeout);
            }
            this.requestTimeout = requestTimeout;
            return this;
        }

        /**
         * Makes the channel for each endpoint string (default: plaintext gRPC to
         * {@code host:port}); for TLS, or in-process servers in tests.
         */
        public Builder channelFactory(Function<String, ManagedChannel> channelFactory) {
            this.channelFactory = Objects.requireNonNull(channelFactory, "channelFactory");
            return this;
        }

        /** @throws IllegalArgumentException if no endpoint was given or one is malformed */
        public TenureClient build() {
            return new TenureClient(this);
        }
    }
}
