package io.tenure.server.raft;

import io.tenure.server.NotServingException;
import io.tenure.server.ServerConfig;
import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.proto.RaftProtos.ServerRpcProto;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientAsynchronousProtocol;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.TransferLeadershipRequest;
import org.apache.ratis.protocol.exceptions.AlreadyClosedException;
import org.apache.ratis.protocol.exceptions.RaftRetryFailureException;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;
import org.apache.ratis.util.LifeCycle;
import org.apache.ratis.util.SizeInBytes;
import org.apache.ratis.util.TimeDuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The member's Raft group on Apache Ratis 3.2.2 (RATIS.md lists the settings that matter): its
 * server, with {@link RatisStateMachine} and Tenure's {@link PeerTransport}; a client that forwards
 * a follower's entries to the leader; and a client for membership changes.
 */
public final class RatisRaft implements Raft {
    private static final Logger LOG = LoggerFactory.getLogger(RatisRaft.class);
    /**
     * A forwarded entry is retried this often, this far apart, across a leader change (about 5 s
     * with the 1 s attempt timeout): a failover must not use up a client's safe window.
     */
    private static final int FORWARD_ATTEMPTS = 40;
    private static final long FORWARD_RETRY_SLEEP_MS = 100;

    private final ServerConfig config;
    private final RaftServer server;
    private final RaftGroup group;
    private final RaftGroupId groupId;
    private final RaftPeerId self;
    private final RaftProperties properties;
    /** For membership changes and leadership transfers through the leader (blocking calls). */
    private final RaftClient admin;
    /**
     * The client that forwards a follower's entries to the leader. Replaced when it breaks for
     * good: once its retries run out (the leader unreachable for a few seconds), Ratis 3.2.2's
     * ordered client fails every later request with AlreadyClosedException, so this member could
     * never forward again.
     */
    private volatile RaftClient forwarder;
    private final Object forwarderLock = new Object();
    private volatile boolean closed;
    private final ClientId clientId = ClientId.randomId();
    private final AtomicLong callIds = new AtomicLong();

    private RatisRaft(ServerConfig config, RaftServer server, RaftGroup group, RaftProperties properties) {
        this.config = config;
        this.server = server;
        this.group = group;
        this.groupId = group.getGroupId();
        this.self = RaftPeerId.valueOf(config.memberName());
        this.properties = properties;
        this.admin = client(group, properties);
        this.forwarder = client(group, properties);
    }

    /** The Raft group id of a cluster: derived from its name, so every member computes the same. */
    public static UUID groupUuid(String clusterName) {
        return UUID.nameUUIDFromBytes(("tenure-cluster:" + clusterName).getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Builds (does not start) the member's Ratis server on {@code raftDir}.
     *
     * @param formatted whether the data directory holds a log already (recover it) or is new (format it)
     */
    public static RatisRaft create(ServerConfig config, Path raftDir, boolean formatted, RatisStateMachine stateMachine) throws IOException {
        RaftGroupId groupId = RaftGroupId.valueOf(groupUuid(config.clusterName()));
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
        RaftGroup initial = config.join() && !formatted ? RaftGroup.valueOf(groupId) : group;
        RaftProperties properties = properties(config, raftDir);
        if (formatted) {
            // A snapshot install interrupted by a crash leaves a log that ends before the snapshot (LogBehindSnapshot).
            LogBehindSnapshot.repair(raftDir);
        }
        RaftServer server = RaftServer.newBuilder()
                .setServerId(RaftPeerId.valueOf(config.memberName()))
                .setGroup(initial)
                .setStateMachine(stateMachine)
                .setProperties(properties)
                .setOption(formatted ? RaftStorage.StartupOption.RECOVER : RaftStorage.StartupOption.FORMAT)
                .build();
        return new RatisRaft(config, server, group, properties);
    }

    private static RaftProperties properties(ServerConfig config, Path raftDir) {
        RaftProperties p = new RaftProperties();
        RaftServerConfigKeys.setStorageDir(p, List.of(raftDir.toFile()));
        // Ratis's gRPC transport, with a leader that sends its snapshot to a follower whose
        // previous entry it purged (Ratis 3.2.2 loops instead; see PeerTransport).
        RaftConfigKeys.Rpc.setType(p, new PeerTransport());
        String peerAddress = config.peerAddress();
        // Bind the peer port to this member's own address, not the wildcard (RATIS.md).
        GrpcConfigKeys.Server.setHost(p, ServerConfig.hostOf(peerAddress));
        GrpcConfigKeys.Server.setPort(p, config.peerBindPort());
        // One forwarding attempt: a write to a dead or deposed leader fails fast and is retried.
        RaftClientConfigKeys.Rpc.setRequestTimeout(p, TimeDuration.valueOf(1, TimeUnit.SECONDS));
        // Commands are small; Ratis's 64 MB default only enlarges what a bad peer can make us buffer.
        GrpcConfigKeys.setMessageSizeMax(p, SizeInBytes.valueOf("8MB"));
        long election = config.electionTimeout().toMillis();
        RaftServerConfigKeys.Rpc.setTimeoutMin(p, TimeDuration.valueOf(election, TimeUnit.MILLISECONDS));
        RaftServerConfigKeys.Rpc.setTimeoutMax(p, TimeDuration.valueOf(2 * election, TimeUnit.MILLISECONDS));
        // A member alone has nobody to split a vote with: it campaigns at once. Members of a
        // cluster wait 200-400 ms, so that those started together do not all campaign together.
        long firstElection = config.clustered() ? Math.min(election, 200) : 1;
        RaftServerConfigKeys.Rpc.setFirstElectionTimeoutMin(p, TimeDuration.valueOf(firstElection, TimeUnit.MILLISECONDS));
        RaftServerConfigKeys.Rpc.setFirstElectionTimeoutMax(p, TimeDuration.valueOf(config.clustered() ? Math.min(2 * election, 400) : 10,
                TimeUnit.MILLISECONDS));
        // Tenure reads through a barrier in the log (Member.readBarrier); should anything read
        // through Ratis, never from the local state alone.
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

    /** A client of this member's group, as a follower uses to reach the leader. */
    private static RaftClient client(RaftGroup group, RaftProperties properties) {
        return RaftClient.newBuilder()
                .setRaftGroup(group)
                .setProperties(properties)
                .setClientId(ClientId.randomId())
                // Bounded: Ratis's default retries forever with no sleep and spins during a partition.
                .setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep(FORWARD_ATTEMPTS,
                        TimeDuration.valueOf(FORWARD_RETRY_SLEEP_MS, TimeUnit.MILLISECONDS)))
                .build();
    }

    @Override
    public void start() throws IOException {
        server.start();
    }

    private RaftServer.Division division() {
        try {
            return server.getDivision(groupId);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private RaftServer.Division divisionOrNull() {
        try {
            return server.getDivision(groupId);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    @Override
    public CompletableFuture<Long> append(byte[] entry) {
        Message message = Message.valueOf(UnsafeByteOperations.unsafeWrap(entry));
        CompletableFuture<RaftClientReply> reply;
        try {
            RaftServer.Division division = division();
            reply = division.getInfo().isLeader() ? submitHere(division, message) : forward(message);
        } catch (IOException | RuntimeException e) {
            reply = CompletableFuture.failedFuture(e);
        }
        return reply.handle((r, error) -> {
            if (error == null && r.isSuccess()) {
                return r.getLogIndex();
            }
            throw failureOf(r, error);
        });
    }

    /** In-process on the leader; if it stopped leading meanwhile, through the forwarding client. */
    private CompletableFuture<RaftClientReply> submitHere(RaftServer.Division division, Message message) throws IOException {
        RaftClientRequest request = RaftClientRequest.newBuilder()
                .setClientId(clientId)
                .setServerId(self)
                .setGroupId(groupId)
                .setCallId(callIds.incrementAndGet())
                .setMessage(message)
                .setType(RaftClientRequest.writeRequestType())
                .build();
        // Straight to the division, on this thread: RaftServer's own entry point hands each
        // request to a Ratis thread pool and blocks this thread until the append is done, which
        // costs two context switches per entry and saves nothing. (Ratis 3.2.2's division is a
        // RaftClientAsynchronousProtocol; the server's entry point stays as the fallback.)
        CompletableFuture<RaftClientReply> submitted = division instanceof RaftClientAsynchronousProtocol here
                ? here.submitClientRequestAsync(request)
                : server.submitClientRequestAsync(request);
        // Stepping down (a leadership transfer, as in a graceful shutdown): the forwarding client
        // retries until the new leader takes the entry, instead of failing the callers.
        return submitted.thenCompose(r ->
                r.getNotLeaderException() != null || r.getLeaderNotReadyException() != null
                        || r.getLeaderSteppingDownException() != null
                        ? forward(message)
                        : CompletableFuture.completedFuture(r));
    }

    /** To the leader through the forwarding client, replacing that client if it broke for good. */
    private CompletableFuture<RaftClientReply> forward(Message message) {
        RaftClient client = forwarder;
        CompletableFuture<RaftClientReply> reply;
        try {
            reply = client.async().send(message);
        } catch (RuntimeException e) {
            reply = CompletableFuture.failedFuture(e);
        }
        return reply.whenComplete((r, error) -> {
            if (error != null && brokeForGood(error)) {
                replaceForwarder(client, error);
            }
        });
    }

    private static boolean brokeForGood(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause()) {
            if (t instanceof AlreadyClosedException || t instanceof RaftRetryFailureException) {
                return true;
            }
        }
        return false;
    }

    private void replaceForwarder(RaftClient broken, Throwable why) {
        synchronized (forwarderLock) {
            if (closed || forwarder != broken) {
                return;
            }
            forwarder = client(group, properties);
        }
        LOG.info("event=forwarder_replaced reason=\"{}\"", why.toString());
        closeQuietly(broken, "the broken forwarding client");
    }

    private static NotServingException failureOf(RaftClientReply reply, Throwable error) {
        if (error != null) {
            Throwable cause = error instanceof java.util.concurrent.CompletionException && error.getCause() != null ? error.getCause() : error;
            return new NotServingException("the command was not committed: " + cause.getMessage(), cause);
        }
        if (reply.getNotLeaderException() != null) {
            RaftPeerId leader = reply.getNotLeaderException().getSuggestedLeader() == null
                    ? null : reply.getNotLeaderException().getSuggestedLeader().getId();
            return new NotServingException("this member is not the leader" + (leader == null ? "" : " (leader: " + leader + ")"));
        }
        if (reply.getException() != null) {
            return new NotServingException("the command was not committed: " + reply.getException().getMessage(), reply.getException());
        }
        return new NotServingException("the command was not applied by this member");
    }

    @Override
    public long term() {
        try {
            return division().getInfo().getCurrentTerm();
        } catch (UncheckedIOException e) {
            return 0;
        }
    }

    @Override
    public boolean leader() {
        RaftServer.Division division = divisionOrNull();
        return division != null && division.getInfo().isLeader();
    }

    @Override
    public boolean leaderReady() {
        return division().getInfo().isLeaderReady();
    }

    @Override
    public String leaderName() {
        RaftServer.Division division = divisionOrNull();
        RaftPeerId leader = division == null ? null : division.getInfo().getLeaderId();
        return leader == null ? null : leader.toString();
    }

    /**
     * A single voter that leads: its commit index, with no round of messages (nobody else can lead
     * while it is the only voter, and a voter being added cannot be elected without its vote).
     * Null in a cluster: Ratis 3.2.2's ReadIndex can be answered by a leader cut off from the
     * majority (docs/safety.md, the F6 finding), so reads there go through a barrier in the log.
     */
    @Override
    public CompletableFuture<Long> readIndex() {
        RaftServer.Division division = divisionOrNull();
        if (division == null || !division.getInfo().isLeaderReady()) {
            return null;
        }
        org.apache.ratis.server.RaftConfiguration conf = division.getRaftConf();
        if (conf.getCurrentPeers().size() != 1 || !conf.getPreviousPeers().isEmpty()) {
            return null;
        }
        long committed = commitIndex();
        return committed < 0 ? null : CompletableFuture.completedFuture(committed);
    }

    @Override
    public long commitIndex() {
        try {
            return division().getRaftLog().getLastCommittedIndex();
        } catch (UncheckedIOException | IllegalStateException e) {
            // not running, or still loading its snapshot and log (Ratis refuses to say anything then)
            return -1;
        }
    }

    @Override
    public long logStartIndex() {
        return division().getRaftLog().getStartIndex();
    }

    @Override
    public boolean logOpen() {
        try {
            division().getRaftLog();
            return true;
        } catch (IllegalStateException stillOpening) {
            return false;
        }
    }

    @Override
    public boolean alive() {
        if (server.getLifeCycleState().isClosingOrClosed() || server.getLifeCycleState() == LifeCycle.State.EXCEPTION) {
            return false;
        }
        try {
            return division().getInfo().isAlive();
        } catch (UncheckedIOException e) {
            return false;
        }
    }

    @Override
    public List<Peer> peers() {
        List<Peer> peers = new ArrayList<>();
        for (RaftPeer peer : division().getGroup().getPeers()) {
            peers.add(new Peer(peer.getId().toString(), peer.getAddress() == null ? "" : peer.getAddress()));
        }
        return peers;
    }

    @Override
    public void changePeers(List<Peer> peers) throws IOException {
        List<RaftPeer> ratisPeers = peers.stream()
                .map(p -> RaftPeer.newBuilder().setId(p.name()).setAddress(p.address()).build())
                .toList();
        RaftClientReply reply = admin.admin().setConfiguration(ratisPeers);
        if (!reply.isSuccess()) {
            throw new NotServingException("the configuration change failed"
                    + (reply.getException() == null ? "" : ": " + reply.getException().getMessage()));
        }
    }

    /**
     * On the leader, Ratis's own transfer (it replicates the rest of the log to the target first,
     * new writes waiting meanwhile, then tells it to start an election at once, which it wins);
     * elsewhere, the same asked of the leader through the admin client.
     */
    @Override
    public boolean transferLeadership(String target, long timeoutMillis) throws IOException, InterruptedException {
        RaftPeerId to = RaftPeerId.valueOf(target);
        RaftClientReply reply;
        if (leader()) {
            try {
                reply = server.transferLeadershipAsync(new TransferLeadershipRequest(clientId, self, groupId,
                                callIds.incrementAndGet(), to, timeoutMillis))
                        .get(timeoutMillis + 500, TimeUnit.MILLISECONDS);
            } catch (ExecutionException | TimeoutException e) {
                throw new IOException(e.toString(), e);
            }
        } else {
            reply = admin.admin().transferLeadership(to, timeoutMillis);
        }
        if (reply.isSuccess()) {
            return true;
        }
        if (reply.getException() != null) {
            throw new IOException(reply.getException().toString(), reply.getException());
        }
        return false;
    }

    @Override
    public List<String> successors(long silentLimitMillis) {
        RaftServer.Division division = divisionOrNull();
        if (division == null || !division.getInfo().isLeader()) {
            return List.of();
        }
        record Candidate(String name, long matchIndex, long silentMillis) {}
        List<ServerRpcProto> followers = division.getInfo().getRoleInfoProto().getLeaderInfo().getFollowerInfoList();
        long[] matches = division.getInfo().getFollowerMatchIndices();
        // Both lists come from the leader's log appenders in the same order; should the set change
        // between the two reads, rank without the match index (Ratis still waits for the target to catch up).
        boolean aligned = matches != null && matches.length == followers.size();
        List<Candidate> candidates = new ArrayList<>();
        for (int i = 0; i < followers.size(); i++) {
            ServerRpcProto f = followers.get(i);
            candidates.add(new Candidate(f.getId().getId().toStringUtf8(), aligned ? matches[i] : 0, f.getLastRpcElapsedTimeMs()));
        }
        return candidates.stream()
                .filter(c -> c.silentMillis() < silentLimitMillis)
                .sorted(Comparator.comparing(Candidate::matchIndex, Comparator.reverseOrder())
                        .thenComparingLong(Candidate::silentMillis))
                .map(Candidate::name)
                .toList();
    }

    @Override
    public void close() throws IOException {
        synchronized (forwarderLock) {
            closed = true;
        }
        closeQuietly(forwarder, "the forwarding client");
        closeQuietly(admin, "the admin client");
        server.close();
    }

    private static void closeQuietly(RaftClient client, String what) {
        try {
            client.close();
        } catch (IOException | RuntimeException e) {
            LOG.debug("closing {}: {}", what, e.toString());
        }
    }
}
