package io.tenure.server;

import io.grpc.ForwardingServerCall;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.tenure.core.TenureState;
import io.tenure.core.barrier.BarrierTable;
import io.tenure.core.barrier.DoubleBarrierTable;
import io.tenure.core.election.ElectionTable;
import io.tenure.core.lock.LockTable;
import io.tenure.core.semaphore.SemaphoreTable;
import io.tenure.server.grpc.ClientGuard;
import io.tenure.server.grpc.GrpcClusterService;
import io.tenure.server.grpc.GrpcLockService;
import io.tenure.server.grpc.CallThreads;
import io.tenure.server.grpc.GrpcBarrierService;
import io.tenure.server.grpc.GrpcDoubleBarrierService;
import io.tenure.server.grpc.GrpcElectionService;
import io.tenure.server.grpc.GrpcSemaphoreService;
import io.tenure.server.http.HttpFront;
import io.tenure.server.lease.LeaseKeeper;
import io.tenure.server.metrics.ServerMetrics;
import io.tenure.server.lock.Locks;
import io.tenure.server.barrier.Barriers;
import io.tenure.server.barrier.DoubleBarriers;
import io.tenure.core.counter.CounterTable;
import io.tenure.core.latch.LatchTable;
import io.tenure.core.list.ListTable;
import io.tenure.server.counter.Counters;
import io.tenure.core.kv.KvTable;
import io.tenure.server.grpc.GrpcKvService;
import io.tenure.server.kv.KeyExpiry;
import io.tenure.server.kv.KeyValues;
import io.tenure.server.grpc.GrpcCounterService;
import io.tenure.server.grpc.GrpcLatchService;
import io.tenure.server.grpc.GrpcListService;
import io.tenure.server.grpc.GrpcSignalService;
import io.tenure.server.list.Lists;
import io.tenure.server.signal.Signals;
import io.tenure.core.signal.SignalTable;
import io.tenure.server.latch.Latches;
import io.tenure.server.election.Elections;
import io.tenure.server.semaphore.Semaphores;
import io.tenure.server.raft.AuditLog;
import io.tenure.server.raft.JRaftRaft;
import io.tenure.server.raft.Proposer;
import io.tenure.server.raft.Raft;
import io.tenure.server.raft.RatisRaft;
import io.tenure.server.raft.RatisStateMachine;
import io.tenure.server.raft.TenureStateMachine;
import io.tenure.server.watch.WatchHub;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

/**
 * One running Tenure member: the Raft server with its state machine, the lease keeper, and the
 * gRPC front end. Embeddable: {@code try (var server = TenureServer.start(config)) { ... }}.
 *
 * <p>Every acknowledged write is on disk first: Ratis appends and fsyncs the log entry before
 * it commits (its unsafe and asynchronous flush options stay off), and a single member commits
 * only what it has itself fsynced.
 */
public final class TenureServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(TenureServer.class);
    private final ServerConfig config;
    private final Raft raft;
    private final Member member;
    private final Proposer proposer;
    /** The safety suite's audit log (ServerConfig.auditLog), or null: off. Closed after the Raft server. */
    private final AuditLog audit;
    private final LeaseKeeper leases;
    private final IdleSweeper idle;
    private final KeyExpiry keyExpiry;
    private final WatchHub watches;
    private final ServerMetrics metrics;
    private final ScheduledExecutorService timer;
    private final ExecutorService delivery;
    /** Membership changes block until committed; they get their own thread. */
    private final ExecutorService admin = Executors.newSingleThreadExecutor(daemon("tenure-admin"));
    /** Runs the client calls that may wait (reads through the log, watches, membership changes); see CallThreads. */
    private final ExecutorService calls = Executors.newCachedThreadPool(daemon("tenure-grpc-call"));
    private final CountDownLatch terminated = new CountDownLatch(1);
    private final AtomicBoolean closing = new AtomicBoolean();
    private volatile String failure;
    private volatile Server grpc;
    private volatile HttpFront http;
    private volatile io.tenure.server.text.TextFront text;
    /** Who each call is, from its bearer token or client certificate (every front end asks it). */
    private final io.tenure.server.security.Gate authGate;
    /** Who did what on this member (--audit-file); {@link io.tenure.server.security.AuditTrail#OFF} by default. Closed last. */
    private final io.tenure.server.security.AuditTrail auditTrail;
    /** Users, roles, tokens and the authentication switch. */
    private final io.tenure.server.security.Accounts accounts;
    /** The certificate of the client, HTTP and text ports, re-read when its files change; null: plain TCP. */
    private final io.tenure.server.security.TlsKeys tls;
    /** The text port's own certificate when only dflockd's {@code --tls-cert} gave one (a ServerConfig built without {@code tls}). */
    private final io.tenure.server.security.TlsKeys textTls;
    /** Refuses new client calls while the member drains, and tracks the admitted ones. */
    private final CallGate gate;
    private final AtomicBoolean shutdownStarted = new AtomicBoolean();
    /** Completes with whether the graceful shutdown stopped the member cleanly. */
    private final CompletableFuture<Boolean> shutdownDone = new CompletableFuture<>();
    /** The step the graceful shutdown is in, named when it runs out of time. */
    private volatile String shutdownStep = "not started";

    private TenureServer(ServerConfig config, Raft raft, TenureStateMachine stateMachine, AuditLog audit) {
        this.config = config;
        this.audit = audit;
        this.raft = raft;
        this.tls = config.tls() == null ? null : io.tenure.server.security.TlsKeys.load(config.tls());
        this.textTls = tls != null || config.text().tlsCert() == null ? tls
                : io.tenure.server.security.TlsKeys.load(io.tenure.server.security.ClientTls.of(config.text().tlsCert(), config.text().tlsKey()));
        this.timer = new ScheduledThreadPoolExecutor(1, daemon("tenure-timer"));
        this.delivery = Executors.newSingleThreadExecutor(daemon("tenure-watch"));
        this.proposer = new Proposer(raft, stateMachine::whenApplied);
        this.metrics = new ServerMetrics();
        stateMachine.setMetrics(metrics);
        proposer.onCommitLatency(metrics::committed);
        Admission admission = new Admission(proposer, metrics, config.limits().shedAfter(), System::nanoTime);
        this.auditTrail = io.tenure.server.security.AuditTrail.open(config.auditTrail(), config.memberName());
        io.tenure.server.security.Permissions permissions = new io.tenure.server.security.Permissions(stateMachine, auditTrail);
        this.leases = new LeaseKeeper(proposer, stateMachine, permissions, admission, timer, System::nanoTime, config.minTtl(), metrics,
                config.limits().maxLeasesPerClient(), config.limits().maxLeasesPerUser());
        this.idle = new IdleSweeper(proposer, stateMachine, leases::leading, System::nanoTime, config.limits().idleTime(), timer);
        Waits waits = new Waits();
        Locks locks = new Locks(proposer, stateMachine, permissions, waits, admission, timer, metrics, config.limits());
        Semaphores semaphores = new Semaphores(proposer, stateMachine, permissions, waits, admission, timer, metrics, config.limits());
        io.tenure.server.scope.Scopes scopes = new io.tenure.server.scope.Scopes(proposer, stateMachine, permissions, waits, admission, timer,
                metrics, config.limits());
        Elections elections = new Elections(proposer, stateMachine, permissions, waits, admission, timer, metrics, config.limits());
        Barriers barriers = new Barriers(proposer, stateMachine, permissions, waits, admission, timer, metrics, config.limits());
        DoubleBarriers doubleBarriers = new DoubleBarriers(proposer, stateMachine, permissions, waits, admission, timer, metrics, config.limits());
        Latches latches = new Latches(proposer, stateMachine, permissions, waits, admission, timer, metrics, config.limits());
        Counters counters = new Counters(proposer, stateMachine, permissions, admission, metrics);
        Lists lists = new Lists(proposer, stateMachine, permissions, waits, admission, timer, metrics, config.limits());
        this.keyExpiry = new KeyExpiry(proposer, stateMachine, leases::leading, System::nanoTime, metrics, timer);
        KeyValues keyValues = new KeyValues(proposer, stateMachine, permissions, admission, metrics, keyExpiry);
        this.watches = new WatchHub(stateMachine, permissions, delivery);
        Signals signals = new Signals(proposer, permissions, admission, metrics, delivery);
        this.member = new Member(config, raft, stateMachine, proposer, admission, leases, waits, locks, semaphores, scopes, elections, barriers, doubleBarriers, latches, counters, lists, keyValues, signals, watches, metrics, permissions,
                MemberInfo.idOf(config.clusterName()), this::raftStopped, this::logFailed);
        stateMachine.setListener(member);
        this.authGate = new io.tenure.server.security.Gate(stateMachine, metrics, System::currentTimeMillis, proposer::readBarrier, auditTrail);
        this.accounts = new io.tenure.server.security.Accounts(proposer, stateMachine, authGate, admin, System::currentTimeMillis);
        metrics.barrierGauges(() -> stateMachine.read(s -> s.primitive(BarrierTable.class).barrierCount()),
                () -> stateMachine.read(s -> s.primitive(BarrierTable.class).waiting()));
        metrics.doubleBarrierGauges(() -> stateMachine.read(s -> s.primitive(DoubleBarrierTable.class).barrierCount()),
                () -> stateMachine.read(s -> s.primitive(DoubleBarrierTable.class).inside()),
                () -> stateMachine.read(s -> s.primitive(DoubleBarrierTable.class).waiting()));
        metrics.listGauges(() -> stateMachine.read(s -> s.primitive(ListTable.class).listCount()),
                () -> stateMachine.read(s -> s.primitive(ListTable.class).itemCount()),
                () -> stateMachine.read(s -> s.primitive(ListTable.class).waiting()));
        metrics.kvGauges(() -> stateMachine.read(s -> s.primitive(KvTable.class).keyCount()), keyExpiry::known);
        metrics.signalGauges(() -> stateMachine.read(s -> s.primitive(SignalTable.class).listenerCount()), signals::localCount);
        metrics.counterGauges(() -> stateMachine.read(s -> s.primitive(CounterTable.class).counterCount()));
        metrics.latchGauges(() -> stateMachine.read(s -> s.primitive(LatchTable.class).latchCount()),
                () -> stateMachine.read(s -> s.primitive(LatchTable.class).waiting()));
        metrics.electionGauges(() -> stateMachine.read(s -> s.primitive(ElectionTable.class).electionCount()),
                () -> stateMachine.read(s -> s.primitive(ElectionTable.class).candidateCount()));
        metrics.readLockGauges(() -> stateMachine.read(s -> s.primitive(LockTable.class).readLockCount()),
                () -> stateMachine.read(s -> s.primitive(LockTable.class).readHolderCount()));
        metrics.scopeGauges(() -> stateMachine.read(s -> s.primitive(io.tenure.core.scope.ScopeTable.class).holdCount()),
                () -> stateMachine.read(s -> s.primitive(io.tenure.core.scope.ScopeTable.class).heldPartCount()),
                () -> stateMachine.read(s -> s.primitive(io.tenure.core.scope.ScopeTable.class).waiterCount()));
        metrics.semaphoreGauges(() -> stateMachine.read(s -> s.primitive(SemaphoreTable.class).heldCount()),
                () -> stateMachine.read(s -> s.primitive(SemaphoreTable.class).permitsHeld()),
                () -> stateMachine.read(s -> s.primitive(SemaphoreTable.class).waiterCount()));
        metrics.gauges(() -> stateMachine.read(s -> s.primitive(LockTable.class).lockCount()), () -> stateMachine.read(TenureState::leaseCount),
                () -> stateMachine.read(s -> s.primitive(LockTable.class).waiterCount()), watches::watcherCount, member::term,
                member::commitIndex, stateMachine::appliedIndex);
        metrics.overloadGauges(lane -> proposer.waiting(lane(lane)),
                lane -> proposer.oldestWaitNanos(lane(lane), System.nanoTime()) / 1e9, proposer::entriesInFlight,
                () -> Math.max(0, member.commitIndex() - stateMachine.appliedIndex()), waits::count);
        this.gate = new CallGate(member::draining, shuttingDownStatus(config.memberName()));
    }

    private static Proposer.Lane lane(String name) {
        return name.equals("renewal") ? Proposer.Lane.RENEWAL : Proposer.Lane.WORK;
    }

    /** How long a joining member waits for each running member's peer port to tell its Raft engine. */
    private static final Duration ENGINE_PROBE_TIMEOUT = Duration.ofSeconds(2);

    /**
     * The Raft engine this member runs: the one {@code --raft-engine} names; else ({@link RaftEngine#AUTO})
     * the one its data directory was made with; else, for a new directory, SOFAJRaft for a member
     * of a cluster of several (its several times Ratis's rate there, docs/benchmarks.md) or with
     * peer TLS, the engine the running members speak for a member that joins, and Ratis for a
     * member alone (level with SOFAJRaft there, and quicker to start).
     *
     * @throws IOException when a joining member cannot reach any running member to ask
     */
    static RaftEngine engineFor(ServerConfig config) throws IOException {
        if (config.raftEngine() != RaftEngine.AUTO) {
            return config.raftEngine();
        }
        RaftEngine recorded = DataDirectory.recordedEngine(config.dataDir());
        if (recorded != null) {
            return recorded;
        }
        if (config.peerTls() != null) {
            return RaftEngine.JRAFT;
        }
        if (config.join()) {
            java.util.List<String> others = config.peers().entrySet().stream()
                    .filter(e -> !e.getKey().equals(config.memberName())).map(java.util.Map.Entry::getValue).toList();
            return io.tenure.server.raft.EngineProbe.ofRunningMembers(others, ENGINE_PROBE_TIMEOUT);
        }
        return config.peers().size() > 1 ? RaftEngine.JRAFT : RaftEngine.RATIS;
    }

    /** The Raft engine this member runs (never {@link RaftEngine#AUTO}). */
    public RaftEngine raftEngine() {
        return config.raftEngine();
    }

    /**
     * Starts a member and returns once it serves clients. A single member first becomes leader;
     * a member of a cluster serves at once and answers UNAVAILABLE until it knows a leader.
     *
     * @throws IOException           when the data directory is unusable (another member's or
     *                               cluster's, damaged, a corrupt snapshot or log) or a port cannot
     *                               be bound; the message says which
     * @throws IllegalArgumentException for an invalid configuration, naming the setting
     */
    public static TenureServer start(ServerConfig config) throws IOException {
        config.validate();
        config = config.withRaftEngine(engineFor(config)).validate();
        DataDirectory data = DataDirectory.open(config.dataDir(), config.clusterName(), config.memberName(),
                RatisRaft.groupUuid(config.clusterName()).toString(), config.raftEngine());
        if (config.peerPort() == 0) {
            config = config.withPeerPort(freePort(config.host()));
        }
        TenureStateMachine stateMachine = new TenureStateMachine(System::nanoTime, TenureState.DEFAULT_EVENT_LOG_CAPACITY);
        // Open before the Raft server starts, so that it sees the snapshot load and the log's replay.
        AuditLog audit = config.auditLog() == null ? null : AuditLog.open(config.auditLog(), config.memberName());
        stateMachine.setAuditLog(audit);
        Raft raft;
        try {
            raft = config.raftEngine() == RaftEngine.JRAFT
                    ? JRaftRaft.create(config, data.raftDir(), data.formatted(), stateMachine)
                    : RatisRaft.create(config, data.raftDir(), data.formatted(), new RatisStateMachine(stateMachine));
        } catch (IOException | RuntimeException e) {
            if (audit != null) {
                audit.close();
            }
            throw e;
        }
        TenureServer server = new TenureServer(config, raft, stateMachine, audit);
        // The HTTP front starts beside Raft (it answers /readyz 503 until the member serves): on
        // two cores, overlapping the two was about a fifth of a fresh member's start-up.
        ServerConfig settled = config;
        CompletableFuture<HttpFront> http = CompletableFuture.supplyAsync(() -> {
            try {
                return HttpFront.start(server.member, settled, server.tls, server.accounts);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }, runnable -> {
            Thread starter = new Thread(runnable, "tenure-http-start");
            starter.setDaemon(true);
            starter.start();
        });
        try {
            raft.start();
        } catch (IOException | RuntimeException e) {
            closeWhenStarted(http);
            server.close();
            throw new IOException("cannot start member " + config.memberName() + " on data directory "
                    + config.dataDir().toAbsolutePath() + ": " + rootMessage(e), e);
        }
        data.markInitialized();
        try {
            // The client port opens while a member alone elects itself, as a member of a cluster's
            // does before it knows a leader; calls before the leader is known are refused as then.
            server.startGrpc();
            if (!config.clustered()) {
                server.awaitLeader();
            }
            server.http = http.join();
            if (config.text().enabled()) {
                server.text = io.tenure.server.text.TextFront.start(server.member, config.text(), config.host(),
                        config.limits().maxConnections(), server.textTls, server.authGate);
            }
        } catch (CompletionException e) {
            server.close();
            throw e.getCause() instanceof UncheckedIOException io ? io.getCause() : new IOException(rootMessage(e), e);
        } catch (IOException | RuntimeException e) {
            closeWhenStarted(http);
            server.close();
            throw e;
        }
        server.member.startAnnouncing(server.timer);
        if (server.textTls != null) {
            io.tenure.server.security.TlsKeys keys = server.textTls;
            server.timer.scheduleWithFixedDelay(keys::reloadIfChanged, 1, 1, TimeUnit.SECONDS);
        }
        if (config.insecure()) {
            String exposure = config.exposure();
            LOG.warn("event=insecure member={} reason=\"{}\"", config.memberName(), exposure != null ? exposure
                    : "--insecure is given (nothing is exposed beyond loopback today, but nothing would be refused either)");
        }
        // Ratis closes a division whose apply thread failed without telling the state machine;
        // a member must then exit (non-zero, so a supervisor restarts it), not linger half-alive.
        server.timer.scheduleWithFixedDelay(() -> {
            if (!server.member.alive()) {
                server.fail("the Raft server stopped (see the errors logged above)");
            }
        }, 1, 1, TimeUnit.SECONDS);
        LOG.info("event=serving member={} client={}:{} http={}:{} text={} peer={} members={} data_dir={}", config.memberName(), config.host(),
                server.clientPort(), config.host(), server.httpPort(), server.textPort() < 0 ? "off" : config.host() + ":" + server.textPort(),
                config.peerAddress(), raft.peers().size(), config.dataDir().toAbsolutePath());
        return server;
    }

    /** Closes the HTTP front that was starting beside Raft, once it has started (a start that failed left nothing open). */
    private static void closeWhenStarted(CompletableFuture<HttpFront> http) {
        try {
            http.join().close();
        } catch (CompletionException | CancellationException ignored) {
            // it failed to start: nothing to close
        }
    }

    private void awaitLeader() throws IOException {
        // A lone member elects itself within two election timeouts; far longer means it cannot
        // (Ratis keeps retrying, for example on a log cut short behind its snapshot).
        Duration limit = Duration.ofMillis(Math.max(5_000, 10 * config.electionTimeout().toMillis()));
        long deadline = System.nanoTime() + limit.toNanos();
        // Ratis has no "became leader" future to wait on from outside; check at a short interval
        // until the member leads and has applied an entry of its term, with a deadline.
        while (!member.leaderReady() || !leases.leading()) {
            if (System.nanoTime() > deadline) {
                throw new IOException("cannot start member " + config.memberName() + " on data directory "
                        + config.dataDir().toAbsolutePath() + ": it did not become leader within " + limit.toSeconds()
                        + " s although it is the only member; its log may be damaged (see the errors logged above)");
            }
            if (failure != null) {
                throw new IOException("cannot start member " + config.memberName() + " on data directory " + config.dataDir().toAbsolutePath() + ": " + failure);
            }
            if (!member.alive()) {
                throw new IOException("cannot start member " + config.memberName() + " on data directory "
                        + config.dataDir().toAbsolutePath() + ": the Raft server failed while recovering its log"
                        + " (a damaged or cut-short log; see the log lines above)");
            }
            try {
                terminated.await(5, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while waiting for the member to lead", e);
            }
        }
    }

    private void startGrpc() throws IOException {
        ClientGuard guard = new ClientGuard(config.limits().maxConnections(), member.rateGuard());
        NettyServerBuilder builder = NettyServerBuilder.forAddress(new InetSocketAddress(config.host(), config.clientPort()));
        if (tls != null) {
            builder.sslContext(tls.grpcContext());
        }
        Server server = builder
                .addTransportFilter(guard)
                .intercept(guard)
                .addService(new GrpcLockService(member))
                .addService(new GrpcSemaphoreService(member))
                .addService(new io.tenure.server.grpc.GrpcScopeService(member))
                .addService(new GrpcElectionService(member))
                .addService(new GrpcBarrierService(member))
                .addService(new GrpcDoubleBarrierService(member))
                .addService(new GrpcLatchService(member))
                .addService(new GrpcCounterService(member))
                .addService(new GrpcListService(member))
                .addService(new GrpcSignalService(member))
                .addService(new GrpcKvService(member))
                .addService(new GrpcClusterService(member, admin, authGate))
                .addService(new io.tenure.server.grpc.GrpcAuthService(member, accounts))
                .intercept(new io.tenure.server.grpc.GrpcAuthentication(authGate, member.userRates()))
                .intercept(gate)
                .maxInboundMessageSize(4 << 20)
                // Every call starts on the transport thread (gRPC's method lookup runs there), and
                // only the calls that may wait move to an executor: with gRPC's default executor,
                // each call's lookup took a thread hand-off of its own.
                .directExecutor()
                .callExecutor(CallThreads.of(calls, GrpcLockService.NON_BLOCKING, GrpcSemaphoreService.NON_BLOCKING, io.tenure.server.grpc.GrpcScopeService.NON_BLOCKING,
                        GrpcElectionService.NON_BLOCKING, GrpcBarrierService.NON_BLOCKING,
                        GrpcDoubleBarrierService.NON_BLOCKING, GrpcLatchService.NON_BLOCKING, GrpcCounterService.NON_BLOCKING,
                        GrpcListService.NON_BLOCKING, GrpcKvService.NON_BLOCKING, GrpcSignalService.NON_BLOCKING))
                .permitKeepAliveTime(5, TimeUnit.SECONDS)
                .permitKeepAliveWithoutCalls(true)
                .build();
        try {
            server.start();
        } catch (IOException e) {
            throw new IOException("cannot listen for clients on " + config.host() + ":" + config.clientPort() + ": " + rootMessage(e), e);
        }
        grpc = server;
        member.setClientPort(server.getPort());
    }

    /** The bound client gRPC port (useful when the configured port was 0). */
    public int clientPort() {
        Server s = grpc;
        return s == null ? -1 : s.getPort();
    }

    /** The bound HTTP port (useful when the configured port was 0), or -1 before it serves. */
    public int httpPort() {
        HttpFront h = http;
        return h == null ? -1 : h.port();
    }

    /** The HTTP front end, or null before it serves: to look at it from the inside (the routes it serves). */
    public HttpFront httpFront() {
        return http;
    }

    /** The bound text (dflockd protocol) port (useful when the configured port was 0), or -1 when it is off or not yet serving. */
    public int textPort() {
        io.tenure.server.text.TextFront t = text;
        return t == null ? -1 : t.port();
    }

    /** The member's Prometheus metrics. */
    public ServerMetrics metrics() {
        return metrics;
    }

    /** The member's parts, for embedding and tests. */
    public Member member() {
        return member;
    }

    /** Blocks until the member has stopped (closed, or failed fatally). */
    public void awaitTermination() throws InterruptedException {
        terminated.await();
    }

    /** Why the member stopped on its own, or null when it did not (still running, or closed by request). */
    public String failure() {
        return failure;
    }

    private void raftStopped() {
        fail("the Raft server shut down (a fatal storage error, or a pause longer than the close threshold)");
    }

    /** A write that cannot be made durable stops the member: it must never acknowledge one. */
    private void logFailed(Throwable cause) {
        fail("the Raft log could not be written or read (" + rootMessage(cause) + "); check the disk and the data directory "
                + config.dataDir().toAbsolutePath());
    }

    private void fail(String reason) {
        if (!closing.get() && failure == null) {
            failure = reason;
            LOG.error("event=member_failed reason=\"{}\"", reason);
            Thread t = new Thread(this::close, "tenure-stop");
            t.setDaemon(true);
            t.start();
        }
    }

    /**
     * Stops this member the way SIGTERM and SIGINT do, within {@link ServerConfig#shutdownTimeout()},
     * so that clients see at most one quick failover and lose nothing:
     * <ol>
     *   <li>the member drains: {@link Member#draining()} turns true ({@code /readyz} answers 503) and
     *       every new client call is refused with UNAVAILABLE, which sends the client SDK to another
     *       member at once;</li>
     *   <li>what is in flight is answered: parked lock waits end with UNAVAILABLE <em>without</em>
     *       leaving the queue (the SDK re-attaches on another member with the same lease and keeps
     *       its place, or receives the grant it got meanwhile); unary calls in progress get up to a
     *       quarter of the timeout to finish; then keep-alive and watch streams end with UNAVAILABLE
     *       (the SDK reopens them elsewhere; a watch resumes from its next revision);</li>
     *   <li>if this member leads a group of several, it hands leadership to the follower that has the
     *       most of the log and answers, through Ratis's leadership transfer, and waits until that
     *       member leads: one short leaderless moment instead of an election timeout;</li>
     *   <li>the Raft server closes. Every acknowledged entry is already fsynced; no snapshot is taken.</li>
     * </ol>
     * Each step logs one line ({@code event=shutdown_begin}, {@code shutdown_drained},
     * {@code leadership_transferred}, {@code shutdown_complete}). A failed transfer (no follower up
     * to date in time) is logged and the shutdown goes on: the others then elect a leader as after a
     * crash. Idempotent; a concurrent caller waits for the same shutdown.
     *
     * @return true when the member stopped cleanly within the timeout; false when it did not finish
     *         in time ({@code event=shutdown_timed_out}, naming the step; the rest goes on in the
     *         background) or it had failed on its own before or during the shutdown
     */
    public boolean shutdownGracefully() {
        long started = System.nanoTime();
        long timeout = config.shutdownTimeout().toNanos();
        if (shutdownStarted.compareAndSet(false, true)) {
            Thread stopper = new Thread(() -> {
                try {
                    shutdownDone.complete(drainAndStop(started, started + timeout));
                } catch (RuntimeException | Error e) {
                    LOG.error("event=shutdown_failed step={} reason=\"{}\"", shutdownStep, e.toString(), e);
                    close();
                    shutdownDone.complete(false);
                }
            }, "tenure-shutdown");
            stopper.setDaemon(true);
            stopper.start();
        }
        try {
            return shutdownDone.get(Math.max(0, started + timeout - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            LOG.error("event=shutdown_timed_out member={} step={} took_ms={} timeout_ms={}", config.memberName(), shutdownStep,
                    millisSince(started), config.shutdownTimeout().toMillis());
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } catch (ExecutionException e) {
            return false;
        }
    }

    private boolean drainAndStop(long started, long deadline) {
        if (closing.get()) {
            // Closed already, or failed and closing on its own: nothing to hand over.
            shutdownStep = "close";
            awaitTerminated(deadline);
            return failure == null && terminated.getCount() == 0;
        }
        boolean leading = raft.leader();
        int peers = peersOrZero();
        LOG.info("event=shutdown_begin member={} role={} members={} timeout_ms={}", config.memberName(),
                leading ? "leader" : "follower", peers, config.shutdownTimeout().toMillis());

        shutdownStep = "drain";
        member.startDraining();
        String reason = shuttingDownStatus(config.memberName()).getDescription();
        int parked = member.waits().close(reason);
        long drainBudget = (deadline - started) / 4;
        boolean answered = gate.awaitUnaryAnswered(started + drainBudget);
        watches.closeAll(reason + "; resume the watch from the revision after the last one received");
        member.signals().closeAll(reason + "; listen again on another member");
        int streams = gate.endStreams();
        LOG.info("event=shutdown_drained member={} lock_waits_handed_back={} unary_calls_unanswered={} streams_ended={} took_ms={}",
                config.memberName(), parked, answered ? 0 : gate.unaryInFlight(), streams, millisSince(started));

        if (peers > 1 && raft.leader()) {
            shutdownStep = "leadership_transfer";
            // Leave a quarter of the time for closing Raft, whatever the transfer takes.
            transferLeadership(deadline - (deadline - started) / 4);
        }

        shutdownStep = "raft_close";
        long closeStarted = System.nanoTime();
        close();
        String failed = failure;
        if (failed != null) {
            LOG.error("event=shutdown_complete member={} took_ms={} close_ms={} clean=false reason=\"the member had failed: {}\"",
                    config.memberName(), millisSince(started), millisSince(closeStarted), failed);
            return false;
        }
        LOG.info("event=shutdown_complete member={} took_ms={} close_ms={}", config.memberName(), millisSince(started),
                millisSince(closeStarted));
        return true;
    }

    /**
     * Hands leadership to the best follower and waits, until {@code deadline} at most, until it
     * leads. Ratis replicates the rest of the log to it first (new writes wait meanwhile), then
     * tells it to start an election at once, which it wins: its log is as long as the leader's.
     */
    private void transferLeadership(long deadline) {
        long began = System.nanoTime();
        String outcome = "no follower answered within the last election timeout";
        // A follower not heard from within the last election timeout is down or shutting down
        // too, and would only use up the time.
        for (String target : raft.successors(config.electionTimeout().toMillis())) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                outcome = "out of time";
                break;
            }
            // A follower that cannot take over within two election timeouts is unlikely to; try the next.
            long attemptMillis = Math.max(1, Math.min(TimeUnit.NANOSECONDS.toMillis(left), 2 * config.electionTimeout().toMillis()));
            try {
                if (raft.transferLeadership(target, attemptMillis)) {
                    LOG.info("event=leadership_transferred from={} to={} took_ms={}", config.memberName(), target, millisSince(began));
                    return;
                }
                outcome = "refused";
            } catch (IOException | RuntimeException e) {
                outcome = e.toString();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                outcome = "interrupted";
                break;
            }
            String leader = raft.leaderName();
            if (leader != null && !leader.equals(config.memberName())) {
                // Another member leads already (an election overtook the transfer): as good.
                LOG.info("event=leadership_transferred from={} to={} took_ms={}", config.memberName(), leader, millisSince(began));
                return;
            }
        }
        LOG.warn("event=leadership_transfer_failed member={} reason=\"{}\" took_ms={} (the others elect a leader once their"
                + " election timeout passes)", config.memberName(), outcome, millisSince(began));
    }

    private int peersOrZero() {
        try {
            return raft.peers().size();
        } catch (RuntimeException e) {
            return 0;
        }
    }

    private void awaitTerminated(long deadline) {
        try {
            terminated.await(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static long millisSince(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - nanos);
    }

    /** What a client is told by a member that shuts down. */
    static Status shuttingDownStatus(String memberName) {
        return Status.UNAVAILABLE.withDescription("member " + memberName + " shutting down, retry another member");
    }

    /**
     * Stops serving and closes the Raft server at once; idempotent. Parked lock waits and streams
     * are cut without leaving their queues, but nothing is handed over: a leader's followers elect
     * another after an election timeout. {@link #shutdownGracefully()} is the orderly way.
     */
    @Override
    public void close() {
        if (!closing.compareAndSet(false, true)) {
            return;
        }
        // Proposals stop first: calls cut short by the shutdown must not withdraw their waits
        // through the log, so a client that retries elsewhere keeps its place in the queue.
        proposer.close();
        leases.close();
        idle.close();
        keyExpiry.close();
        Server s = grpc;
        if (s != null) {
            s.shutdown();
            // The streams (keep-alive, watch, session) would hold the transport open until the
            // grace period below runs out: their clients hear now, and go to another member.
            gate.endStreams();
        }
        HttpFront h = http;
        if (h != null) {
            h.close();
        }
        io.tenure.server.text.TextFront t = text;
        if (t != null) {
            t.close();
        }
        watches.closeAll("the member is shutting down");
        member.signals().closeAll("the member is shutting down");
        try {
            raft.close();
        } catch (IOException | RuntimeException e) {
            LOG.warn("event=raft_close_failed reason=\"{}\"", e.toString());
        }
        if (s != null) {
            try {
                if (!s.awaitTermination(5, TimeUnit.SECONDS)) {
                    s.shutdownNow();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                s.shutdownNow();
            }
        }
        if (audit != null) {
            audit.close(); // after the Raft server: its last applies are in
        }
        auditTrail.close();
        timer.shutdownNow();
        delivery.shutdownNow();
        admin.shutdownNow();
        calls.shutdownNow();
        terminated.countDown();
        LOG.info("event=stopped member={}", config.memberName());
    }

    private static int freePort(String host) throws IOException {
        try (java.net.ServerSocket socket = new java.net.ServerSocket(0, 1, java.net.InetAddress.getByName(host))) {
            return socket.getLocalPort();
        }
    }

    static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t == e ? String.valueOf(e.getMessage()) : e.getMessage() + " (" + t + ")";
    }

    private static ThreadFactory daemon(String name) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, name + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    /**
     * The door of the client port. While the member drains, each new call is refused with
     * UNAVAILABLE, so the client tries another member; the calls let in before are tracked, so
     * the drain can wait for the unary ones to be answered and end the streams (keep-alive,
     * watch) with UNAVAILABLE. A stream ended here reports itself cancelled to the service code,
     * and whatever that code still sends on it is dropped.
     */
    static final class CallGate implements ServerInterceptor {
        private final BooleanSupplier refusing;
        private final Status refusal;
        private final Object lock = new Object();
        private int unaryInFlight; // guarded by lock
        private final Set<GatedCall<?, ?>> streams = ConcurrentHashMap.newKeySet();
        private volatile boolean streamsEnded;

        CallGate(BooleanSupplier refusing, Status refusal) {
            this.refusing = refusing;
            this.refusal = refusal;
        }

        @Override
        public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers, ServerCallHandler<Q, A> next) {
            if (refusing.getAsBoolean()) {
                call.close(refusal, new Metadata());
                return new ServerCall.Listener<>() { };
            }
            boolean unary = call.getMethodDescriptor().getType() == MethodDescriptor.MethodType.UNARY;
            GatedCall<Q, A> gated = new GatedCall<>(call, unary);
            if (unary) {
                synchronized (lock) {
                    unaryInFlight++;
                }
            } else {
                streams.add(gated);
            }
            ServerCall.Listener<Q> listener;
            try {
                listener = next.startCall(gated, headers);
            } catch (RuntimeException e) {
                finished(gated);
                throw e;
            }
            if (!unary && streamsEnded) {
                gated.end(refusal); // let in just as the streams were being ended
            }
            return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(listener) {
                @Override
                public void onComplete() {
                    try {
                        super.onComplete();
                    } finally {
                        finished(gated);
                    }
                }

                @Override
                public void onCancel() {
                    try {
                        super.onCancel();
                    } finally {
                        finished(gated);
                    }
                }
            };
        }

        private void finished(GatedCall<?, ?> call) {
            if (!call.finished.compareAndSet(false, true)) {
                return;
            }
            if (call.unary) {
                synchronized (lock) {
                    if (--unaryInFlight == 0) {
                        lock.notifyAll();
                    }
                }
            } else {
                streams.remove(call);
            }
        }

        /** Waits until every unary call let in has been answered, or {@code deadline} (System.nanoTime) passes. */
        boolean awaitUnaryAnswered(long deadline) {
            synchronized (lock) {
                while (unaryInFlight > 0) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        return false;
                    }
                    try {
                        TimeUnit.NANOSECONDS.timedWait(lock, left);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return false;
                    }
                }
                return true;
            }
        }

        int unaryInFlight() {
            synchronized (lock) {
                return unaryInFlight;
            }
        }

        /** Ends every open stream, and any let in from now on, with the refusal; returns how many it ended. */
        int endStreams() {
            streamsEnded = true;
            int ended = 0;
            for (GatedCall<?, ?> call : streams) {
                if (call.end(refusal)) {
                    ended++;
                }
            }
            return ended;
        }
    }

    /** A call that the gate can end from outside: sends and closes are serialized and dropped once closed. */
    private static final class GatedCall<Q, A> extends ForwardingServerCall.SimpleForwardingServerCall<Q, A> {
        final boolean unary;
        final AtomicBoolean finished = new AtomicBoolean();
        private boolean closed; // guarded by this
        private boolean endedByGate; // guarded by this

        GatedCall(ServerCall<Q, A> call, boolean unary) {
            super(call);
            this.unary = unary;
        }

        @Override
        public synchronized void sendHeaders(Metadata headers) {
            if (!closed) {
                super.sendHeaders(headers);
            }
        }

        @Override
        public synchronized void sendMessage(A message) {
            if (!closed) {
                super.sendMessage(message);
            }
        }

        @Override
        public synchronized void close(Status status, Metadata trailers) {
            if (!closed) {
                closed = true;
                super.close(status, trailers);
            }
        }

        @Override
        public synchronized boolean isCancelled() {
            return endedByGate || super.isCancelled();
        }

        /** @return false when the call had ended already */
        synchronized boolean end(Status status) {
            if (closed) {
                return false;
            }
            closed = true;
            endedByGate = true;
            super.close(status, new Metadata());
            return true;
        }
    }
}
