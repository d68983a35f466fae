package io.tenure.server;

import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.tenure.core.TenureState;
import io.tenure.server.grpc.ClientGuard;
import io.tenure.server.grpc.GrpcClusterService;
import io.tenure.server.grpc.GrpcLockService;
import io.tenure.server.http.HttpFront;
import io.tenure.server.lease.LeaseKeeper;
import io.tenure.server.metrics.ServerMetrics;
import io.tenure.server.lock.Locks;
import io.tenure.server.raft.Proposer;
import io.tenure.server.raft.TenureStateMachine;
import io.tenure.server.watch.WatchHub;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.util.SizeInBytes;
import org.apache.ratis.util.TimeDuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

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
    /**
     * A forwarded entry is retried this often, this far apart, across a leader change (about 5 s
     * with the 1 s attempt timeout): a failover must not use up a client's TTL/2 safety window.
     */
    private static final int FORWARD_ATTEMPTS = 40;
    private static final long FORWARD_RETRY_SLEEP_MS = 100;

    private final ServerConfig config;
    private final RaftServer raft;
    private final Member member;
    private final Proposer proposer;
    private final LeaseKeeper leases;
    private final WatchHub watches;
    private final ServerMetrics metrics;
    private final RaftClient forwarder;
    private final ScheduledExecutorService timer;
    private final ExecutorService delivery;
    /** Membership changes block until committed; they get their own thread. */
    private final ExecutorService admin = Executors.newSingleThreadExecutor(daemon("tenure-admin"));
    private final CountDownLatch terminated = new CountDownLatch(1);
    private final AtomicBoolean closing = new AtomicBoolean();
    private volatile String failure;
    private volatile Server grpc;
    private volatile HttpFront http;

    private TenureServer(ServerConfig config, RaftServer raft, TenureStateMachine stateMachine, RaftGroup group,
                         RaftProperties properties) {
        this.config = config;
        this.raft = raft;
        this.timer = new ScheduledThreadPoolExecutor(1, daemon("tenure-timer"));
        this.delivery = Executors.newSingleThreadExecutor(daemon("tenure-watch"));
        this.forwarder = RaftClient.newBuilder()
                .setRaftGroup(group)
                .setProperties(properties)
                .setClientId(ClientId.randomId())
                // Bounded: Ratis's default retries forever with no sleep and spins during a partition.
                .setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep(FORWARD_ATTEMPTS,
                        TimeDuration.valueOf(FORWARD_RETRY_SLEEP_MS, TimeUnit.MILLISECONDS)))
                .build();
        this.proposer = new Proposer(raft, group.getGroupId(), RaftPeerId.valueOf(config.memberName()), forwarder,
                () -> lastAppliedIndex(stateMachine));
        this.metrics = new ServerMetrics();
        stateMachine.setMetrics(metrics);
        proposer.onCommitLatency(metrics::committed);
        this.leases = new LeaseKeeper(proposer, stateMachine, timer, System::nanoTime, config.minTtl(), metrics,
                config.limits().maxLeasesPerClient());
        Locks locks = new Locks(proposer, stateMachine, timer, metrics, config.limits());
        this.watches = new WatchHub(stateMachine, delivery);
        this.member = new Member(config, raft, group.getGroupId(), stateMachine, proposer, leases, locks, watches, metrics,
                MemberInfo.idOf(config.clusterName()), forwarder, this::raftStopped, this::logFailed);
        stateMachine.setListener(member);
        metrics.gauges(() -> stateMachine.read(TenureState::lockCount), () -> stateMachine.read(TenureState::leaseCount),
                () -> stateMachine.read(TenureState::waiterCount), watches::watcherCount, member::term,
                member::commitIndex, () -> lastAppliedIndex(stateMachine));
    }

    private static long lastAppliedIndex(TenureStateMachine stateMachine) {
        var applied = stateMachine.getLastAppliedTermIndex();
        return applied == null ? -1 : applied.getIndex();
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
        RaftGroupId groupId = RaftGroupId.valueOf(UUID.nameUUIDFromBytes(
                ("tenure-cluster:" + config.clusterName()).getBytes(StandardCharsets.UTF_8)));
        DataDirectory data = DataDirectory.open(config.dataDir(), config.clusterName(), config.memberName(), groupId.getUuid().toString());
        if (config.peerPort() == 0) {
            config = config.withPeerPort(freePort(config.host()));
        }
        List<RaftPeer> peers = new ArrayList<>();
        if (config.peers().isEmpty()) {
            peers.add(RaftPeer.newBuilder().setId(config.memberName()).setAddress(config.peerAddress()).build());
        } else {
            config.peers().forEach((name, address) -> peers.add(RaftPeer.newBuilder().setId(name).setAddress(address).build()));
        }
        RaftGroup group = RaftGroup.valueOf(groupId, peers);
        // A joining member starts with no configuration: Ratis then waits for the leader to add it
        // instead of campaigning (which the members would answer by telling it to shut down, as
        // they do a removed member). Its forwarding client still knows the running members.
        RaftGroup initial = config.join() && !data.formatted() ? RaftGroup.valueOf(groupId) : group;
        TenureStateMachine stateMachine = new TenureStateMachine(System::nanoTime, TenureState.DEFAULT_EVENT_LOG_CAPACITY);
        RaftProperties properties = raftProperties(config, data);
        RaftServer raft = RaftServer.newBuilder()
                .setServerId(RaftPeerId.valueOf(config.memberName()))
                .setGroup(initial)
                .setStateMachine(stateMachine)
                .setProperties(properties)
                .setOption(data.formatted() ? RaftStorage.StartupOption.RECOVER : RaftStorage.StartupOption.FORMAT)
                .build();
        TenureServer server = new TenureServer(config, raft, stateMachine, group, properties);
        try {
            raft.start();
        } catch (IOException | RuntimeException e) {
            server.close();
            throw new IOException("cannot start member " + config.memberName() + " on data directory "
                    + config.dataDir().toAbsolutePath() + ": " + rootMessage(e), e);
        }
        data.markInitialized();
        try {
            if (!config.clustered()) {
                server.awaitLeader();
            }
            server.startGrpc();
            server.http = HttpFront.start(server.member, config);
        } catch (IOException | RuntimeException e) {
            server.close();
            throw e;
        }
        server.member.startAnnouncing(server.timer);
        // Ratis closes a division whose apply thread failed without telling the state machine;
        // a member must then exit (non-zero, so a supervisor restarts it), not linger half-alive.
        server.timer.scheduleWithFixedDelay(() -> {
            if (!server.member.alive()) {
                server.fail("the Raft server stopped (see the errors logged above)");
            }
        }, 1, 1, TimeUnit.SECONDS);
        LOG.info("event=serving member={} client={}:{} http={}:{} peer={} members={} data_dir={}", config.memberName(), config.host(),
                server.clientPort(), config.host(), server.httpPort(), config.peerAddress(), peers.size(), config.dataDir().toAbsolutePath());
        return server;
    }

    private static RaftProperties raftProperties(ServerConfig config, DataDirectory data) {
        RaftProperties p = new RaftProperties();
        RaftServerConfigKeys.setStorageDir(p, List.of(data.raftDir().toFile()));
        String peerAddress = config.peerAddress();
        // Bind the peer port to this member's own address, not the wildcard (RATIS.md).
        GrpcConfigKeys.Server.setHost(p, ServerConfig.hostOf(peerAddress));
        GrpcConfigKeys.Server.setPort(p, config.peerPort());
        // One forwarding attempt: a write to a dead or deposed leader fails fast and is retried.
        RaftClientConfigKeys.Rpc.setRequestTimeout(p, TimeDuration.valueOf(1, TimeUnit.SECONDS));
        // Commands are small; Ratis's 64 MB default only enlarges what a bad peer can make us buffer.
        GrpcConfigKeys.setMessageSizeMax(p, SizeInBytes.valueOf("8MB"));
        long election = config.electionTimeout().toMillis();
        RaftServerConfigKeys.Rpc.setTimeoutMin(p, TimeDuration.valueOf(election, TimeUnit.MILLISECONDS));
        RaftServerConfigKeys.Rpc.setTimeoutMax(p, TimeDuration.valueOf(2 * election, TimeUnit.MILLISECONDS));
        RaftServerConfigKeys.Rpc.setFirstElectionTimeoutMin(p, TimeDuration.valueOf(Math.min(election, 200), TimeUnit.MILLISECONDS));
        RaftServerConfigKeys.Rpc.setFirstElectionTimeoutMax(p, TimeDuration.valueOf(Math.min(2 * election, 400), TimeUnit.MILLISECONDS));
        // Reads through Ratis must be linearizable (ReadIndex), never the local state by default.
        RaftServerConfigKeys.Read.setOption(p, RaftServerConfigKeys.Read.Option.LINEARIZABLE);
        // Acknowledge only after fsync: both stay off (their defaults), set explicitly so no one flips them by accident.
        RaftServerConfigKeys.Log.setUnsafeFlushEnabled(p, false);
        RaftServerConfigKeys.Log.setAsyncFlushEnabled(p, false);
        // A metadata entry per commit advance costs a second fsync per write (RATIS.md), but it is
        // also how Ratis 3.2 tells followers the new commit index without waiting for the next
        // heartbeat (an append with no entries is not sent): a follower would answer forwarded
        // writes and linearizable reads half an election timeout late. So: off alone, on in a cluster.
        RaftServerConfigKeys.Log.setLogMetadataEnabled(p, config.clustered());
        RaftServerConfigKeys.Log.setCorruptionPolicy(p, RaftServerConfigKeys.Log.CorruptionPolicy.EXCEPTION);
        RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(p, true);
        RaftServerConfigKeys.Snapshot.setAutoTriggerThreshold(p, config.snapshotEvery());
        RaftServerConfigKeys.Snapshot.setRetentionFileNum(p, 2);
        RaftServerConfigKeys.Log.setPurgeUptoSnapshotIndex(p, true);
        // Ratis purges whole closed segments only: size them so that a snapshot threshold's worth
        // of entries (a few hundred bytes each) spans several, or the log would never be purged.
        long segmentBytes = Math.max(64 << 10, Math.min(8 << 20, config.snapshotEvery() * 256));
        RaftServerConfigKeys.Log.setSegmentSizeMax(p, SizeInBytes.valueOf(segmentBytes));
        RaftServerConfigKeys.Log.setPreallocatedSize(p, SizeInBytes.valueOf(Math.min(segmentBytes, 4 << 20)));
        RaftServerConfigKeys.Log.setPurgeGap(p, (int) Math.min(1024, config.snapshotEvery()));
        return p;
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
                terminated.await(20, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while waiting for the member to lead", e);
            }
        }
    }

    private void startGrpc() throws IOException {
        ClientGuard guard = new ClientGuard(config.limits().maxConnections(), member.rateGuard());
        Server server = NettyServerBuilder.forAddress(new InetSocketAddress(config.host(), config.clientPort()))
                .addTransportFilter(guard)
                .intercept(guard)
                .addService(new GrpcLockService(member))
                .addService(new GrpcClusterService(member, admin))
                .maxInboundMessageSize(4 << 20)
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

    /** Stops serving and closes the Raft server; idempotent. */
    @Override
    public void close() {
        if (!closing.compareAndSet(false, true)) {
            return;
        }
        // Proposals stop first: calls cut short by the shutdown must not withdraw their waits
        // through the log, so a client that retries elsewhere keeps its place in the queue.
        proposer.close();
        leases.close();
        Server s = grpc;
        if (s != null) {
            s.shutdown();
        }
        HttpFront h = http;
        if (h != null) {
            h.close();
        }
        watches.closeAll("the member is shutting down");
        try {
            forwarder.close();
        } catch (IOException | RuntimeException e) {
            LOG.warn("event=raft_client_close_failed reason=\"{}\"", e.toString());
        }
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
        timer.shutdownNow();
        delivery.shutdownNow();
        admin.shutdownNow();
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
}
