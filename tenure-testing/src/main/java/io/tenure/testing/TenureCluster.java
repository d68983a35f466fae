package io.tenure.testing;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.tenure.client.TenureClient;
import io.tenure.proto.v1.ClusterServiceGrpc;
import io.tenure.proto.v1.LockServiceGrpc;
import io.tenure.proto.v1.ResponseHeader;
import io.tenure.proto.v1.StatusResponse;
import io.tenure.server.ServerConfig;
import io.tenure.server.TenureServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.UnaryOperator;

/**
 * Real Tenure members (the same server as {@code tenure server}: Raft, fsynced log, snapshots)
 * running in the test's own JVM on 127.0.0.1 with free ports and a temporary data directory.
 * Nothing to install and no Docker.
 *
 * <pre>{@code
 * try (TenureCluster tenure = TenureCluster.start(3);
 *      TenureClient client = tenure.newClient()) {
 *     ...
 *     tenure.stop(tenure.leader());   // a failover, as in production
 *     tenure.restart(0);
 * }
 * }</pre>
 *
 * <p>A member keeps its client port across {@link #stop} and {@link #restart}, so clients built
 * from {@link #endpoints()} reach it again. Lease TTLs below the server's minimum are refused:
 * 1 s with one member; with several, 10 election timeouts ({@link Builder#electionTimeout}; 250 ms
 * here by default) and at least 5 s.
 *
 * <p>For the server's own tests it also gives what they look at from the inside: each member's
 * {@link #server(int) TenureServer} and {@link #config(int) ServerConfig}, raw gRPC stubs
 * ({@link #blocking(int)}, {@link #async(int)}, {@link #admin(int)}), members configured by a
 * {@linkplain Builder#config tweak} of their {@code ServerConfig} (a data directory of one's own, limits,
 * peers, ports), a start that does not wait for a leader ({@link Builder#waitForLeader}), and a
 * member that {@linkplain #startJoining() joins} the running cluster.
 */
public final class TenureCluster implements AutoCloseable {
    /** The election timeout of a cluster of several members unless the builder sets another. */
    public static final Duration DEFAULT_ELECTION_TIMEOUT = Duration.ofMillis(250);

    private final List<ServerConfig> configs = new CopyOnWriteArrayList<>();
    private final List<TenureServer> servers = new ArrayList<>();
    private final List<ManagedChannel> channels = new ArrayList<>();
    private final Builder builder;
    private final Path dataDir;
    private final boolean ownsDataDir;
    private final Duration startTimeout;
    private final Await.Polling leaderWait;
    private final List<TenureClient> clients = new CopyOnWriteArrayList<>();
    /** The CA of a secured cluster's certificates, or null. */
    private final TestCertificates certificates;
    /** A secured cluster's root user's password and token, once it started. */
    private volatile String rootPassword;
    private volatile String rootToken;
    private volatile boolean closed;

    private TenureCluster(Builder builder) throws IOException {
        this.builder = builder;
        this.ownsDataDir = builder.dataDir == null;
        this.dataDir = ownsDataDir ? Files.createTempDirectory("tenure-test-") : builder.dataDir;
        this.startTimeout = builder.startTimeout;
        this.leaderWait = Await.every(Duration.ofMillis(10)).failingWith(IllegalStateException::new);
        int size = builder.members;
        Map<String, String> peers = new LinkedHashMap<>();
        this.certificates = builder.secured ? new TestCertificates(dataDir.resolve("tls"), "tenure-test") : null;
        int[] ports = FreePorts.take(4 * size);
        for (int i = 0; i < size; i++) {
            peers.put(defaultName(i), "127.0.0.1:" + ports[4 * i]);
        }
        for (int i = 0; i < size; i++) {
            ServerConfig config = baseConfig(i, ports[4 * i + 1], ports[4 * i + 2], ports[4 * i + 3]);
            if (size > 1) {
                config = config.withPeers(peers).withElectionTimeout(builder.electionTimeout);
            } else {
                config = config.withPeerPort(ports[4 * i]);
            }
            if (certificates != null) {
                // One certificate per member, for its peer port and its client ports; the cluster's CA signs them all.
                io.tenure.server.PeerTls files = certificates.member(defaultName(i));
                config = config.withPeerTls(files)
                        .withTls(new io.tenure.server.security.ClientTls(files.certFile(), files.keyFile(), files.trustedCaFile(), false));
            }
            add(builder.config.apply(config));
        }
    }

    /** Starts {@code members} members with the defaults and waits until they have a leader. */
    public static TenureCluster start(int members) {
        return builder().members(members).start();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The members' client endpoints ({@code 127.0.0.1:port}), in member order. */
    public List<String> endpoints() {
        List<String> endpoints = new ArrayList<>();
        for (int i = 0; i < configs.size(); i++) {
            endpoints.add(endpoint(i));
        }
        return endpoints;
    }

    /**
     * The HTTP endpoint ({@code http://127.0.0.1:port}, {@code https://} when secured) of member
     * {@code index}: JSON API, /metrics, /healthz, /readyz.
     */
    public String httpEndpoint(int index) {
        return (configs.get(index).tls() != null ? "https://" : "http://") + configs.get(index).host() + ":" + httpPort(index);
    }

    /** Whether the members run with TLS on every port and authentication on ({@link Builder#secured()}). */
    public boolean secured() {
        return certificates != null;
    }

    /** A secured cluster's CA: the certificate that signs every member's, for a client's {@code tls(...)}. */
    public Path caFile() {
        return requireSecured().caFile();
    }

    /** A secured cluster's CA, to make more certificates (a client certificate for mutual TLS, a wrong one). */
    public TestCertificates certificates() {
        return requireSecured();
    }

    /** A bearer token of a secured cluster's user {@code root} (role root), valid for a day. */
    public String rootToken() {
        requireSecured();
        return rootToken;
    }

    /** The password of a secured cluster's user {@code root}, made at random for this cluster. */
    public String rootPassword() {
        requireSecured();
        return rootPassword;
    }

    private TestCertificates requireSecured() {
        if (certificates == null) {
            throw new IllegalStateException("this cluster is not secured: start it with TenureCluster.builder().secured()");
        }
        return certificates;
    }

    /** The client endpoint of member {@code index}. */
    public String endpoint(int index) {
        return configs.get(index).host() + ":" + clientPort(index);
    }

    /** The client port of member {@code index}: the bound one while it runs (a configured 0 picks one at each start). */
    public synchronized int clientPort(int index) {
        TenureServer server = servers.get(index);
        return server != null ? server.clientPort() : configs.get(index).clientPort();
    }

    /** The HTTP port of member {@code index}, as {@link #clientPort}. */
    /** Member {@code index}'s text (dflockd protocol) port: the bound one while it runs, else the configured one. */
    public synchronized int textPort(int index) {
        TenureServer server = servers.get(index);
        return server != null && server.textPort() > 0 ? server.textPort() : configs.get(index).text().port();
    }

    public synchronized int httpPort(int index) {
        TenureServer server = servers.get(index);
        return server != null ? server.httpPort() : configs.get(index).httpPort();
    }

    public int size() {
        return configs.size();
    }

    /** The name of member {@code index} ({@code n1}, {@code n2}, ... unless a {@linkplain Builder#config tweak} named it). */
    public String memberName(int index) {
        return configs.get(index).memberName();
    }

    /** The index of the member named {@code memberName}. */
    public int indexOf(String memberName) {
        for (int i = 0; i < configs.size(); i++) {
            if (configs.get(i).memberName().equals(memberName)) {
                return i;
            }
        }
        throw new IllegalArgumentException("no member " + memberName);
    }

    /** The settings member {@code index} runs with. */
    public ServerConfig config(int index) {
        return configs.get(index);
    }

    /** The smallest lease TTL the members accept. */
    public Duration minTtl() {
        return configs.get(0).minTtl();
    }

    /** A new client for every member (of a secured cluster: over TLS, as {@code root}); closed with the cluster. */
    public TenureClient newClient() {
        return newClient(endpoints());
    }

    /** A new client for the given endpoints (of a secured cluster: over TLS, as {@code root}); closed with the cluster. */
    public TenureClient newClient(List<String> endpoints) {
        return newClient(endpoints, secured() ? rootToken : null);
    }

    /**
     * A new client of a secured cluster's every member, over TLS, showing {@code token} (a user's,
     * from {@code client.auth().authenticate(...)}; null: none); closed with the cluster.
     */
    public TenureClient newClientWithToken(String token) {
        requireSecured();
        return newClient(endpoints(), token);
    }

    private TenureClient newClient(List<String> endpoints, String token) {
        TenureClient.Builder builder = TenureClient.builder().endpoints(endpoints);
        if (certificates != null) {
            builder.tls(certificates.caFile());
        }
        if (token != null) {
            builder.token(token);
        }
        TenureClient client = builder.build();
        clients.add(client);
        return client;
    }

    /** The running server of member {@code index}, or null while it is stopped. */
    public synchronized TenureServer server(int index) {
        return servers.get(index);
    }

    public synchronized boolean isRunning(int index) {
        return servers.get(index) != null;
    }

    /**
     * A gRPC channel to member {@code index}'s client port (of a secured cluster: over TLS, showing
     * root's token), made on first use and shut down when the member stops (after the member, so
     * that calls in flight are cut by the member).
     */
    public synchronized ManagedChannel channel(int index) {
        ManagedChannel channel = channels.get(index);
        if (channel == null) {
            ServerConfig config = configs.get(index);
            channel = certificates == null
                    ? NettyChannelBuilder.forAddress(config.host(), clientPort(index)).usePlaintext().build()
                    : securedChannel(config.host(), clientPort(index));
            channels.set(index, channel);
        }
        return channel;
    }

    /** A blocking stub of member {@code index}'s lock service with a 30 s deadline. */
    public LockServiceGrpc.LockServiceBlockingStub blocking(int index) {
        return LockServiceGrpc.newBlockingStub(channel(index)).withDeadlineAfter(30, TimeUnit.SECONDS);
    }

    /** An asynchronous stub of member {@code index}'s lock service (no deadline). */
    public LockServiceGrpc.LockServiceStub async(int index) {
        return LockServiceGrpc.newStub(channel(index));
    }

    /** A blocking stub of member {@code index}'s cluster (membership) service with a 30 s deadline. */
    public ClusterServiceGrpc.ClusterServiceBlockingStub admin(int index) {
        return ClusterServiceGrpc.newBlockingStub(channel(index)).withDeadlineAfter(30, TimeUnit.SECONDS);
    }

    /**
     * The index of the member that leads, as the running members see it, waiting up to the start
     * timeout for one.
     *
     * @throws IllegalStateException if no leader is known in time
     */
    public int leader() {
        return leaderWait.value(() -> "a leader known to the running members; they see: " + views(), startTimeout, () -> {
            int leader = knownLeader();
            return leader >= 0 ? leader : null;
        });
    }

    /** Stops member {@code index} (as a crash would, but closing its files); no-op when stopped. */
    public void stop(int index) {
        TenureServer server;
        ManagedChannel channel;
        synchronized (this) {
            server = servers.get(index);
            channel = channels.get(index);
            servers.set(index, null);
            channels.set(index, null);
        }
        if (server != null) {
            server.close();
        }
        if (channel != null) {
            channel.shutdownNow();
        }
    }

    /** Starts member {@code index} again from its data directory, on the same ports, and waits for a leader. */
    public void restart(int index) {
        stop(index);
        startMembers(List.of(index));
        leader();
    }

    /** Starts the stopped member {@code index} from its data directory, without waiting for a leader. */
    public void startMember(int index) {
        if (isRunning(index)) {
            throw new IllegalStateException(memberName(index) + " is running");
        }
        startMembers(List.of(index));
    }

    /**
     * Starts a new member, {@code n<size+1>}, to join the running cluster ({@code join}): its peers
     * are the current configuration, as a running member knows it, and itself. It knows no leader
     * (and {@link #leader()} finds none) until a member adds it with {@code MemberAdd}.
     *
     * @return its index
     */
    public int startJoining() {
        Map<String, String> peers = new LinkedHashMap<>();
        TenureServer running = null;
        synchronized (this) {
            for (TenureServer server : servers) {
                running = running != null ? running : server;
            }
        }
        if (running == null) {
            throw new IllegalStateException("no member runs: nothing to join");
        }
        for (io.tenure.proto.v1.Member member : running.member().members()) {
            peers.put(member.getName(), member.getPeerAddress());
        }
        int index = configs.size();
        int[] ports = FreePorts.take(4);
        peers.put(defaultName(index), "127.0.0.1:" + ports[0]);
        ServerConfig config = baseConfig(index, ports[1], ports[2], ports[3]).withPeers(peers).withJoin(true)
                .withElectionTimeout(configs.get(0).electionTimeout());
        add(builder.config.apply(config));
        startMembers(List.of(index));
        return index;
    }

    /** Stops every member, closes the clients made by {@link #newClient()} and deletes the data directory it created. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (TenureClient client : clients) {
            client.close();
        }
        for (int i = 0; i < configs.size(); i++) {
            stop(i);
        }
        if (ownsDataDir) {
            deleteTree(dataDir);
        }
    }

    private static String defaultName(int index) {
        return "n" + (index + 1);
    }

    private ServerConfig baseConfig(int index, int clientPort, int httpPort, int textPort) {
        return ServerConfig.defaults()
                .withMemberName(defaultName(index))
                .withDataDir(dataDir.resolve(defaultName(index)))
                .withClientPort(clientPort)
                .withHttpPort(httpPort)
                .withText(io.tenure.server.text.TextSettings.defaults().withPort(textPort))
                .withSnapshotEvery(builder.snapshotEvery);
    }

    private synchronized void add(ServerConfig config) {
        configs.add(config);
        servers.add(null);
        channels.add(null);
    }

    private ManagedChannel securedChannel(String host, int port) {
        try {
            io.grpc.ChannelCredentials tls = io.grpc.TlsChannelCredentials.newBuilder().trustManager(certificates.caFile().toFile()).build();
            return io.grpc.Grpc.newChannelBuilderForAddress(host, port, tls).intercept(MemberProcess.bearer(() -> rootToken)).build();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the test CA " + certificates.caFile(), e);
        }
    }

    /**
     * Makes the user {@code root} (role root, a random password) through the members' own API and
     * switches authentication on: from then on, every call on every port must show a credential.
     */
    private void secure() {
        String password = "test-" + java.util.UUID.randomUUID();
        try (TenureClient setup = TenureClient.builder().endpoints(endpoints()).tls(certificates.caFile()).build()) {
            setup.auth().addUser("root", password);
            setup.auth().grantRole("root", "root");
            setup.auth().enable();
            rootToken = setup.auth().authenticate("root", password, Duration.ofDays(1));
            rootPassword = password;
        }
    }

    private TenureCluster startAll() {
        List<Integer> all = new ArrayList<>();
        for (int i = 0; i < configs.size(); i++) {
            all.add(i);
        }
        try {
            startMembers(all);
            if (builder.waitForLeader) {
                leader();
            }
            if (certificates != null) {
                secure();
            }
        } catch (RuntimeException | Error e) {
            close();
            throw e;
        }
        return this;
    }

    private void startMembers(List<Integer> indexes) {
        // Members of a cluster start together: each start waits for nothing but its own ports.
        Map<Integer, CompletableFuture<TenureServer>> starting = new LinkedHashMap<>();
        for (int index : indexes) {
            ServerConfig config = configs.get(index);
            starting.put(index, CompletableFuture.supplyAsync(() -> {
                try {
                    return TenureServer.start(config);
                } catch (IOException e) {
                    throw new UncheckedIOException("member " + config.memberName() + " did not start: " + e.getMessage(), e);
                }
            }));
        }
        for (Map.Entry<Integer, CompletableFuture<TenureServer>> entry : starting.entrySet()) {
            try {
                TenureServer server = entry.getValue().get(startTimeout.toMillis(), TimeUnit.MILLISECONDS);
                synchronized (this) {
                    servers.set(entry.getKey(), server);
                }
            } catch (ExecutionException e) {
                throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
            } catch (TimeoutException e) {
                throw new IllegalStateException("member " + memberName(entry.getKey()) + " did not start within " + startTimeout, e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while starting the members", e);
            }
        }
    }

    /** What each member sees (leader, term, commit and applied index, whether it leads and is ready): for a wait's failure message. */
    public synchronized String views() {
        StringBuilder views = new StringBuilder();
        for (int i = 0; i < servers.size(); i++) {
            TenureServer server = servers.get(i);
            views.append(i == 0 ? "" : "; ").append(memberName(i)).append(": ");
            if (server == null) {
                views.append("stopped");
                continue;
            }
            try {
                StatusResponse status = server.member().status(ResponseHeader.getDefaultInstance());
                views.append("leader=").append(status.getLeader().isEmpty() ? "none" : status.getLeader())
                        .append(" term=").append(status.getRaftTerm())
                        .append(" commit=").append(status.getCommitIndex())
                        .append(" applied=").append(status.getAppliedIndex())
                        .append(" ready=").append(server.member().leaderReady())
                        .append(" endpoints=");
                for (io.tenure.proto.v1.Member m : status.getMembersList()) {
                    views.append(m.getName()).append(m.getClientEndpoint().isEmpty() ? "?" : "+");
                }
            } catch (RuntimeException e) {
                views.append(e);
            }
        }
        return views.toString();
    }

    /** The leader every running member agrees on and that runs here, or -1. */
    private synchronized int knownLeader() {
        String leader = null;
        for (TenureServer server : servers) {
            if (server == null) {
                continue;
            }
            StatusResponse status = server.member().status(ResponseHeader.getDefaultInstance());
            if (status.getLeader().isEmpty() || (leader != null && !leader.equals(status.getLeader()))) {
                return -1;
            }
            leader = status.getLeader();
        }
        for (int i = 0; leader != null && i < servers.size(); i++) {
            if (servers.get(i) != null && memberName(i).equals(leader) && servers.get(i).member().leaderReady()) {
                return i;
            }
        }
        return -1;
    }

    private static void deleteTree(Path root) {
        try {
            Files.walkFileTree(root, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    Files.deleteIfExists(file);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path dir, IOException e) throws IOException {
                    Files.deleteIfExists(dir);
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException("could not delete the test data directory " + root, e);
        }
    }

    /** Options for a {@link TenureCluster}. */
    public static final class Builder {
        private int members = 1;
        private Duration electionTimeout = DEFAULT_ELECTION_TIMEOUT;
        private Path dataDir;
        private long snapshotEvery = ServerConfig.DEFAULT_SNAPSHOT_EVERY;
        private Duration startTimeout = Duration.ofSeconds(60);
        private UnaryOperator<ServerConfig> config = c -> c;
        private boolean waitForLeader = true;
        private boolean secured;

        private Builder() {
        }

        /** How many members (default 1); 3 or 5 for failover tests. */
        public Builder members(int members) {
            if (members < 1) {
                throw new IllegalArgumentException("members must be at least 1, got " + members);
            }
            this.members = members;
            return this;
        }

        /** The Raft election timeout of a cluster of several members (default 250 ms). */
        public Builder electionTimeout(Duration electionTimeout) {
            this.electionTimeout = Objects.requireNonNull(electionTimeout, "electionTimeout");
            return this;
        }

        /** Where the members keep their data, each in {@code DIR/NAME} (default: a temporary directory deleted on close). */
        public Builder dataDir(Path dataDir) {
            this.dataDir = Objects.requireNonNull(dataDir, "dataDir");
            return this;
        }

        /** Applied entries between snapshots (default as the server's); small values exercise snapshot transfer. */
        public Builder snapshotEvery(long snapshotEvery) {
            this.snapshotEvery = snapshotEvery;
            return this;
        }

        /** How long starting the members and electing a leader may take (default 60 s). */
        public Builder startTimeout(Duration startTimeout) {
            this.startTimeout = Objects.requireNonNull(startTimeout, "startTimeout");
            return this;
        }

        /**
         * Changes each member's settings after the cluster's own (name, data directory, free ports,
         * peers, election timeout, snapshot threshold): for example limits, a shutdown timeout, a
         * data directory of the test's own ({@code c -> c.withDataDir(dir)} for one member), or port 0
         * to let the member pick its ports at each start. {@link ServerConfig#memberName()} tells the
         * members apart; a new name is the member's name here too.
         */
        public Builder config(UnaryOperator<ServerConfig> tweak) {
            UnaryOperator<ServerConfig> before = this.config;
            Objects.requireNonNull(tweak, "tweak");
            this.config = c -> tweak.apply(before.apply(c));
            return this;
        }

        /**
         * Whether {@link #start()} waits until the members have a leader (default true); false for a
         * member that cannot have one (its peers never start).
         */
        public Builder waitForLeader(boolean waitForLeader) {
            this.waitForLeader = waitForLeader;
            return this;
        }

        /**
         * Members as production runs them: TLS on every port (client, HTTP, text and peer, with
         * certificates of a test CA, {@link TenureCluster#caFile()}) and authentication on, with a
         * user {@code root} whose token ({@link TenureCluster#rootToken()}) the cluster's own
         * clients show. Tests then add users and roles through {@code client.auth()}.
         */
        public Builder secured() {
            this.secured = true;
            return this;
        }

        /** Starts the members and waits until one leads (unless told not to wait). */
        public TenureCluster start() {
            try {
                return new TenureCluster(this).startAll();
            } catch (IOException e) {
                throw new UncheckedIOException("could not create the test data directory: " + e.getMessage(), e);
            }
        }
    }
}
