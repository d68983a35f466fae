package io.tenure.server.raft;

import com.alipay.sofa.jraft.Node;
import com.alipay.sofa.jraft.RaftGroupService;
import com.alipay.sofa.jraft.Status;
import com.alipay.sofa.jraft.conf.Configuration;
import com.alipay.sofa.jraft.core.CliServiceImpl;
import com.alipay.sofa.jraft.core.State;
import com.alipay.sofa.jraft.entity.PeerId;
import com.alipay.sofa.jraft.entity.Task;
import com.alipay.sofa.jraft.error.RaftError;
import com.alipay.sofa.jraft.option.CliOptions;
import com.alipay.sofa.jraft.option.NodeOptions;
import com.alipay.sofa.jraft.option.RaftOptions;
import com.alipay.sofa.jraft.option.RpcOptions;
import com.alipay.sofa.jraft.rpc.RaftRpcServerFactory;
import com.alipay.sofa.jraft.rpc.RpcClient;
import com.alipay.sofa.jraft.rpc.RpcContext;
import com.alipay.sofa.jraft.rpc.RpcProcessor;
import com.alipay.sofa.jraft.rpc.RpcServer;
import com.alipay.sofa.jraft.rpc.impl.BoltRpcClient;
import com.alipay.sofa.jraft.rpc.impl.BoltRpcServer;
import com.alipay.sofa.jraft.util.Endpoint;
import com.alipay.sofa.jraft.util.RpcFactoryHelper;
import io.tenure.server.NotServingException;
import io.tenure.server.PeerTls;
import io.tenure.server.ServerConfig;
import io.tenure.server.security.PemFiles;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.Serializable;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The member's Raft group on SOFAJRaft 1.3.14: a node with its log in RocksDB, every write synced
 * before it counts ({@link RaftOptions#setSync}), its peer transport (bolt) bound to the member's
 * peer address, and {@link JRaftStateMachine} applying what it commits.
 *
 * <p>A follower forwards entries to the leader over the same peer port, as a request of Tenure's
 * own ({@link ForwardedEntry}) that the leader appends and answers with the entry's index once it
 * is committed and applied there; across a leader change the follower retries for a few seconds.
 * Membership changes go through JRaft's CLI service, which finds the leader.
 *
 * <p>JRaft names members by peer address. Names come from {@code --peers}, this member's own, and
 * for a member added later, from that member itself: asked once over the peer port
 * ({@link MemberNameRequest}) the first time its address is seen.
 */
public final class JRaftRaft implements Raft {
    private static final byte[] NO_READ_CONTEXT = new byte[0];
    private static final Logger LOG = LoggerFactory.getLogger(JRaftRaft.class);

    static {
        // bolt logs through sofa-common-tools, which builds a Logback context of its own (files under
        // ~/logs/bolt) unless told not to: then it logs through slf4j, as JRaft does.
        if (System.getProperty("sofa.middleware.log.disable") == null) {
            System.setProperty("sofa.middleware.log.disable", "true");
        }
    }
    static final String GROUP = "tenure";
    /** How long a follower keeps forwarding an entry across a leader change (as the Ratis forwarder: about 5 s). */
    private static final long FORWARD_DEADLINE_MS = 5_000;
    private static final long FORWARD_RETRY_MS = 100;
    private static final int FORWARD_ATTEMPT_MS = 1_000;
    private static final long CLOSE_WAIT_MS = 5_000;

    /** An entry a follower sends the leader to append. */
    public static final class ForwardedEntry implements Serializable {
        private static final long serialVersionUID = 1L;
        private byte[] entry;

        public ForwardedEntry() {
        }

        ForwardedEntry(byte[] entry) {
            this.entry = entry;
        }
    }

    /** The leader's answer: the entry's index, or why it was not appended. */
    public static final class ForwardedEntryReply implements Serializable {
        private static final long serialVersionUID = 1L;
        private long index = -1;
        private boolean notLeader;
        private String error;

        public ForwardedEntryReply() {
        }

        static ForwardedEntryReply appended(long index) {
            ForwardedEntryReply r = new ForwardedEntryReply();
            r.index = index;
            return r;
        }

        static ForwardedEntryReply notLeader() {
            ForwardedEntryReply r = new ForwardedEntryReply();
            r.notLeader = true;
            return r;
        }

        static ForwardedEntryReply failed(String error) {
            ForwardedEntryReply r = new ForwardedEntryReply();
            r.error = error;
            return r;
        }
    }

    /** Asks a member for its name. */
    public static final class MemberNameRequest implements Serializable {
        private static final long serialVersionUID = 1L;
    }

    /** A member's name, in answer to {@link MemberNameRequest}. */
    public static final class MemberNameReply implements Serializable {
        private static final long serialVersionUID = 1L;
        private String name;

        public MemberNameReply() {
        }

        MemberNameReply(String name) {
            this.name = name;
        }
    }

    private final ServerConfig config;
    private final PeerId self;
    /** Addresses whose member's name was asked for and not answered yet. */
    private final java.util.Set<String> askingNames = ConcurrentHashMap.newKeySet();
    private final Map<String, String> namesByAddress = new ConcurrentHashMap<>();
    private final Map<String, String> addressesByName = new ConcurrentHashMap<>();
    private final JRaftStateMachine stateMachine;
    private final RaftGroupService service;
    private final RpcServer rpcServer;
    private final RpcClient forwarder;
    private final CliServiceImpl cli;
    private final ScheduledExecutorService retries;
    private final long snapshotEvery;
    private volatile Node node;
    private volatile boolean closed;
    /** The peer TLS key store bolt reads; {@code null} without peer TLS. */
    private final PeerRpcFactory.KeyStoreFile peerKeyStore;
    private static final String PEER_KEY_STORE = "peer-tls.p12";

    private JRaftRaft(ServerConfig config, Path dir, boolean formatted, TenureStateMachine tenure) throws IOException {
        this.config = config;
        this.self = peerId(config.peerAddress());
        config.peers().forEach(this::know);
        know(config.memberName(), config.peerAddress());
        this.stateMachine = new JRaftStateMachine(tenure, config.memberName(), this::nameOf);
        this.snapshotEvery = config.snapshotEvery();
        Files.createDirectories(dir);
        if (config.peerTls() != null) {
            PeerTls files = config.peerTls();
            this.peerTlsStamp = PemFiles.stamp(files.certFile(), files.keyFile(), files.trustedCaFile());
        }
        this.peerKeyStore = config.peerTls() == null ? null : writePeerKeyStore(config, dir);
        NodeOptions options = peerKeyStore == null ? new NodeOptions() : new PeerRpcFactory.TlsNodeOptions(peerKeyStore);
        int election = (int) config.electionTimeout().toMillis();
        options.setElectionTimeoutMs(election);
        // A joining member starts with no configuration and waits for the leader to add it.
        Configuration initial = new Configuration();
        if (!(config.join() && !formatted)) {
            for (String address : addressesByName.values()) {
                initial.addPeer(peerId(address));
            }
        }
        options.setInitialConf(initial);
        options.setFsm(stateMachine);
        options.setLogUri(dir.resolve("log").toString());
        options.setRaftMetaUri(dir.resolve("meta").toString());
        options.setSnapshotUri(dir.resolve("snapshot").toString());
        // Tenure takes snapshots by entries applied (--snapshot-every, checked every second by
        // snapshotWhenDue); JRaft's own timer is off.
        options.setSnapshotIntervalSecs(0);
        options.setEnableMetrics(false);
        RaftOptions raft = new RaftOptions();
        // Acknowledge only after fsync: every log write synced, and with it the term and vote.
        raft.setSync(true);
        raft.setSyncMeta(true);
        // JRaft waits the election timeout plus a random delay below this: T to 2T, as Ratis.
        raft.setMaxElectionDelayMs(election);
        raft.setOpenStatistics(false);
        // Linearizable reads confirm leadership with a round of heartbeats, never a clock-based lease.
        raft.setReadOnlyOptions(com.alipay.sofa.jraft.option.ReadOnlyOption.ReadOnlySafe);
        options.setRaftOptions(raft);
        // JRaft's own factory binds the wildcard address; this binds the peer address only (RATIS.md's rule, here too).
        com.alipay.remoting.rpc.RpcServer bolt = new com.alipay.remoting.rpc.RpcServer(ServerConfig.hostOf(config.peerAddress()),
                config.peerBindPort(), true);
        if (peerKeyStore != null) {
            PeerRpcFactory.secure(bolt, peerKeyStore);
        }
        this.rpcServer = new BoltRpcServer(bolt);
        RaftRpcServerFactory.addRaftRequestProcessors(rpcServer);
        rpcServer.registerProcessor(new ForwardProcessor());
        rpcServer.registerProcessor(new MemberNameProcessor());
        this.service = new RaftGroupService(GROUP, self, options, rpcServer);
        this.forwarder = RpcFactoryHelper.rpcFactory().createRpcClient(peerKeyStore == null ? null
                : client -> PeerRpcFactory.secure(((BoltRpcClient) client).getRpcClient(), peerKeyStore));
        this.forwarder.init(new RpcOptions());
        this.cli = new CliServiceImpl();
        CliOptions cliOptions = peerKeyStore == null ? new CliOptions() : new PeerRpcFactory.TlsCliOptions(peerKeyStore);
        cliOptions.setTimeoutMs((int) Math.max(5_000, 10L * election));
        cliOptions.setMaxRetry(3);
        this.cli.init(cliOptions);
        this.retries = Executors.newSingleThreadScheduledExecutor(r -> {
            // Forwarding retries, snapshots when due, and the check of peer connections.
            Thread t = new Thread(r, "tenure-jraft-timer");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * The member's PEM files as the PKCS#12 key store bolt reads (it takes a file and a password):
     * written afresh at every start, readable by the member's user only, under a random password
     * that lives in memory alone; deleted when the member closes.
     */
    private static PeerRpcFactory.KeyStoreFile writePeerKeyStore(ServerConfig config, Path dir) throws IOException {
        char[] password = new char[32];
        java.security.SecureRandom random = new java.security.SecureRandom();
        String letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        for (int i = 0; i < password.length; i++) {
            password[i] = letters.charAt(random.nextInt(letters.length()));
        }
        PeerRpcFactory.KeyStoreFile store = new PeerRpcFactory.KeyStoreFile(dir.resolve(PEER_KEY_STORE), password);
        writePeerKeyStore(config.peerTls(), store);
        return store;
    }

    /**
     * Replaces the key store file with {@code files}' material in one rename, so that bolt, which
     * reads the file for every connection it makes or accepts, sees the old store or the new one
     * and never half of either.
     */
    private static void writePeerKeyStore(PeerTls files, PeerRpcFactory.KeyStoreFile store) throws IOException {
        byte[] bytes = files.keyStore(store.password());
        Path file = store.path();
        Path tmp = file.resolveSibling(PEER_KEY_STORE + ".tmp");
        Files.deleteIfExists(tmp);
        try {
            Files.createFile(tmp, java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
                    java.nio.file.attribute.PosixFilePermissions.fromString("rw-------")));
        } catch (UnsupportedOperationException e) {
            Files.createFile(tmp);
        }
        Files.write(tmp, bytes);
        Files.move(tmp, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    }

    /** The peer PEM files' modification times and sizes when last read (at start, then by {@link #reloadPeerTlsIfChanged}). */
    private volatile List<Long> peerTlsStamp = List.of();

    /**
     * Rotation of the peer certificate without a restart: when {@code --peer-cert-file},
     * {@code --peer-key-file} or {@code --peer-trusted-ca-file} changed, and the new files load
     * (the key fits the certificate, the CA signed it, it is valid now), the key store is
     * rewritten; bolt reads it for every connection it makes or accepts, so each new peer
     * connection presents the new certificate and trusts the new CA bundle, and the connections
     * already open keep theirs. Files that do not load are logged once per change
     * ({@code event=peer_tls_reload_refused}) and the material in use stays.
     */
    private void reloadPeerTlsIfChanged() {
        PeerTls files = config.peerTls();
        if (closed || files == null) {
            return;
        }
        List<Long> now = PemFiles.stamp(files.certFile(), files.keyFile(), files.trustedCaFile());
        if (now.equals(peerTlsStamp)) {
            return;
        }
        peerTlsStamp = now;
        try {
            files.validate();
            writePeerKeyStore(files, peerKeyStore);
            java.security.cert.X509Certificate cert = PemFiles.certificates(files.certFile(), "--peer-cert-file").get(0);
            LOG.info("event=peer_tls_reloaded subject=\"{}\" serial={} not_after={}", cert.getSubjectX500Principal().getName(),
                    cert.getSerialNumber().toString(16), cert.getNotAfter().toInstant());
        } catch (IllegalArgumentException | IOException e) {
            LOG.warn("event=peer_tls_reload_refused reason=\"{}\" (the peer certificate in use stays)", e.getMessage());
        }
    }

    /** Builds (does not start) the member's JRaft node with its data under {@code dir}. */
    public static JRaftRaft create(ServerConfig config, Path dir, boolean formatted, TenureStateMachine tenure) throws IOException {
        return new JRaftRaft(config, dir, formatted, tenure);
    }

    private static PeerId peerId(String address) {
        PeerId id = new PeerId();
        if (!id.parse(address)) {
            throw new IllegalArgumentException("not a peer address (host:port): " + address);
        }
        return id;
    }

    private void know(String name, String address) {
        String normal = peerId(address).getEndpoint().toString();
        namesByAddress.put(normal, name);
        addressesByName.put(name, normal);
    }

    /** The member's name at {@code peer}; its address (and the name asked of it) while unknown. */
    private String nameOf(PeerId peer) {
        if (peer == null || peer.isEmpty()) {
            return null;
        }
        String address = peer.getEndpoint().toString();
        String name = namesByAddress.get(address);
        if (name == null) {
            askName(peer.getEndpoint());
            return address;
        }
        return name;
    }

    private void askName(Endpoint endpoint) {
        String address = endpoint.toString();
        if (closed || !askingNames.add(address)) {
            return;
        }
        try {
            forwarder.invokeAsync(endpoint, new MemberNameRequest(), (result, error) -> {
                askingNames.remove(address);
                if (error == null && result instanceof MemberNameReply reply && reply.name != null) {
                    know(reply.name, address);
                }
            }, FORWARD_ATTEMPT_MS);
        } catch (InterruptedException e) {
            askingNames.remove(address);
            Thread.currentThread().interrupt();
        } catch (com.alipay.sofa.jraft.error.RemotingException | RuntimeException e) {
            askingNames.remove(address);
        }
    }

    /** Answers another member's {@link MemberNameRequest} with this member's name. */
    private final class MemberNameProcessor implements RpcProcessor<MemberNameRequest> {
        @Override
        public void handleRequest(RpcContext context, MemberNameRequest request) {
            context.sendResponse(new MemberNameReply(config.memberName()));
        }

        @Override
        public String interest() {
            return MemberNameRequest.class.getName();
        }
    }

    @Override
    public void start() throws IOException {
        Node started;
        try {
            started = service.start();
        } catch (RuntimeException e) {
            throw new IOException("the Raft node did not start: " + e.getMessage(), e);
        }
        if (started == null) {
            throw new IOException("the Raft node did not start (see the errors logged above)");
        }
        node = started;
        stateMachine.started();
        // Where a stored one-peer configuration becomes this member alone: the only place that
        // resets a configuration, and never one that names another member.
        List<PeerId> stored = currentConf(started).listPeers();
        // A backup restored by 'tenure snapshot restore' (JRaftRestoredStorage) names a placeholder
        // that is no member: the member's address was not known then. Started as the seed of a
        // new cluster (no --peers, or --peers naming only itself), it becomes this member alone.
        // With --join it waits to be added, as a joining member does (one that joined and stopped
        // right after installing that snapshot from the leader has it too).
        boolean restored = !config.join() && stored.equals(List.of(JRaftRestoredStorage.PLACEHOLDER));
        if (restored && config.peers().keySet().stream().anyMatch(name -> !name.equals(config.memberName()))) {
            throw new IOException("the data directory holds a restored backup, not yet started: start this member alone "
                    + "first (without --peers, or with --peers naming only itself), then add members with 'tenure server "
                    + "--join' and 'tenure member add' (a member that stopped while it was joining: start it with --join)");
        }
        // A member alone that restarted on another peer address (its peer port is its own to
        // choose): JRaft knows members by address, so it would wait forever for the old one.
        // Alone, it is safe to make its configuration this address.
        boolean moved = config.peers().isEmpty() && !config.join() && stored.size() == 1 && !stored.get(0).equals(self);
        if (restored || moved) {
            LOG.info(restored ? "event=restored_configuration from={} to={}" : "event=peer_address_changed from={} to={}",
                    stored.get(0), self);
            Status reset = started.resetPeers(new Configuration(List.of(self)));
            if (!reset.isOk()) {
                String what = restored ? "the restored member's Raft configuration could not be set to " + self
                        : "the member's peer address changed from " + stored.get(0) + " to " + self
                        + " and its Raft configuration could not follow";
                throw new IOException(what + ": " + reset.getErrorMsg());
            }
        }
        if (snapshotEvery > 0) {
            retries.scheduleWithFixedDelay(this::snapshotWhenDue, 1, 1, TimeUnit.SECONDS);
        }
        retries.scheduleWithFixedDelay(this::dropDeadPeerConnections, 1, 1, TimeUnit.SECONDS);
        if (peerKeyStore != null) {
            retries.scheduleWithFixedDelay(this::reloadPeerTlsIfChanged, 1, 1, TimeUnit.SECONDS);
        }
    }

    /** The applied index at the last snapshot this member asked for; read by {@link #logStartIndex}. */
    private volatile long lastSnapshotAt;

    /** Takes a snapshot once {@code --snapshot-every} entries were applied since the last one. */
    private void snapshotWhenDue() {
        Node n = node;
        if (n == null || closed) {
            return;
        }
        long applied = n.getLastAppliedLogIndex();
        if (applied - lastSnapshotAt >= snapshotEvery) {
            lastSnapshotAt = applied;
            n.snapshot(status -> {
                if (!status.isOk()) {
                    LOG.warn("event=snapshot_failed reason=\"{}\"", status);
                }
            });
        }
    }

    /** Per peer address, how many checks in a row found no usable connection to it. */
    private final Map<String, Integer> deadLinkChecks = new ConcurrentHashMap<>();

    /**
     * Drops a peer's connection pool once it has held no usable connection for two checks. bolt
     * 1.6.4 can keep a pool whose only connection closed as it was made (a proxy or balancer that
     * accepts and then closes while the member behind it is down): it never heals such a pool and
     * answers "Connection is null when do check!" to every later attempt, so JRaft could not reach
     * the member again after it came back (the safety suite's F10 behind peer proxies). Without
     * the pool, the next attempt connects afresh.
     */
    private void dropDeadPeerConnections() {
        Node n = node;
        if (n == null || closed) {
            return;
        }
        try {
            if (!(((com.alipay.sofa.jraft.core.NodeImpl) n).getRpcService() instanceof com.alipay.sofa.jraft.rpc.impl.AbstractClientService clients)) {
                return;
            }
            for (PeerId peer : currentConf(n).listPeers()) {
                if (peer.equals(self)) {
                    continue;
                }
                Endpoint endpoint = peer.getEndpoint();
                String address = endpoint.toString();
                if (clients.isConnected(endpoint)) {
                    deadLinkChecks.remove(address);
                } else if (deadLinkChecks.merge(address, 1, Integer::sum) >= 2) {
                    deadLinkChecks.remove(address);
                    clients.disconnect(endpoint);
                    forwarder.closeConnection(endpoint);
                }
            }
        } catch (RuntimeException e) {
            LOG.debug("checking peer connections: {}", e.toString());
        }
    }

    @Override
    public CompletableFuture<Long> append(byte[] entry) {
        CompletableFuture<Long> committed = new CompletableFuture<>();
        appendHere(entry, committed, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(FORWARD_DEADLINE_MS));
        return committed;
    }

    /** On the leader, in-process; elsewhere (or if it stopped leading meanwhile), forwarded to the leader. */
    private void appendHere(byte[] entry, CompletableFuture<Long> committed, long deadline) {
        Node n = node;
        if (n == null || closed) {
            committed.completeExceptionally(new NotServingException("the member is shutting down"));
            return;
        }
        if (!n.isLeader()) {
            forward(entry, committed, deadline);
            return;
        }
        n.apply(new Task(ByteBuffer.wrap(entry), new JRaftStateMachine.Appended() {
            @Override
            public void run(Status status) {
                if (status.isOk()) {
                    committed.complete(index);
                } else if (status.getRaftError() == RaftError.EPERM) {
                    // Stepped down (or never led in this term): the entry goes to the new leader.
                    forward(entry, committed, deadline);
                } else {
                    committed.completeExceptionally(new NotServingException("the command was not committed: " + status));
                }
            }
        }));
    }

    private void forward(byte[] entry, CompletableFuture<Long> committed, long deadline) {
        Node n = node;
        PeerId leader = n == null ? null : n.getLeaderId();
        if (closed) {
            committed.completeExceptionally(new NotServingException("the member is shutting down"));
            return;
        }
        if (leader == null || leader.isEmpty()) {
            retryLater(entry, committed, deadline, "no leader known");
            return;
        }
        if (leader.equals(self)) {
            retryLater(entry, committed, deadline, "this member is becoming leader");
            return;
        }
        try {
            forwarder.invokeAsync(leader.getEndpoint(), new ForwardedEntry(entry), (result, error) -> {
                if (error != null) {
                    retryLater(entry, committed, deadline, error.toString());
                } else if (result instanceof ForwardedEntryReply reply && reply.index >= 0) {
                    committed.complete(reply.index);
                } else if (result instanceof ForwardedEntryReply reply && reply.notLeader) {
                    retryLater(entry, committed, deadline, "member at " + leader.getEndpoint() + " is not the leader");
                } else {
                    String why = result instanceof ForwardedEntryReply reply ? reply.error : String.valueOf(result);
                    committed.completeExceptionally(new NotServingException("the command was not committed: " + why));
                }
            }, FORWARD_ATTEMPT_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            committed.completeExceptionally(new NotServingException("interrupted while forwarding to the leader"));
        } catch (com.alipay.sofa.jraft.error.RemotingException | RuntimeException e) {
            retryLater(entry, committed, deadline, e.toString());
        }
    }

    private void retryLater(byte[] entry, CompletableFuture<Long> committed, long deadline, String why) {
        if (closed || System.nanoTime() > deadline) {
            committed.completeExceptionally(new NotServingException("the command was not committed: " + why));
            return;
        }
        try {
            retries.schedule(() -> appendHere(entry, committed, deadline), FORWARD_RETRY_MS, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            committed.completeExceptionally(new NotServingException("the member is shutting down"));
        }
    }

    /** The leader's side of forwarding: appends the entry and answers with its index once applied here. */
    private final class ForwardProcessor implements RpcProcessor<ForwardedEntry> {
        @Override
        public void handleRequest(RpcContext context, ForwardedEntry request) {
            Node n = node;
            if (n == null || closed || !n.isLeader()) {
                context.sendResponse(ForwardedEntryReply.notLeader());
                return;
            }
            n.apply(new Task(ByteBuffer.wrap(request.entry), new JRaftStateMachine.Appended() {
                @Override
                public void run(Status status) {
                    if (status.isOk()) {
                        context.sendResponse(ForwardedEntryReply.appended(index));
                    } else if (status.getRaftError() == RaftError.EPERM) {
                        context.sendResponse(ForwardedEntryReply.notLeader());
                    } else {
                        context.sendResponse(ForwardedEntryReply.failed(status.toString()));
                    }
                }
            }));
        }

        @Override
        public String interest() {
            return ForwardedEntry.class.getName();
        }
    }

    /**
     * JRaft's ReadIndex in its safe mode ({@link com.alipay.sofa.jraft.option.ReadOnlyOption#ReadOnlySafe},
     * set in the options): the leader refuses until it has committed an entry of its term, then
     * sends a round of heartbeats and answers once a majority of the configuration accepted them in
     * its term; a follower asks the leader for it. JRaft batches the reads that arrive together
     * into one round. Completes once JRaft has applied the index here.
     */
    @Override
    public CompletableFuture<Long> readIndex() {
        Node n = node;
        CompletableFuture<Long> confirmed = new CompletableFuture<>();
        if (n == null || closed) {
            confirmed.completeExceptionally(new NotServingException("the member is shutting down"));
            return confirmed;
        }
        n.readIndex(NO_READ_CONTEXT, new com.alipay.sofa.jraft.closure.ReadIndexClosure() {
            @Override
            public void run(Status status, long index, byte[] context) {
                if (status.isOk()) {
                    // JRaft runs this once it has applied the index here. Its own entries (a new
                    // leader's configuration entry, membership changes) are not shown to Tenure's
                    // state machine, which counts them applied only when its next entry comes: the
                    // read is served at the last index Tenure applied, which then holds every entry
                    // of Tenure's up to the confirmed one.
                    confirmed.complete(Math.min(index, stateMachine.tenureAppliedIndex()));
                } else {
                    confirmed.completeExceptionally(new NotServingException("the leader did not confirm a read index: " + status));
                }
            }
        });
        return confirmed;
    }

    @Override
    public long term() {
        return stateMachine.term();
    }

    @Override
    public boolean leader() {
        Node n = node;
        return n != null && n.isLeader();
    }

    @Override
    public boolean leaderReady() {
        return leader() && stateMachine.leaderReady();
    }

    @Override
    public String leaderName() {
        Node n = node;
        return n == null ? null : nameOf(n.getLeaderId());
    }

    @Override
    public long commitIndex() {
        Node n = node;
        return n == null ? -1 : n.getLastCommittedIndex();
    }

    /** Not exposed by JRaft: the index after the last snapshot, where its log starts once purged. */
    @Override
    public long logStartIndex() {
        return Math.max(1, lastSnapshotAt + 1);
    }

    @Override
    public boolean logOpen() {
        return node != null;
    }

    @Override
    public boolean alive() {
        Node n = node;
        if (n == null || closed || stateMachine.failed()) {
            return false;
        }
        State state = n.getNodeState();
        return state != State.STATE_ERROR && state != State.STATE_SHUTTING && state != State.STATE_SHUTDOWN
                && state != State.STATE_UNINITIALIZED;
    }

    /** The configuration this member knows, on a follower too ({@link Node#listPeers} answers on the leader only). */
    private static Configuration currentConf(Node n) {
        return ((com.alipay.sofa.jraft.core.NodeImpl) n).getCurrentConf();
    }

    @Override
    public List<Peer> peers() {
        Node n = node;
        List<Peer> peers = new ArrayList<>();
        if (n == null) {
            return peers;
        }
        for (PeerId peer : currentConf(n).listPeers()) {
            peers.add(new Peer(nameOf(peer), peer.getEndpoint().toString()));
        }
        return peers;
    }

    @Override
    public void changePeers(List<Peer> peers) throws IOException {
        Node n = node;
        Configuration now = n == null ? new Configuration() : currentConf(n);
        Configuration next = new Configuration();
        for (Peer peer : peers) {
            know(peer.name(), peer.address());
            next.addPeer(peerId(peer.address()));
        }
        Status status = cli.changePeers(GROUP, now, next);
        if (status.getRaftError() == RaftError.ECATCHUP) {
            throw new NotServingException("the configuration change failed: a new member did not catch up with the leader ("
                    + status.getErrorMsg() + "); check that it runs, is reachable at its peer address, uses the same "
                    + "--raft-engine and, with peer TLS, has a certificate the cluster's CA signed");
        }
        if (!status.isOk()) {
            throw new NotServingException("the configuration change failed: " + status.getErrorMsg());
        }
    }

    @Override
    public boolean transferLeadership(String target, long timeoutMillis) throws IOException, InterruptedException {
        String address = addressesByName.getOrDefault(target, target);
        PeerId to = peerId(address);
        Node n = node;
        Status status;
        if (n != null && n.isLeader()) {
            status = n.transferLeadershipTo(to);
        } else {
            status = cli.transferLeader(GROUP, n == null ? new Configuration() : currentConf(n), to);
        }
        if (!status.isOk()) {
            throw new IOException("leadership transfer to " + target + " refused: " + status.getErrorMsg());
        }
        return stateMachine.awaitLeader(nameOf(to), System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis));
    }

    @Override
    public List<String> successors(long silentLimitMillis) {
        Node n = node;
        if (n == null || !n.isLeader()) {
            return List.of();
        }
        List<String> names = new ArrayList<>();
        try {
            for (PeerId peer : n.listAlivePeers()) {
                if (!peer.equals(self)) {
                    names.add(nameOf(peer));
                }
            }
        } catch (IllegalStateException stoppedLeading) {
            return List.of();
        }
        return names;
    }

    @Override
    public void close() throws IOException {
        closed = true;
        retries.shutdownNow();
        try {
            service.shutdown();
        } catch (RuntimeException e) {
            LOG.warn("event=raft_close_failed reason=\"{}\"", e.toString());
        }
        // JRaft's join can hang after a failed apply: wait a bounded time for its threads.
        Thread joiner = new Thread(() -> {
            try {
                service.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "tenure-jraft-join");
        joiner.setDaemon(true);
        joiner.start();
        try {
            joiner.join(CLOSE_WAIT_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (joiner.isAlive()) {
            LOG.warn("event=raft_close_slow reason=\"the Raft node did not finish within {} ms\"", CLOSE_WAIT_MS);
        }
        cli.shutdown();
        forwarder.shutdown();
        if (peerKeyStore != null) {
            Files.deleteIfExists(peerKeyStore.path());
        }
    }
}
