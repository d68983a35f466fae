package io.tenure.client;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.tenure.proto.v1.ClusterServiceGrpc;
import io.tenure.proto.v1.DescribeRequest;
import io.tenure.proto.v1.LeaseGrantRequest;
import io.tenure.proto.v1.LeaseGrantResponse;
import io.tenure.proto.v1.LeaseListRequest;
import io.tenure.proto.v1.LeaseListResponse;
import io.tenure.proto.v1.LeaseRevokeRequest;
import io.tenure.proto.v1.LeaseSummary;
import io.tenure.proto.v1.LeaseTimeToLiveRequest;
import io.tenure.proto.v1.LeaseTimeToLiveResponse;
import io.tenure.proto.v1.ListLocksRequest;
import io.tenure.proto.v1.LockCancelRequest;
import io.tenure.proto.v1.DowngradeRequest;
import io.tenure.proto.v1.LockRequest;
import io.tenure.proto.v1.LockResponse;
import io.tenure.proto.v1.LockServiceGrpc;
import io.tenure.proto.v1.LockState;
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
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Tenure Java client: leases kept alive in the background, and locks held by those leases.
 *
 * <pre>{@code
 * try (TenureClient client = TenureClient.connect(List.of("10.0.0.1:7070", "10.0.0.2:7070"))) {
 *     try (LockHandle lock = client.lock("invoices").acquire(Duration.ofSeconds(30))) {
 *         storage.write(batch, lock.fencingToken());    // the storage refuses tokens older than it has seen
 *     }
 *     client.withLock("billing/close", Duration.ofSeconds(30), lock -> ledger.close(lock.fencingToken()));
 * }
 * }</pre>
 *
 * <p>{@link #lock(String)} acquires with the client's {@linkplain #session() session lease};
 * {@link #grantLease(Duration)} and {@link #lock(String, Lease)} give a lease of your own, whose
 * {@link Lease#lost()} and {@link Lease#state()} tell when to stop. {@link #describe(String)}
 * says who holds a lock, {@link #watch} follows its changes, and
 * {@link io.tenure.client.fence.FenceGuard} is the storage's side of fencing.
 * {@link #lock(Scope, ScopeMode)} and {@link #lockAll(List)} hold lock scopes (byte ranges,
 * inodes, paths; a set of them all or nothing under one fencing token), and
 * {@link #describe(Scope)} and {@link #blockers(List)} say who holds, waits for and blocks them.
 *
 * <h2>Failover</h2>
 * Every call goes to one preferred endpoint. When a member answers {@code UNAVAILABLE} (not
 * ready, no leader, shutting down) or the connection to it breaks (it died), the call moves on
 * to the next endpoint at once and the preference moves with it; if that fails too, the call
 * keeps cycling through the endpoints with a jittered backoff (50 ms doubling to 250 ms) until it
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

    /** The session lease's TTL unless the builder sets another; at least a cluster's minimum with the default election timeout. */
    public static final Duration DEFAULT_SESSION_TTL = Duration.ofSeconds(30);
    static final int MAX_NAME_BYTES = 1024;
    static final int MAX_METADATA_BYTES = 64 * 1024;
    static final int MAX_CLIENT_ID_BYTES = 256;

    private static final Logger log = LoggerFactory.getLogger(TenureClient.class);
    private static final SecureRandom LEASE_IDS = new SecureRandom();

    private final Endpoints endpoints;
    /** One keep-alive stream per member, shared by this client's leases. */
    private final KeepAliveStreams keepAliveStreams;
    private final MonotonicClock clock;
    private final ScheduledExecutorService scheduler;
    /** Plaintext gRPC to {@code host:port}: the channels unless the builder was given others. */
    /** Grants asked for together travel in one call. */
    private final GrantBatches grants;
    /** The keep-alive streams' own connections and thread, with the default channels; else null. */
    private final KeepAliveTransport keepAliveTransport;
    /** The timers of this client's leases, coalesced per millisecond on {@link #scheduler}. */
    private final LeaseTimers leaseTimers;
    private final boolean ownsScheduler;
    private final Duration requestTimeout;
    private final String clientId;
    private final Duration sessionTtl;
    /** The session streams that carry every kind's calls, or null when they go unary. */
    private final SessionStreams sessions;
    /** Where answers that arrive in a session stream run, unless the caller waits on the transport thread. */
    private final ExecutorService callbacks;
    private final Set<Lease> openLeases = ConcurrentHashMap.newKeySet();
    private final Set<Watch> openWatches = ConcurrentHashMap.newKeySet();
    private final Set<Subscription> openSubscriptions = ConcurrentHashMap.newKeySet();
    private final List<ConnectionStateListener> stateListeners = new CopyOnWriteArrayList<>();
    /**
     * The waits being withdrawn, by lock and lease, each until its withdrawal (and the give-back
     * of a grant that won the race) has an answer. A new acquire of the same lock with the same
     * lease waits for it: sent earlier, it could be answered with the very grant about to be
     * given back, and its caller would act on a lock already released.
     */
    private final Map<LockWait, CompletableFuture<Void>> withdrawals = new ConcurrentHashMap<>();
    /**
     * Names each acquire and try-acquire, the same on every retry of it: once it ended (its grant
     * released, its wait withdrawn) the server refuses a copy still in flight, which would
     * otherwise queue the lease again or grant it the lock for a caller that stopped waiting.
     * Starts at a random point: unique per (lock, lease) even if a lease is shared by processes.
     */
    private final AtomicLong acquireRequests = new AtomicLong(LEASE_IDS.nextLong());
    /** The calls of lock scopes (inodes, paths, byte ranges). */
    private final ScopeLocks scopeLocks = new ScopeLocks(this);
    /** The session lease, granted on first use and again once lost. Guarded by this. */
    private CompletableFuture<Lease> session;
    private volatile boolean closed;

    private TenureClient(Builder builder) {
        this.clock = builder.clock;
        this.requestTimeout = builder.requestTimeout;
        this.clientId = builder.clientId;
        this.sessionTtl = builder.sessionTtl;
        // Keep-alives get a transport of their own with the default channels; custom channels
        // (TLS, in-process tests) carry them too.
        this.keepAliveTransport = builder.channelFactory == null ? new KeepAliveTransport(builder.credentials, builder.token) : null;
        io.grpc.ChannelCredentials credentials = builder.credentials;
        String token = builder.token;
        Function<String, ManagedChannel> channels = builder.channelFactory != null ? builder.channelFactory
                : endpoint -> Endpoints.channel(endpoint, credentials, token);
        this.endpoints = new Endpoints(builder.endpoints, channels,
                keepAliveTransport == null ? channels : keepAliveTransport::channel);
        if (builder.scheduler != null) {
            this.scheduler = builder.scheduler;
            this.ownsScheduler = false;
        } else {
            ScheduledThreadPoolExecutor keepers = new ScheduledThreadPoolExecutor(1, runnable -> {
                Thread thread = new Thread(runnable, "tenure-lease-keeper");
                thread.setDaemon(true);
                return thread;
            });
            // Timers are cancelled often (a lock wait's deadline, an exact short lease timer): don't keep them queued.
            keepers.setRemoveOnCancelPolicy(true);
            this.scheduler = keepers;
            this.ownsScheduler = true;
        }
        this.keepAliveStreams = new KeepAliveStreams(endpoints, clock, scheduler, openLeases::size);
        this.leaseTimers = new LeaseTimers(clock, scheduler);
        if (builder.sessionStream) {
            this.callbacks = builder.callbacks != null ? null : Executors.newCachedThreadPool(runnable -> {
                Thread thread = new Thread(runnable, "tenure-callbacks");
                thread.setDaemon(true);
                return thread;
            });
            this.sessions = new SessionStreams(endpoints, scheduler, builder.callbacks != null ? builder.callbacks : callbacks);
            endpoints.carrySessions(sessions);
        } else {
            this.callbacks = null;
            this.sessions = null;
        }
        this.grants = new GrantBatches(request -> unary(LockServiceGrpc.getLeaseGrantMethod(), request),
                request -> unary(LockServiceGrpc.getLeaseGrantBatchMethod(), request));
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

    /** Grants a lease with this client's {@linkplain Builder#clientId(String) client id} as the holder name. */
    public Lease grantLease(Duration ttl) {
        return grantLease(ttl, clientId);
    }

    /** The asynchronous form of {@link #grantLease(Duration)}. */
    public CompletableFuture<Lease> grantLeaseAsync(Duration ttl) {
        return grantLeaseAsync(ttl, clientId);
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
        LeaseGrantRequest request = grantRequest(ttl, clientId);
        // Taken before the first attempt: the server granted no earlier, so the safe window
        // counted from here can only be shorter than the truth, never longer.
        long sentAt = clock.nanoTime();
        return grants.grant(request).thenApply(granted -> startKeepingAlive(granted, clientId, sentAt));
    }

    /**
     * Grants a lease that this client holds but does <em>not</em> renew: it ends {@code ttl} after
     * the grant (on the leader's clock, and at most a failover later, as any lease that is not
     * renewed), or when revoked, whatever happens to this process. For work whose locks must end
     * by a deadline even if the process hangs or dies, such as ShedLock's {@code lockAtMostFor};
     * otherwise use {@link #grantLease(Duration, String)}. Locks are acquired with it through
     * {@link #lock(String, Lease)} as with any lease.
     *
     * <p>The client trusts it ({@link Lease#isValid()}) until 5/6 of the TTL after the grant was
     * sent, leaving TTL/6 before the server's earliest expiry as for a renewed lease; then
     * {@link Lease#lost()} completes with {@code EXPIRED}.
     *
     * @throws IllegalArgumentException if {@code ttl} is outside {@link Lease#MIN_TTL} to {@link Lease#MAX_TTL}
     * @throws InvalidArgumentException if the server refuses the TTL (below its minimum) or client id
     * @throws UnavailableException     if no member could grant it
     */
    public Lease grantExpiringLease(Duration ttl, String clientId) {
        return Futures.await(grantExpiringLeaseAsync(ttl, clientId), "a lease grant");
    }

    /** The asynchronous form of {@link #grantExpiringLease(Duration, String)}. */
    public CompletableFuture<Lease> grantExpiringLeaseAsync(Duration ttl, String clientId) {
        LeaseGrantRequest request = grantRequest(ttl, clientId);
        long sentAt = clock.nanoTime(); // the server granted no earlier: its TTL ends no sooner than sentAt + ttl
        return grants.grant(request).thenApply(granted -> startKeepingAlive(granted, clientId, sentAt, false));
    }

    /**
     * The lock {@code name}, acquired with this client's {@linkplain #session() session lease}.
     * Nothing is sent until an acquire.
     *
     * @throws IllegalArgumentException if the name is blank or longer than 1 KiB in UTF-8
     */
    public TenureLock lock(String name) {
        checkName(name);
        ensureOpen();
        return new TenureLock(this, name, null, null, LockMode.WRITE);
    }

    /** The lock {@code name}, acquired with {@code lease}. */
    public TenureLock lock(String name, Lease lease) {
        checkName(name);
        checkLease(lease);
        return new TenureLock(this, name, lease, null, LockMode.WRITE);
    }

    /**
     * The read/write lock {@code name}, acquired with this client's {@linkplain #session()
     * session lease}: readers share it, a writer holds it alone. Nothing is sent until an acquire.
     * Its write lock is the same as {@link #lock(String)}.
     *
     * @throws IllegalArgumentException if the name is blank or longer than 1 KiB in UTF-8
     */
    public TenureReadWriteLock readWriteLock(String name) {
        checkName(name);
        ensureOpen();
        return new TenureReadWriteLock(new TenureLock(this, name, null, null, LockMode.READ),
                new TenureLock(this, name, null, null, LockMode.WRITE));
    }

    /**
     * The leader election {@code name}, campaigned in with this client's {@linkplain #session()
     * session lease}. Nothing is sent until a campaign or a read.
     *
     * @throws IllegalArgumentException if the name is blank or longer than 1 KiB in UTF-8
     */
    public TenureElection election(String name) {
        checkName(name);
        ensureOpen();
        return new TenureElection(this, name, null);
    }

    /** The leader election {@code name}, campaigned in with {@code lease}. */
    public TenureElection election(String name, Lease lease) {
        checkName(name);
        checkLease(lease);
        return new TenureElection(this, name, lease);
    }

    /**
     * The barrier {@code name} that releases {@code parties} workers together, waited at with this
     * client's {@linkplain #session() session lease}. Nothing is sent until an await.
     *
     * @throws IllegalArgumentException if the name is blank or too long, or parties is not 1 to 100,000
     */
    public TenureBarrier barrier(String name, int parties) {
        checkName(name);
        checkParties(parties);
        ensureOpen();
        return new TenureBarrier(this, name, parties, null);
    }

    /** The barrier {@code name} of {@code parties}, waited at with {@code lease}. */
    public TenureBarrier barrier(String name, int parties, Lease lease) {
        checkName(name);
        checkParties(parties);
        checkLease(lease);
        return new TenureBarrier(this, name, parties, lease);
    }

    /**
     * The double barrier {@code name} whose {@code parties} workers enter together and leave
     * together, entered with this client's {@linkplain #session() session lease}. Nothing is sent
     * until an enter.
     *
     * @throws IllegalArgumentException if the name is blank or too long, or parties is not 1 to 1,000,000
     */
    public TenureDoubleBarrier doubleBarrier(String name, int parties) {
        checkName(name);
        checkDoubleBarrierParties(parties);
        ensureOpen();
        return new TenureDoubleBarrier(this, name, parties, null);
    }

    /** The double barrier {@code name} of {@code parties}, entered with {@code lease}. */
    public TenureDoubleBarrier doubleBarrier(String name, int parties, Lease lease) {
        checkName(name);
        checkDoubleBarrierParties(parties);
        checkLease(lease);
        return new TenureDoubleBarrier(this, name, parties, lease);
    }

    private static void checkDoubleBarrierParties(int parties) {
        if (parties < 1 || parties > 1_000_000) {
            throw new IllegalArgumentException("parties must be between 1 and 1000000, got " + parties);
        }
    }

    /**
     * The count-down latch {@code name}; its waits use this client's {@linkplain #session()
     * session lease}. Nothing is sent until a call.
     *
     * @throws IllegalArgumentException if the name is blank or too long
     */
    public TenureCountDownLatch countDownLatch(String name) {
        checkName(name);
        ensureOpen();
        return new TenureCountDownLatch(this, name, null);
    }

    /** Users, roles, tokens and the authentication switch of the cluster. */
    public TenureAuth auth() {
        ensureOpen();
        return new TenureAuth(this);
    }

    /**
     * The counter {@code name}. Nothing is sent until a call.
     *
     * @throws IllegalArgumentException if the name is blank or too long
     */
    public TenureCounter counter(String name) {
        checkName(name);
        ensureOpen();
        return new TenureCounter(this, name);
    }

    /** Signals: publish on channels, listen to patterns. Nothing is sent until a call. */
    public TenureTopic topic() {
        ensureOpen();
        return new TenureTopic(this);
    }

    Subscription openSubscription(String pattern, String group, Lease lease, SignalListener listener) {
        if (lease != null) {
            checkLease(lease);
        }
        ensureOpen();
        ListenStream stream = new ListenStream(pattern, group, listener, endpoints, clock, scheduler);
        Subscription subscription = new Subscription(stream);
        openSubscriptions.add(subscription);
        subscription.ended().whenComplete((ignored, failure) -> openSubscriptions.remove(subscription));
        if (closed) {
            subscription.clientClosed();
            return subscription;
        }
        CompletableFuture<Lease> bound = lease != null ? CompletableFuture.completedFuture(lease) : sessionAsync();
        bound.whenComplete((l, error) -> {
            if (error != null) {
                stream.failToStart(error);
            } else {
                stream.start(l.id());
            }
        });
        return subscription;
    }

    /** The key-value store. Nothing is sent until a call. */
    public TenureKv kv() {
        ensureOpen();
        return new TenureKv(this);
    }

    /**
     * The list {@code name}, as a queue; its waiting pops use this client's {@linkplain #session()
     * session lease}. Nothing is sent until a call.
     *
     * @throws IllegalArgumentException if the name is blank or too long
     */
    public TenureQueue queue(String name) {
        checkName(name);
        ensureOpen();
        return new TenureQueue(this, name, null);
    }

    /** The list {@code name}, as a queue whose waiting pops wait with {@code lease}. */
    public TenureQueue queue(String name, Lease lease) {
        checkName(name);
        checkLease(lease);
        return new TenureQueue(this, name, lease);
    }

    /** The count-down latch {@code name}, waited at with {@code lease}. */
    public TenureCountDownLatch countDownLatch(String name, Lease lease) {
        checkName(name);
        checkLease(lease);
        return new TenureCountDownLatch(this, name, lease);
    }

    private static void checkParties(int parties) {
        if (parties < 1 || parties > 100_000) {
            throw new IllegalArgumentException("parties must be between 1 and 100000, got " + parties);
        }
    }

    /** The read/write lock {@code name}, acquired with {@code lease}. */
    public TenureReadWriteLock readWriteLock(String name, Lease lease) {
        checkName(name);
        checkLease(lease);
        return new TenureReadWriteLock(new TenureLock(this, name, lease, null, LockMode.READ),
                new TenureLock(this, name, lease, null, LockMode.WRITE));
    }

    /**
     * The counting semaphore {@code name} with at most {@code limit} permits held at once,
     * acquired with this client's {@linkplain #session() session lease}. Nothing is sent until an
     * acquire.
     *
     * @throws IllegalArgumentException if the name is blank or longer than 1 KiB in UTF-8, or
     *                                  the limit is not 1 to 1,000,000
     */
    public TenureSemaphore semaphore(String name, int limit) {
        checkName(name);
        checkLimit(limit);
        ensureOpen();
        return new TenureSemaphore(this, name, limit, null);
    }

    /** The semaphore {@code name}, acquired with {@code lease}. */
    public TenureSemaphore semaphore(String name, int limit, Lease lease) {
        checkName(name);
        checkLimit(limit);
        checkLease(lease);
        return new TenureSemaphore(this, name, limit, lease);
    }

    private static void checkLimit(int limit) {
        if (limit < 1 || limit > 1_000_000) {
            throw new IllegalArgumentException("limit must be between 1 and 1000000, got " + limit);
        }
    }

    /**
     * Holds {@code scope} in {@code mode} with this client's {@linkplain #session() session lease},
     * waiting until granted or the lease is lost. A byte range, an inode or a path (seed 003's lock
     * scopes) is granted as soon as nothing overlapping it conflicts: no holder, and no earlier
     * waiter (fair, without head-of-line blocking: a writer to {@code [200,300)} does not wait
     * behind a writer to {@code [0,100)}, and a stream of readers cannot starve a waiting writer).
     * A {@linkplain Scope#named named} scope is the plain lock of that name, one kind, not two:
     * {@link ScopeMode#EXCLUSIVE} is {@link LockMode#WRITE}, {@link ScopeMode#SHARED} {@link LockMode#READ}.
     *
     * <pre>{@code
     * try (ScopeHandle held = client.lock(Scope.byteRange(inode, 0, 4096), ScopeMode.EXCLUSIVE)) {
     *     file.write(0, block, held.fencingToken());
     * }
     * }</pre>
     *
     * <p>The scope is the lease's, not the thread's: a thread of this client asking for a scope that
     * overlaps what another of its threads holds would wait for its own lease, and gets
     * {@link DeadlockException} at once. Use a client (or a {@linkplain #lockAll(List, Lease,
     * Duration, byte[]) lease}) per worker for work on overlapping scopes.
     *
     * @throws DeadlockException    if waiting would close a cycle of waits (nothing is queued; a
     *                              named scope is a plain lock, whose waits are not checked for cycles)
     * @throws LeaseLostException   if the lease is lost before the grant (the wait is withdrawn)
     * @throws UnavailableException if no member could be reached
     */
    public ScopeHandle lock(Scope scope, ScopeMode mode) {
        return Futures.await(lockAsync(scope, mode, null, FailoverCall.ON_TRANSPORT_THREAD), "scope " + scope);
    }

    /** The asynchronous form of {@link #lock(Scope, ScopeMode)}; cancelling the future withdraws the wait. */
    public CompletableFuture<ScopeHandle> lockAsync(Scope scope, ScopeMode mode) {
        return lockAsync(scope, mode, null, null);
    }

    /**
     * Holds {@code scope} in {@code mode} with the session lease, waiting at most {@code timeout};
     * zero tries once without waiting. As {@link #lock(Scope, ScopeMode)} otherwise.
     *
     * @throws ScopeNotAcquiredException if not granted in time; it names the leases in the way
     *                                   (the wait is withdrawn, nothing stays queued). For a named
     *                                   scope, the plain lock's {@link LockNotAcquiredException}
     *                                   (which it extends)
     * @throws DeadlockException         if waiting would close a cycle of waits
     * @throws IllegalArgumentException  if the timeout is null or negative
     */
    public ScopeHandle tryLock(Scope scope, ScopeMode mode, Duration timeout) {
        checkScopeTimeout(timeout);
        return Futures.await(lockAsync(scope, mode, timeout, FailoverCall.ON_TRANSPORT_THREAD), "scope " + scope);
    }

    /** The asynchronous form of {@link #tryLock(Scope, ScopeMode, Duration)}; cancelling the future withdraws the wait. */
    public CompletableFuture<ScopeHandle> tryLockAsync(Scope scope, ScopeMode mode, Duration timeout) {
        checkScopeTimeout(timeout);
        return lockAsync(scope, mode, timeout, null);
    }

    private CompletableFuture<ScopeHandle> lockAsync(Scope scope, ScopeMode mode, Duration timeout, Executor answers) {
        Objects.requireNonNull(scope, "scope");
        Objects.requireNonNull(mode, "mode");
        ensureOpen();
        if (scope instanceof Scope.Named named) {
            checkName(named.name());
            LockMode lockMode = mode == ScopeMode.SHARED ? LockMode.READ : LockMode.WRITE;
            CompletableFuture<LockHandle> acquiring = withLease(null, held -> acquireAsync(named.name(), held, timeout, null, answers, 0,
                    lockMode), LockHandle::releaseAsync);
            CompletableFuture<ScopeHandle> result = acquiring.thenApply(ScopeHandle::new);
            result.whenComplete((handle, failure) -> {
                if (result.isCancelled()) {
                    acquiring.cancel(false); // withdraws the wait; a grant that came first is given back
                    acquiring.thenAccept(LockHandle::releaseAsync);
                }
            });
            return result;
        }
        List<ScopePart> parts = List.of(new ScopePart(scope, mode));
        return withLease(null, held -> scopeLocks.acquireAsync(parts, held, timeout, null, answers), ScopeHandle::releaseAsync);
    }

    /**
     * Holds every part of {@code parts} with the session lease, all or nothing, under one fencing
     * token, waiting until granted or the lease is lost. The set waits as one claim, in the way of
     * each of its parts at once, and is granted when no part conflicts with a holder or an earlier
     * waiter; a lease never holds some of the parts while waiting for the others, so sets asked for
     * in any order cannot deadlock one another.
     *
     * <pre>{@code
     * try (ScopeHandle held = client.lockAll(List.of(
     *         ScopePart.exclusive(Scope.path("/data/out")), ScopePart.shared(Scope.path("/data/in"))))) {
     *     copy(in, out, held.fencingToken());
     * }
     * }</pre>
     *
     * @param parts 1 to {@value ScopePart#MAX_PARTS} inodes, paths and byte ranges: no named scope
     *              (a name is a plain lock, take it alone), none twice, no two overlapping
     * @throws IllegalArgumentException if the set breaks those rules; nothing is sent then
     * @throws DeadlockException        if waiting would close a cycle of waits (nothing is queued)
     * @throws LeaseLostException       if the lease is lost before the grant
     */
    public ScopeHandle lockAll(List<ScopePart> parts) {
        List<ScopePart> set = ScopePart.checkSet(parts);
        ensureOpen();
        return Futures.await(withLease(null, held -> scopeLocks.acquireAsync(set, held, null, null, FailoverCall.ON_TRANSPORT_THREAD),
                ScopeHandle::releaseAsync), "scopes " + set);
    }

    /** The asynchronous form of {@link #lockAll(List)}; cancelling the future withdraws the wait. */
    public CompletableFuture<ScopeHandle> lockAllAsync(List<ScopePart> parts) {
        List<ScopePart> set = ScopePart.checkSet(parts);
        ensureOpen();
        return withLease(null, held -> scopeLocks.acquireAsync(set, held, null, null, null), ScopeHandle::releaseAsync);
    }

    /**
     * {@link #lockAll(List)}, waiting at most {@code timeout}; zero tries once without waiting.
     *
     * @throws ScopeNotAcquiredException if not granted in time, naming the leases in the way (the
     *                                   wait is withdrawn, nothing stays queued)
     */
    public ScopeHandle tryLockAll(List<ScopePart> parts, Duration timeout) {
        List<ScopePart> set = ScopePart.checkSet(parts);
        checkScopeTimeout(timeout);
        ensureOpen();
        return Futures.await(withLease(null, held -> scopeLocks.acquireAsync(set, held, timeout, null, FailoverCall.ON_TRANSPORT_THREAD),
                ScopeHandle::releaseAsync), "scopes " + set);
    }

    /** The asynchronous form of {@link #tryLockAll(List, Duration)}; cancelling the future withdraws the wait. */
    public CompletableFuture<ScopeHandle> tryLockAllAsync(List<ScopePart> parts, Duration timeout) {
        List<ScopePart> set = ScopePart.checkSet(parts);
        checkScopeTimeout(timeout);
        ensureOpen();
        return withLease(null, held -> scopeLocks.acquireAsync(set, held, timeout, null, null), ScopeHandle::releaseAsync);
    }

    /**
     * Holds every part of {@code parts} with {@code lease}, all or nothing, as {@link #lockAll(List)}.
     * A retried request keeps its place in the queue or returns the grant it got; a wait survives
     * the death of the member it waits on (re-sent to another with what remains of the timeout).
     *
     * @param timeout  how long to wait: {@code null} or negative waits until granted or the lease
     *                 is lost; zero tries once without waiting
     * @param metadata shown to others with the holder (may be null; at most 64 KiB)
     * @throws ScopeNotAcquiredException if not granted in time (carries the blockers)
     * @throws DeadlockException         if waiting would close a cycle of waits
     * @throws LeaseLostException        if the lease is not valid, or is lost while waiting
     * @throws LeaseNotFoundException    if the server does not know the lease
     * @throws InvalidArgumentException  if the server refuses a part
     * @throws UnavailableException      if no member could serve the request
     */
    public ScopeHandle lockAll(List<ScopePart> parts, Lease lease, Duration timeout, byte[] metadata) {
        List<ScopePart> set = ScopePart.checkSet(parts);
        checkMetadata(metadata);
        checkLease(lease);
        return Futures.await(scopeLocks.acquireAsync(set, lease, timeout, metadata, FailoverCall.ON_TRANSPORT_THREAD), "scopes " + set);
    }

    /** The asynchronous form of {@link #lockAll(List, Lease, Duration, byte[])}; cancelling the future withdraws the wait. */
    public CompletableFuture<ScopeHandle> lockAllAsync(List<ScopePart> parts, Lease lease, Duration timeout, byte[] metadata) {
        List<ScopePart> set = ScopePart.checkSet(parts);
        checkMetadata(metadata);
        checkLease(lease);
        return scopeLocks.acquireAsync(set, lease, timeout, metadata == null ? null : metadata.clone(), null);
    }

    /**
     * The sets held and waited for that overlap {@code scope}, read linearizably: holders by
     * fencing token, waiters in queue order. A named scope describes that lock's holders and waiters.
     *
     * @throws UnavailableException if no member could answer
     */
    public ScopeDescription describe(Scope scope) {
        return Futures.await(describeAsync(scope), "describe " + scope);
    }

    /** The asynchronous form of {@link #describe(Scope)}. */
    public CompletableFuture<ScopeDescription> describeAsync(Scope scope) {
        Objects.requireNonNull(scope, "scope");
        ensureOpen();
        return scopeLocks.describeAsync(scope);
    }

    /**
     * Who would block {@code parts} if they were asked for now ("who blocks me"), read
     * linearizably: the holders of conflicting parts and the earlier waiters a new set would queue
     * behind; empty when the set would be granted at once. Nothing is queued.
     *
     * @throws IllegalArgumentException if the set breaks the rules of {@link #lockAll(List)}
     */
    public List<ScopeBlocker> blockers(List<ScopePart> parts) {
        return Futures.await(blockersAsync(parts), "the blockers of " + parts);
    }

    /** The asynchronous form of {@link #blockers(List)}. */
    public CompletableFuture<List<ScopeBlocker>> blockersAsync(List<ScopePart> parts) {
        List<ScopePart> set = ScopePart.checkSet(parts);
        ensureOpen();
        return scopeLocks.blockersAsync(set);
    }

    private static void checkScopeTimeout(Duration timeout) {
        if (timeout == null || timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must be zero or positive, got " + timeout
                    + " (use lock or lockAll to wait without a limit)");
        }
    }

    ScopeLocks scopeLocks() {
        return scopeLocks;
    }

    /**
     * The lease that {@link #lock(String)} acquires with: granted on first use with the
     * {@linkplain Builder#sessionTtl(Duration) session TTL} and this client's id, kept alive in the
     * background, and granted anew on the next use once lost (locks held under the old one are
     * lost with it). Like an etcd concurrency session or a ZooKeeper session.
     */
    public Lease session() {
        return Futures.await(sessionAsync(), "the session lease");
    }

    /** The asynchronous form of {@link #session()}. */
    public CompletableFuture<Lease> sessionAsync() {
        ensureOpen();
        synchronized (this) {
            boolean usable = session != null && !session.isCompletedExceptionally() && !session.isCancelled()
                    && (!session.isDone() || session.join().isValid());
            if (!usable) {
                session = grantLeaseAsync(sessionTtl, clientId);
            }
            return session.copy();
        }
    }

    /**
     * Runs {@code work} while holding lock {@code name} under a lease of its own: grants a lease
     * of {@code ttl}, waits in the queue until granted, runs the work on the calling thread, then
     * revokes the lease (releasing the lock at once). When the lease is lost during the work, the
     * calling thread is interrupted, and this throws {@link LeaseLostException} even if the work
     * returned (its result was produced without the guarantee); the work's own exception, if any,
     * is attached as suppressed.
     *
     * <pre>{@code
     * long rows = client.withLock("billing/close-month", Duration.ofSeconds(30),
     *         lock -> ledger.closeMonth(month, lock.fencingToken()));
     * }</pre>
     *
     * @throws LeaseLostException if the lease was lost before or during the work
     * @throws Exception          what the work threw
     */
    public <T> T withLock(String name, Duration ttl, LockedWork<T> work) throws Exception {
        return withLock(name, ttl, null, work);
    }

    /**
     * As {@link #withLock(String, Duration, LockedWork)}, waiting at most {@code waitTimeout} for
     * the lock ({@code null}: until granted).
     *
     * @throws LockNotAcquiredException if the lock was not granted in time
     */
    public <T> T withLock(String name, Duration ttl, Duration waitTimeout, LockedWork<T> work) throws Exception {
        checkName(name);
        Objects.requireNonNull(work, "work");
        Lease lease = grantLease(ttl);
        try {
            LockHandle lock = acquire(name, lease, waitTimeout, null);
            Thread worker = Thread.currentThread();
            Object running = new Object();
            boolean[] state = {true, false}; // {work running, interrupted by us}; guarded by running
            Runnable stopWatching = lease.keeper().onLoss(loss -> {
                synchronized (running) {
                    if (state[0]) {
                        state[1] = true;
                        worker.interrupt();
                    }
                }
            });
            T result = null;
            Throwable failure = null;
            try {
                result = work.run(lock);
            } catch (Throwable t) {
                failure = t;
            } finally {
                synchronized (running) {
                    state[0] = false;
                }
                stopWatching.run();
            }
            if (state[1]) {
                Thread.interrupted(); // our interrupt was for the work only; do not leak it to the caller
            }
            LeaseLoss loss = lease.keeper().loss();
            if (loss != null && loss.reason() != LeaseLoss.Reason.REVOKED) {
                LeaseLostException lost = new LeaseLostException(lease.id(), loss);
                if (failure != null) {
                    lost.addSuppressed(failure);
                }
                throw lost;
            }
            if (failure instanceof Exception e) {
                throw e;
            }
            if (failure instanceof Error e) {
                throw e;
            }
            return result;
        } finally {
            if (lease.isValid()) {
                lease.close();
            } else {
                // Lost: the server ends it after its TTL anyway; do not hold the caller up retrying.
                lease.revokeAsync().exceptionally(failure -> null);
            }
        }
    }

    /**
     * The asynchronous form of {@link #withLock(String, Duration, LockedWork)}: {@code work}
     * starts the protected work and returns its stage; when the lease is lost first, that stage is
     * cancelled and the result fails with {@link LeaseLostException}. The lease is revoked when
     * the result completes.
     */
    public <T> CompletableFuture<T> withLockAsync(String name, Duration ttl,
            java.util.function.Function<LockHandle, ? extends java.util.concurrent.CompletionStage<T>> work) {
        checkName(name);
        Objects.requireNonNull(work, "work");
        return grantLeaseAsync(ttl).thenCompose(lease -> {
            CompletableFuture<T> result = new CompletableFuture<>();
            acquireAsync(name, lease, null, null).whenComplete((lock, failure) -> {
                if (failure != null) {
                    result.completeExceptionally(Futures.rethrowable(failure));
                    return;
                }
                CompletableFuture<T> running;
                try {
                    running = work.apply(lock).toCompletableFuture();
                } catch (RuntimeException e) {
                    result.completeExceptionally(e);
                    return;
                }
                Runnable stopWatching = lease.keeper().onLoss(loss -> {
                    if (result.completeExceptionally(new LeaseLostException(lease.id(), loss))) {
                        running.cancel(true);
                    }
                });
                running.whenComplete((value, workFailure) -> {
                    stopWatching.run();
                    if (workFailure != null) {
                        result.completeExceptionally(Futures.rethrowable(workFailure));
                    } else {
                        result.complete(value);
                    }
                });
            });
            return result.whenComplete((value, failure) -> lease.revokeAsync().exceptionally(e -> null));
        });
    }

    /**
     * Who holds lock {@code name} and who waits for it, read linearizably (any member answers
     * once it has applied everything committed before the call).
     *
     * @throws IllegalArgumentException if the name is blank or too long
     * @throws UnavailableException     if no member could answer
     */
    public LockDescription describe(String name) {
        return Futures.await(describeAsync(name), "describe '" + name + "'");
    }

    /** The asynchronous form of {@link #describe(String)}. */
    public CompletableFuture<LockDescription> describeAsync(String name) {
        checkName(name);
        ensureOpen();
        return unary(LockServiceGrpc.getDescribeMethod(), DescribeRequest.newBuilder().setName(name).build())
                .thenApply(response -> describedLock(response.getLock(), response.getHeader().getRevision()));
    }

    /**
     * The held locks whose names start with {@code prefix}, in name order, at most {@code limit}
     * (1 to 10,000), read linearizably.
     */
    public List<LockDescription> locks(String prefix, int limit) {
        return Futures.await(locksAsync(prefix, limit), "the locks under '" + prefix + "'");
    }

    /** The asynchronous form of {@link #locks(String, int)}. */
    public CompletableFuture<List<LockDescription>> locksAsync(String prefix, int limit) {
        Objects.requireNonNull(prefix, "prefix");
        if (limit < 1 || limit > 10_000) {
            throw new IllegalArgumentException("limit must be between 1 and 10000, got " + limit);
        }
        ensureOpen();
        return unary(LockServiceGrpc.getListLocksMethod(), ListLocksRequest.newBuilder().setPrefix(prefix).setLimit(limit).build())
                .thenApply(response -> response.getLocksList().stream()
                        .map(lock -> describedLock(lock, response.getHeader().getRevision())).toList());
    }

    /**
     * Calls {@code listener} whenever one of this client's leases changes {@link ConnectionState}
     * (CONNECTED, SUSPENDED, LOST), on a client thread; keep it short.
     */
    public void addConnectionStateListener(ConnectionStateListener listener) {
        stateListeners.add(Objects.requireNonNull(listener, "listener"));
    }

    public void removeConnectionStateListener(ConnectionStateListener listener) {
        stateListeners.remove(listener);
    }

    /** This client's id: the holder name others see for leases granted without one. */
    public String clientId() {
        return clientId;
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
    public LockHandle acquire(String name, Lease lease, Duration timeout, byte[] metadata) {
        return Futures.await(acquireAsync(name, lease, timeout, metadata, FailoverCall.ON_TRANSPORT_THREAD), "lock '" + name + "'");
    }

    /**
     * The asynchronous form of {@link #acquire(String, Lease, Duration, byte[])}; cancelling the future withdraws the wait. When the
     * member serving the wait dies or stops serving, the same request is re-issued on another
     * member with the remaining timeout, keeping the waiter's place (see the class comment).
     */
    public CompletableFuture<LockHandle> acquireAsync(String name, Lease lease, Duration timeout, byte[] metadata) {
        return acquireAsync(name, lease, timeout, metadata, null);
    }

    /**
     * {@link #acquireAsync(String, Lease, Duration, byte[])}, with the answer handled where
     * {@code answers} says: {@link FailoverCall#ON_TRANSPORT_THREAD} when the caller only blocks
     * on the result (no user code may be chained on it), null otherwise.
     */
    CompletableFuture<LockHandle> acquireAsync(String name, Lease lease, Duration timeout, byte[] metadata, Executor answers) {
        return acquireAsync(name, lease, timeout, metadata, answers, 0);
    }

    /**
     * The acquire, named {@code acquireRequest}: the second phase of a two-phase acquire names the
     * request of its first phase (the lease's place in the queue); 0 makes a new acquire.
     */
    CompletableFuture<LockHandle> acquireAsync(String name, Lease lease, Duration timeout, byte[] metadata, Executor answers,
                                               long acquireRequest) {
        return acquireAsync(name, lease, timeout, metadata, answers, acquireRequest, LockMode.WRITE);
    }

    /** {@link #acquireAsync(String, Lease, Duration, byte[], Executor, long)} in {@code mode}. */
    CompletableFuture<LockHandle> acquireAsync(String name, Lease lease, Duration timeout, byte[] metadata, Executor answers,
                                               long acquireRequest, LockMode mode) {
        checkName(name);
        checkMetadata(metadata);
        checkLease(lease);
        long timeoutMs = timeout == null || timeout.isNegative() ? -1 : FailoverCall.ceilMillis(timeout);
        long requestId = acquireRequest != 0 ? acquireRequest : nextAcquireRequest();
        LockRequest request = LockRequest.newBuilder()
                .setName(name)
                .setLeaseId(lease.id())
                .setMetadata(bytes(metadata))
                .setTimeoutMs(timeoutMs)
                .setRequestId(requestId)
                .setMode(mode.wire())
                .build();
        if (!lease.isValid()) {
            return CompletableFuture.failedFuture(lease.lostException());
        }
        CompletableFuture<Void> withdrawing = withdrawals.get(new LockWait(name, lease.id()));
        if (withdrawing != null) {
            // A withdrawal always completes normally; a grant the caller no longer waits for is given back.
            return Futures.thenCompose(withdrawing, done -> acquireAsync(name, lease, timeout, metadata, answers, acquireRequest, mode),
                    handle -> handle.releaseAsync().exceptionally(f -> null));
        }
        // The server bounds each attempt's wait; the client's deadline only catches a member
        // that never answers, and ends the retries a request timeout after the wait.
        CompletableFuture<LockResponse> call = FailoverCall.lockWait(endpoints, clock, scheduler,
                LockServiceGrpc.getLockMethod(), request, requestTimeout,
                () -> lease.isValid() ? null : lease.lostException(), answers).result();
        // A lost lease can never be granted anything useful: withdraw the wait at once.
        Runnable stopWatchingLease = lease.keeper().onLoss(loss -> call.cancel(false));
        CompletableFuture<LockHandle> result = call.handle((response, failure) -> {
            stopWatchingLease.run();
            if (call.isCancelled() && !lease.isValid()) {
                throw lease.lostException();
            }
            if (failure != null) {
                RuntimeException cause = Futures.rethrowable(failure);
                if (cause instanceof UnavailableException) {
                    // The wait may still be queued on a member that did not answer. Withdrawn
                    // here, before the result completes: a caller woken by the failure may retry
                    // at once, and its retry must find the withdrawal to wait for.
                    withdraw(name, lease, requestId);
                }
                throw cause;
            }
            if (!response.getAcquired()) {
                throw new LockNotAcquiredException(name, response.getHolder(), response.getWaiters());
            }
            return granted(response.getKey().isEmpty() ? name : response.getKey(), response.getFencingToken(), lease, mode);
        });
        result.whenComplete((handle, failure) -> {
            if (result.isCancelled()) {
                call.cancel(false);
                withdraw(name, lease, requestId); // cancel() returns once this ran, so the caller's next acquire finds it
            }
        });
        return result;
    }

    /**
     * The first phase of a two-phase acquire: the lease joins lock {@code name}'s queue, and the
     * answer comes at once: granted, or the lease's place with the waiters ahead. Then
     * {@link QueuePlace#await} waits for the grant, keeping the place.
     */
    CompletableFuture<QueuePlace<LockHandle>> enqueueAsync(String name, Lease lease, byte[] metadata, Executor answers, LockMode mode) {
        CompletableFuture<QueuePlace<LockHandle>> notNow = notYet(name, lease, metadata, () -> enqueueAsync(name, lease, metadata, answers, mode),
                place -> place.withdrawAsync().exceptionally(f -> null));
        if (notNow != null) {
            return notNow;
        }
        long requestId = nextAcquireRequest();
        LockRequest request = LockRequest.newBuilder().setName(name).setLeaseId(lease.id()).setMetadata(bytes(metadata))
                .setRequestId(requestId).setEnqueue(true).setMode(mode.wire()).build();
        return unary(LockServiceGrpc.getLockMethod(), request, answers).thenApply(response -> {
            String key = response.getKey().isEmpty() ? name : response.getKey();
            LockHandle granted = response.getAcquired() ? granted(key, response.getFencingToken(), lease, mode) : null;
            return new QueuePlace<>(key, lease, granted, response.getWaiters(),
                    timeout -> acquireAsync(name, lease, timeout, metadata, null, requestId, mode),
                    () -> {
                        withdraw(name, lease, requestId);
                        CompletableFuture<Void> done = withdrawals.get(new LockWait(name, lease.id()));
                        return done == null ? CompletableFuture.completedFuture(null) : done.copy();
                    },
                    LockHandle::releaseAsync);
        });
    }

    /**
     * Gives up the lease's wait for lock {@code name} on the server, after the caller gave up
     * (cancelled) or no member answered. A member never withdraws a wait by itself when its call
     * goes away, since the same wait may be re-attached elsewhere, so the client must. A grant
     * that won the race is given back: nobody will use it. Best effort: if no member answers,
     * the wait ends with the lease. Named by the acquire's {@code requestId}, so that a copy of
     * that acquire still on its way is refused when it arrives after the withdrawal.
     */
    private void withdraw(String name, Lease lease, long requestId) {
        LockCancelRequest request = LockCancelRequest.newBuilder().setName(name).setLeaseId(lease.id()).setRequestId(requestId).build();
        withdraw(name, lease, () -> unary(LockServiceGrpc.getLockCancelMethod(), request)
                .thenCompose(response -> response.getAcquired()
                        // Granted just before the withdrawal: nobody will use it, so give it back.
                        ? giveBack(new LockHandle(response.getKey().isEmpty() ? name : response.getKey(), response.getFencingToken(), lease)::releaseAsync,
                                lease)
                        : CompletableFuture.<Void>completedFuture(null)));
    }

    /**
     * Withdraws the lease's wait for {@code name} (a lock's, a semaphore's: names are unique
     * across the kinds that wait) with {@code cancel}, which also gives back a grant that won the
     * race. Until it is answered, a new acquire of the same name with the same lease waits for it
     * ({@link #afterWithdrawal}). Best effort: if no member answers, the wait ends with the lease.
     */
    void withdraw(String name, Lease lease, java.util.function.Supplier<CompletableFuture<Void>> cancel) {
        if (closed || !lease.isValid()) {
            return; // a lost lease has no waits left; a closed client's leases are revoked or end
        }
        // Registered before the caller learns that its acquire failed, so that its retry waits.
        LockWait wait = new LockWait(name, lease.id());
        CompletableFuture<Void> done = new CompletableFuture<>();
        CompletableFuture<Void> earlier = withdrawals.put(wait, done);
        (earlier == null ? CompletableFuture.<Void>completedFuture(null) : earlier)
                .thenCompose(ignored -> cancel.get())
                .whenComplete((ignored, failure) -> {
                    if (failure != null) {
                        log.debug("the wait of lease {} for '{}' was not withdrawn ({}); it ends with the lease",
                                lease.id(), name, failure.getMessage());
                    }
                    withdrawals.remove(wait, done);
                    done.complete(null);
                });
    }

    /** The withdrawal of the lease's wait for {@code name} still under way, or null. */
    CompletableFuture<Void> afterWithdrawal(String name, Lease lease) {
        return withdrawals.get(new LockWait(name, lease.id()));
    }

    /**
     * Releases a grant nobody will use, again and again while no member answers and the lease
     * lives: until it is released, the same lease's next acquire of the name must not be sent
     * (see {@link #withdrawals}).
     */
    CompletableFuture<Void> giveBack(java.util.function.Supplier<CompletableFuture<Void>> release, Lease lease) {
        return release.get().handle((released, failure) -> failure).thenCompose(failure -> {
            if (failure == null) {
                return CompletableFuture.<Void>completedFuture(null);
            }
            if (Futures.rethrowable(failure) instanceof UnavailableException && !closed && lease.isValid()) {
                return giveBack(release, lease);
            }
            return CompletableFuture.<Void>failedFuture(failure);
        });
    }

    /**
     * Checks a lock request before it is sent: a bad name, metadata or lease throws; a lost lease
     * fails the call; while a withdrawal of the same lease's wait is under way, the call is sent
     * ({@code again}) only after it, and a result its caller no longer waits for is undone. Null
     * when the call may go now.
     */
    private <T> CompletableFuture<T> notYet(String name, Lease lease, byte[] metadata, java.util.function.Supplier<CompletableFuture<T>> again,
                                            java.util.function.Consumer<T> undo) {
        checkName(name);
        checkMetadata(metadata);
        checkLease(lease);
        if (!lease.isValid()) {
            return CompletableFuture.failedFuture(lease.lostException());
        }
        CompletableFuture<Void> withdrawing = withdrawals.get(new LockWait(name, lease.id()));
        return withdrawing == null ? null : Futures.thenCompose(withdrawing, done -> again.get(), undo);
    }

    /** A lease's wait for one name (a lock or a semaphore). */
    private record LockWait(String name, long leaseId) {
    }

    long nextAcquireRequest() {
        long id = acquireRequests.incrementAndGet();
        return id != 0 ? id : acquireRequests.incrementAndGet();
    }

    /**
     * Acquires lock {@code name} for {@code lease} only if it is free (or already held by this
     * lease); never waits and never joins the queue.
     *
     * @return the handle, or empty when another lease holds the lock (use {@link #acquire(String, Lease, Duration, byte[])} with a
     *         zero timeout to learn the holder)
     * @throws LeaseLostException if the lease is not valid
     * @throws TenureException    the same server refusals as {@link #acquire(String, Lease, Duration, byte[])}
     */
    public Optional<LockHandle> tryAcquire(String name, Lease lease, byte[] metadata) {
        return Futures.await(tryAcquireAsync(name, lease, metadata, FailoverCall.ON_TRANSPORT_THREAD), "try-lock '" + name + "'");
    }

    /** The asynchronous form of {@link #tryAcquire(String, Lease, byte[])}. */
    public CompletableFuture<Optional<LockHandle>> tryAcquireAsync(String name, Lease lease, byte[] metadata) {
        return tryAcquireAsync(name, lease, metadata, null);
    }

    /** {@link #tryAcquireAsync(String, Lease, byte[])}, with the answer handled where {@code answers} says (see acquireAsync). */
    CompletableFuture<Optional<LockHandle>> tryAcquireAsync(String name, Lease lease, byte[] metadata, Executor answers) {
        return tryAcquireAsync(name, lease, metadata, answers, LockMode.WRITE);
    }

    /** {@link #tryAcquireAsync(String, Lease, byte[], Executor)} in {@code mode}. */
    CompletableFuture<Optional<LockHandle>> tryAcquireAsync(String name, Lease lease, byte[] metadata, Executor answers, LockMode mode) {
        CompletableFuture<Optional<LockHandle>> notNow = notYet(name, lease, metadata, () -> tryAcquireAsync(name, lease, metadata, answers, mode),
                held -> held.ifPresent(handle -> handle.releaseAsync().exceptionally(f -> null)));
        if (notNow != null) {
            return notNow;
        }
        TryLockRequest request = TryLockRequest.newBuilder()
                .setName(name)
                .setLeaseId(lease.id())
                .setMetadata(bytes(metadata))
                .setRequestId(nextAcquireRequest())
                .setMode(mode.wire())
                .build();
        return unary(LockServiceGrpc.getTryLockMethod(), request, answers).thenApply(response -> {
            if (!response.getAcquired()) {
                return Optional.empty();
            }
            return Optional.of(granted(response.getKey().isEmpty() ? name : response.getKey(), response.getFencingToken(), lease, mode));
        });
    }

    /**
     * Watches lock {@code key}: every grant (a PUT naming the new holder, whose revision is its
     * fencing token) and every release or expiry with nobody waiting (a DELETE), from
     * {@code startRevision} on, delivered to {@code listener}.
     *
     * <h4>No gap, no duplicate</h4>
     * The listener sees every change of the key with a revision at or after
     * {@code startRevision}, each exactly once, in strictly increasing revision order; calls for
     * one watch never overlap. This holds across member failures: when the stream breaks (the
     * member died, stopped serving, is shutting down, or dropped the watch because it fell
     * behind) the watch is created again on the next endpoint at once, then with a jittered
     * backoff doubling to 250 ms, starting at the revision after the last one delivered; events a
     * lagging member sends again, or older ones, are dropped. Unreachable members never end a
     * watch; it keeps reconnecting until closed. A member that is cut off without breaking the
     * connection is noticed by the default channels' keep-alive pings, which break it.
     *
     * <p>With {@code startRevision} 0 the watch starts after the serving member's revision when it
     * creates the watch ({@link Watch#started()} completes with it): every change after that is
     * delivered, none before.
     *
     * <h4>Waiting for a change without missing one</h4>
     * Read the state together with the revision it reflects, then watch from the revision after:
     * nothing that happens between the read and the watch is lost.
     * <pre>{@code
     * // Learn when a lock this process holds is taken from it (lease expired, revoked):
     * // the first change after its own grant is the one that ends the hold.
     * client.watch(lock.key(), lock.fencingToken() + 1, listener);
     *
     * // Or: read at revision R, then watch from R + 1.
     * long r = client.status().getRevision();   // a read barrier: includes every acknowledged write
     * ... read what you depend on ...
     * client.watch("jobs/42", r + 1, listener);
     * }</pre>
     *
     * <h4>Ending</h4>
     * A start revision (or the revision a reconnect has to continue from) older than what the
     * server retains ends the watch with {@link WatchListener#onCompacted}: events are lost, so
     * read the state again and watch anew from after it. A refusal (for example
     * {@link InvalidArgumentException}) and {@link #close()} of this client end it with
     * {@link WatchListener#onError}. {@link Watch#close()} ends it silently.
     *
     * @param key           the lock's key (its name); not empty
     * @param startRevision the first revision to deliver; 0 = from the next change
     * @param listener      receives the events and the end; see {@link WatchListener}
     * @return the open watch; close it to stop
     * @throws IllegalArgumentException if {@code key} is null or empty, or {@code startRevision}
     *                                  is negative; nothing is sent then
     * @throws IllegalStateException    if this client is closed
     */
    public Watch watch(String key, long startRevision, WatchListener listener) {
        if (key == null || key.isEmpty()) {
            throw new IllegalArgumentException("key must not be null or empty (watchPrefix with \"\" watches every key)");
        }
        return openWatch(key, false, startRevision, listener);
    }

    /**
     * Watches every lock key that starts with {@code prefix}; as {@link #watch}, with the same
     * guarantees, over all those keys together (revisions increase across keys).
     *
     * @param prefix        the keys' common start; empty watches every key
     * @param startRevision the first revision to deliver; 0 = from the next change
     * @throws IllegalArgumentException if {@code prefix} is null or {@code startRevision} is
     *                                  negative; nothing is sent then
     * @throws IllegalStateException    if this client is closed
     */
    public Watch watchPrefix(String prefix, long startRevision, WatchListener listener) {
        if (prefix == null) {
            throw new IllegalArgumentException("prefix must not be null (\"\" watches every key)");
        }
        return openWatch(prefix, true, startRevision, listener);
    }

    /**
     * Watches every name that {@code pattern} matches, of every kind at once (locks, semaphores,
     * elections, barriers, latches, counters, keys, lists: {@link WatchEvent#kind()} tells them
     * apart); as {@link #watch}, with the same guarantees. A pattern is dot-separated tokens:
     * {@code *} matches one whole token, a last {@code >} the one or more tokens after it
     * ({@code "jobs.*.done"}, {@code "app.>"}), as signals' patterns.
     *
     * @throws IllegalArgumentException if {@code pattern} is null or empty, or {@code startRevision}
     *                                  is negative; a malformed pattern ends the watch with
     *                                  {@link InvalidArgumentException}
     * @throws IllegalStateException    if this client is closed
     */
    public Watch watchPattern(String pattern, long startRevision, WatchListener listener) {
        if (pattern == null || pattern.isEmpty()) {
            throw new IllegalArgumentException("pattern must not be null or empty (\">\" matches every name)");
        }
        return openWatch(pattern, false, true, startRevision, listener);
    }

    private Watch openWatch(String key, boolean prefix, long startRevision, WatchListener listener) {
        return openWatch(key, prefix, false, startRevision, listener);
    }

    private Watch openWatch(String key, boolean prefix, boolean pattern, long startRevision, WatchListener listener) {
        if (startRevision < 0) {
            throw new IllegalArgumentException("startRevision must not be negative (0 = from the next change), got " + startRevision);
        }
        Objects.requireNonNull(listener, "listener");
        ensureOpen();
        Watch watch = new Watch(new WatchStream(key, prefix, pattern, startRevision, listener, endpoints, clock, scheduler));
        openWatches.add(watch);
        watch.ended().whenComplete((ignored, failure) -> openWatches.remove(watch));
        if (closed) {
            watch.clientClosed(); // close() ran while this watch was being made, and may have missed it
        } else {
            watch.start();
        }
        return watch;
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
                ClusterServiceGrpc.getMemberAddMethod(), request, requestTimeout, false, null);
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
                ClusterServiceGrpc.getMemberRemoveMethod(), request, requestTimeout, false, null);
        return afterRetry(call, NotFoundException.class,
                members -> members.stream().noneMatch(m -> m.getName().equals(name)));
    }

    /**
     * Grants a lease that this client does <em>not</em> keep alive: it ends {@code ttl} after the
     * grant unless someone renews it ({@code LeaseKeepAlive}) or revokes it. For tools and scripts
     * that hand the id to another process; to hold locks from Java, use {@link #grantLease}.
     *
     * @return the new lease's id
     * @throws InvalidArgumentException if the server refuses the TTL or client id
     * @throws UnavailableException     if no member could grant it
     */
    public long grantDetachedLease(Duration ttl, String clientId) {
        LeaseGrantRequest request = grantRequest(ttl, clientId);
        return Futures.await(unary(LockServiceGrpc.getLeaseGrantMethod(), request), "a lease grant").getId();
    }

    /**
     * Revokes lease {@code id}, whoever holds it: its locks pass to their next waiters and its
     * waits end. Retried on another member after {@code UNAVAILABLE}; a retry that finds the
     * lease already gone reports {@link LeaseNotFoundException} like any revoke of an unknown lease.
     *
     * @throws LeaseNotFoundException if no such lease exists (never granted, expired or revoked)
     * @throws UnavailableException   if no member could revoke it
     */
    public void revokeLease(long id) {
        ensureOpen();
        Futures.await(revokeOnServer(id), "revoking lease " + id);
    }

    /**
     * Lease {@code id} as the serving member sees it, read linearizably: the remaining TTL on that
     * member's clock ({@code ttl_ms}; -1 when the lease is gone), the granted TTL, the client id,
     * and the keys it holds ({@code keys}) and waits for ({@code waiting}).
     *
     * @throws UnavailableException if no member could answer (also while a member that just
     *                              restarted has no deadline for the lease yet)
     */
    public LeaseTimeToLiveResponse leaseTimeToLive(long id) {
        ensureOpen();
        return Futures.await(unary(LockServiceGrpc.getLeaseTimeToLiveMethod(),
                LeaseTimeToLiveRequest.newBuilder().setId(id).setKeys(true).build()), "the TTL of lease " + id);
    }

    /**
     * Every live lease in id order, read linearizably page by page (each page is consistent; a
     * lease granted or ended between pages may be missing or listed).
     *
     * @throws UnavailableException if no member could answer
     */
    public List<LeaseSummary> leases() {
        ensureOpen();
        List<LeaseSummary> all = new java.util.ArrayList<>();
        long after = 0;
        while (true) {
            LeaseListResponse page = Futures.await(unary(LockServiceGrpc.getLeaseListMethod(),
                    LeaseListRequest.newBuilder().setAfterId(after).build()), "the lease list");
            all.addAll(page.getLeasesList());
            if (!page.getMore() || page.getLeasesCount() == 0) {
                return all;
            }
            after = page.getLeases(page.getLeasesCount() - 1).getId();
        }
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
        openWatches.forEach(Watch::clientClosed);
        openSubscriptions.forEach(Subscription::clientClosed);
        if (sessions != null) {
            sessions.close();
        }
        endpoints.close();
        if (callbacks != null) {
            callbacks.shutdown();
        }
        if (keepAliveTransport != null) {
            keepAliveTransport.close();
        }
        if (ownsScheduler) {
            scheduler.shutdownNow();
        }
    }

    /** Unlock on a member; {@code answers} as for {@link #acquireAsync(String, Lease, Duration, byte[], Executor)}. */
    CompletableFuture<Void> unlockOnServer(String key, long leaseId, long fencingToken, Executor answers) {
        UnlockRequest request = UnlockRequest.newBuilder()
                .setKey(key).setLeaseId(leaseId).setFencingToken(fencingToken).build();
        return unary(LockServiceGrpc.getUnlockMethod(), request, answers).thenApply(response -> null);
    }

    CompletableFuture<Void> downgradeOnServer(String key, long leaseId, long fencingToken, Executor answers) {
        DowngradeRequest request = DowngradeRequest.newBuilder().setName(key).setLeaseId(leaseId).setFencingToken(fencingToken).build();
        return unary(LockServiceGrpc.getDowngradeMethod(), request, answers).thenApply(response -> null);
    }

    CompletableFuture<Void> revokeOnServer(long leaseId) {
        LeaseRevokeRequest request = LeaseRevokeRequest.newBuilder().setId(leaseId).build();
        return unary(LockServiceGrpc.getLeaseRevokeMethod(), request).thenApply(response -> null);
    }

    MonotonicClock clock() {
        return clock;
    }

    Endpoints endpoints() {
        return endpoints;
    }

    Duration requestTimeout() {
        return requestTimeout;
    }

    /** A unary call with failover, for the other primitives' classes. */
    <Req, Resp> CompletableFuture<Resp> call(MethodDescriptor<Req, Resp> method, Req request, Executor answers) {
        return unary(method, request, answers);
    }

    ScheduledExecutorService scheduler() {
        return scheduler;
    }

    private static LockDescription describedLock(LockState lock, long revision) {
        List<LockDescription.Waiter> waiters = lock.getWaitersList().stream()
                .map(w -> new LockDescription.Waiter(w.getLeaseId(), w.getClientId(), w.getJoinedRevision(), LockMode.of(w.getMode()))).toList();
        Optional<Duration> remaining = lock.getHeld() && lock.getHolderTtlRemainingMs() >= 0
                ? Optional.of(Duration.ofMillis(lock.getHolderTtlRemainingMs())) : Optional.empty();
        List<LockDescription.Holder> holders = lock.getHoldersList().stream()
                .map(h -> new LockDescription.Holder(h.getLeaseId(), h.getClientId(), h.getFencingToken(), h.getMetadata().toByteArray(),
                        h.getTtlRemainingMs() >= 0 ? Optional.of(Duration.ofMillis(h.getTtlRemainingMs())) : Optional.empty()))
                .toList();
        if (holders.isEmpty() && lock.getHeld()) {
            // A member of the previous release names only the one holder.
            holders = List.of(new LockDescription.Holder(lock.getLeaseId(), lock.getHolder(), lock.getFencingToken(),
                    lock.getMetadata().toByteArray(), remaining));
        }
        return new LockDescription(lock.getKey(), lock.getHeld(), lock.getHolder(), lock.getLeaseId(), lock.getFencingToken(),
                lock.getMetadata().toByteArray(), lock.getCreateRevision(), lock.getVersion(), remaining, waiters, revision,
                LockMode.of(lock.getMode()), holders);
    }

    /** Lock names: not blank, at most {@value #MAX_NAME_BYTES} bytes of UTF-8 (the server's limit). */
    static void checkName(String name) {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("lock name must not be blank, got " + (name == null ? "null" : "'" + name + "'"));
        }
        int bytes = name.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > MAX_NAME_BYTES) {
            throw new IllegalArgumentException("lock name is " + bytes + " bytes of UTF-8, over the limit of " + MAX_NAME_BYTES);
        }
    }

    private static void checkMetadata(byte[] metadata) {
        if (metadata != null && metadata.length > MAX_METADATA_BYTES) {
            throw new IllegalArgumentException("lock metadata is " + metadata.length + " bytes, over the limit of " + MAX_METADATA_BYTES);
        }
    }

    private static void checkTtl(Duration ttl) {
        Objects.requireNonNull(ttl, "ttl");
        if (ttl.compareTo(Lease.MIN_TTL) < 0) {
            throw new IllegalArgumentException("lease TTL must be at least " + Lease.MIN_TTL.toMillis() + " ms (a cluster's "
                    + "minimum is higher: 10 election timeouts), got " + ttl.toMillis() + " ms");
        }
        if (ttl.compareTo(Lease.MAX_TTL) > 0) {
            throw new IllegalArgumentException("lease TTL must be at most 24 h, got " + ttl);
        }
    }

    private static void checkClientId(String clientId) {
        Objects.requireNonNull(clientId, "clientId");
        int bytes = clientId.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > MAX_CLIENT_ID_BYTES) {
            throw new IllegalArgumentException("client id is " + bytes + " bytes of UTF-8, over the limit of " + MAX_CLIENT_ID_BYTES);
        }
    }

    private static String defaultClientId() {
        String host;
        try {
            host = java.net.InetAddress.getLocalHost().getHostName();
        } catch (java.io.IOException e) {
            host = "localhost";
        }
        String id = host + "-" + ProcessHandle.current().pid();
        return id.length() > 200 ? id.substring(0, 200) : id;
    }

    private <Req, Resp> CompletableFuture<Resp> unary(MethodDescriptor<Req, Resp> method, Req request) {
        return unary(method, request, null);
    }

    private <Req, Resp> CompletableFuture<Resp> unary(MethodDescriptor<Req, Resp> method, Req request, Executor answers) {
        return FailoverCall.unary(endpoints, clock, scheduler, method, request, requestTimeout, true, answers).result();
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
        return startKeepingAlive(granted, clientId, sentAt, true);
    }

    /** The lease granted by {@code granted}; kept alive when {@code renews}, else trusted until 5/6 of its TTL. */
    private Lease startKeepingAlive(LeaseGrantResponse granted, String clientId, long sentAt, boolean renews) {
        long ttlMs = granted.getTtlMs() > 0 ? granted.getTtlMs() : TimeUnit.SECONDS.toMillis(granted.getTtl());
        if (ttlMs <= 0 || granted.getId() == 0) {
            throw new TenureException("the server answered a lease grant without an id or TTL: " + granted);
        }
        Duration ttl = Duration.ofMillis(ttlMs);
        LeaseKeeper keeper = new LeaseKeeper(granted.getId(), ttl, sentAt, endpoints, keepAliveStreams, clock, leaseTimers, renews);
        Lease lease = new Lease(this, granted.getId(), ttl, clientId, keeper);
        openLeases.add(lease);
        keeper.addStateListener(state -> {
            for (ConnectionStateListener listener : stateListeners) {
                listener.stateChanged(lease, state);
            }
        });
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
    private LockHandle granted(String key, long fencingToken, Lease lease, LockMode mode) {
        LockHandle handle = new LockHandle(key, fencingToken, lease, mode);
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

    /**
     * A grant with a lease id chosen here, so that a retry on another member returns the same
     * lease; the TTL in milliseconds and, for servers that read only seconds, rounded up.
     */
    private LeaseGrantRequest grantRequest(Duration ttl, String clientId) {
        checkTtl(ttl);
        checkClientId(clientId);
        ensureOpen();
        long ttlMs = FailoverCall.ceilMillis(ttl);
        return LeaseGrantRequest.newBuilder()
                .setId(newLeaseId())
                .setTtlMs(ttlMs)
                .setTtl(Math.max(1, (ttlMs + 999) / 1000))
                .setClientId(clientId)
                .build();
    }

    private static long newLeaseId() {
        long id;
        do {
            id = LEASE_IDS.nextLong() & Long.MAX_VALUE;
        } while (id == 0);
        return id;
    }

    /**
     * Runs {@code call} with {@code lease}, or, when it is null, with the client's session lease
     * once that is granted. Cancelling the result before then starts nothing; what {@code call}
     * gets after the result was cancelled goes to {@code undo} (a grant nobody will use is given back).
     */
    <T> CompletableFuture<T> withLease(Lease lease, Function<Lease, CompletableFuture<T>> call, Consumer<T> undo) {
        if (lease != null) {
            return call.apply(lease);
        }
        return Futures.thenCompose(sessionAsync(), call, undo);
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
        /** Null: gRPC channels made with {@link #credentials}, and the keep-alive streams on connections of their own. */
        private Function<String, ManagedChannel> channelFactory;
        private io.grpc.ChannelCredentials credentials = io.grpc.InsecureChannelCredentials.create();
        private String token;
        private String clientId;
        private Duration sessionTtl = DEFAULT_SESSION_TTL;
        private boolean sessionStream = true;
        private Executor callbacks;

        private Builder() {
        }

        /**
         * Where answers that arrive in a session stream complete the futures of asynchronous
         * calls (default: daemon threads of the client's own, as gRPC's channel executor is for
         * unary calls). Tests whose channels run everything on the calling thread pass a direct one.
         */
        Builder callbacks(Executor callbacks) {
            this.callbacks = Objects.requireNonNull(callbacks, "callbacks");
            return this;
        }

        /**
         * Whether the calls of every kind (lock acquires, tries, releases, downgrades and cancels;
         * lease grants and revokes; semaphore, election, barrier, double barrier and latch calls)
         * travel in one session stream per member, many to a message (default), or as one unary
         * call each. Either way they are retried, failed over and timed out alike. Keep-alives have
         * their own stream, and reads (describe, list) and watches are unary calls. Members of
         * releases without the stream, or that do not carry a kind of call in it, are spoken to
         * with unary calls for it either way.
         */
        public Builder sessionStream(boolean sessionStream) {
            this.sessionStream = sessionStream;
            return this;
        }

        /** The holder name others see for this client's leases (default: host name and process id). */
        public Builder clientId(String clientId) {
            checkClientId(clientId);
            this.clientId = clientId;
            return this;
        }

        /** The TTL of the {@linkplain TenureClient#session() session lease} (default 30 s). */
        public Builder sessionTtl(Duration sessionTtl) {
            checkTtl(sessionTtl);
            this.sessionTtl = sessionTtl;
            return this;
        }

        /** {@code host:port} of one or more members, tried in this order. */
        public Builder endpoints(List<String> endpoints) {
            Objects.requireNonNull(endpoints, "endpoints");
            for (int i = 0; i < endpoints.size(); i++) {
                if (endpoints.get(i) == null) {
                    throw new IllegalArgumentException("endpoint " + (i + 1) + " of " + endpoints.size() + " is null; each must be host:port");
                }
            }
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
         * TLS to members whose certificate a CA of {@code trustedCaFile} signed (PEM), or one the
         * JVM's default trust store trusts when it is null; the member's name in the endpoint
         * (host name or IP address) must be one its certificate names. TLS 1.2 or later.
         *
         * @throws IllegalArgumentException when the file cannot be read or holds no certificate
         */
        public Builder tls(java.nio.file.Path trustedCaFile) {
            return tls(trustedCaFile, null, null);
        }

        /**
         * Mutual TLS: as {@link #tls(java.nio.file.Path)}, and this client presents the
         * certificate of {@code certFile} (PEM, with any intermediates) with its private key
         * {@code keyFile} (PEM, PKCS#8, not encrypted), for members started with
         * {@code --client-cert-auth}; the certificate names the principal.
         *
         * @throws IllegalArgumentException when a file cannot be read or is not what it should be
         */
        public Builder tls(java.nio.file.Path trustedCaFile, java.nio.file.Path certFile, java.nio.file.Path keyFile) {
            if ((certFile == null) != (keyFile == null)) {
                throw new IllegalArgumentException("a client certificate needs its key and the key its certificate: give both or neither");
            }
            io.grpc.TlsChannelCredentials.Builder tls = io.grpc.TlsChannelCredentials.newBuilder();
            try {
                if (trustedCaFile != null) {
                    tls.trustManager(trustedCaFile.toFile());
                }
                if (certFile != null) {
                    tls.keyManager(certFile.toFile(), keyFile.toFile());
                }
            } catch (java.io.IOException | RuntimeException e) {
                throw new IllegalArgumentException("TLS files (CA " + trustedCaFile + ", certificate " + certFile + ", key " + keyFile
                        + ") cannot be used: " + e.getMessage(), e);
            }
            this.credentials = tls.build();
            return this;
        }

        /**
         * Shows {@code token} (from {@link TenureAuth#authenticate}, or {@code tenure auth token})
         * as {@code authorization: Bearer <token>} on every call, for members with authentication
         * on. Over plaintext a token can be read off the wire: use it with {@link #tls}.
         */
        public Builder token(String token) {
            if (token == null || token.isBlank() || token.chars().anyMatch(c -> c < 0x21 || c > 0x7e)) {
                throw new IllegalArgumentException("a token is printable ASCII without spaces, as `tenure auth token` prints it");
            }
            this.token = token;
            return this;
        }

        /**
         * Makes the channel for each endpoint string (default: gRPC to {@code host:port}, plaintext
         * or as {@link #tls} says); for in-process servers in tests, or channels of your own.
         */
        public Builder channelFactory(Function<String, ManagedChannel> channelFactory) {
            this.channelFactory = Objects.requireNonNull(channelFactory, "channelFactory");
            return this;
        }

        /** @throws IllegalArgumentException if no endpoint was given or one is malformed */
        public TenureClient build() {
            if (clientId == null) {
                clientId = defaultClientId();
            }
            return new TenureClient(this);
        }
    }
}
