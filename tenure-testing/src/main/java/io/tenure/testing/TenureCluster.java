package io.tenure.testing;

import io.tenure.client.TenureClient;
import io.tenure.proto.v1.ResponseHeader;
import io.tenure.proto.v1.StatusResponse;
import io.tenure.server.ServerConfig;
import io.tenure.server.TenureServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
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
import java.util.concurrent.locks.LockSupport;

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
 * 1 s with one member, 30 election timeouts with several ({@link Builder#electionTimeout}; 250 ms
 * here by default, so 7.5 s).
 */
public final class TenureCluster implements AutoCloseable {
    /** The election timeout of a cluster of several members unless the builder sets another. */
    public static final Duration DEFAULT_ELECTION_TIMEOUT = Duration.ofMillis(250);

    private final List<ServerConfig> configs;
    private final TenureServer[] servers;
    private final Path dataDir;
    private final boolean ownsDataDir;
    private final Duration startTimeout;
    private final List<TenureClient> clients = new CopyOnWriteArrayList<>();
    private volatile boolean closed;

    private TenureCluster(Builder builder) throws IOException {
        this.ownsDataDir = builder.dataDir == null;
        this.dataDir = ownsDataDir ? Files.createTempDirectory("tenure-test-") : builder.dataDir;
        this.startTimeout = builder.startTimeout;
        int size = builder.members;
        Map<String, String> peers = new LinkedHashMap<>();
        List<Integer> clientPorts = new ArrayList<>();
        List<Integer> httpPorts = new ArrayList<>();
        int[] ports = freePorts(3 * size);
        for (int i = 0; i < size; i++) {
            peers.put(memberName(i), "127.0.0.1:" + ports[3 * i]);
            clientPorts.add(ports[3 * i + 1]);
            httpPorts.add(ports[3 * i + 2]);
        }
        List<ServerConfig> list = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            ServerConfig config = ServerConfig.defaults()
                    .withMemberName(memberName(i))
                    .withDataDir(dataDir.resolve(memberName(i)))
                    .withClientPort(clientPorts.get(i))
                    .withHttpPort(httpPorts.get(i))
                    .withSnapshotEvery(builder.snapshotEvery);
            if (size > 1) {
                config = config.withPeers(peers).withElectionTimeout(builder.electionTimeout);
            } else {
                config = config.withPeerPort(Integer.parseInt(peers.get(memberName(i)).split(":")[1]));
            }
            list.add(config);
        }
        this.configs = List.copyOf(list);
        this.servers = new TenureServer[size];
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
        for (ServerConfig config : configs) {
            endpoints.add(config.host() + ":" + config.clientPort());
        }
        return endpoints;
    }

    /** The HTTP endpoint ({@code http://127.0.0.1:port}) of member {@code index}: JSON API, /metrics, /healthz, /readyz. */
    public String httpEndpoint(int index) {
        ServerConfig config = configs.get(index);
        return "http://" + config.host() + ":" + config.httpPort();
    }

    /** The client endpoint of member {@code index}. */
    public String endpoint(int index) {
        ServerConfig config = configs.get(index);
        return config.host() + ":" + config.clientPort();
    }

    public int size() {
        return configs.size();
    }

    /** The name of member {@code index} ({@code n1}, {@code n2}, ...). */
    public String memberName(int index) {
        return "n" + (index + 1);
    }

    /** The smallest lease TTL the members accept. */
    public Duration minTtl() {
        return configs.get(0).minTtl();
    }

    /** A new client for every member; closed with the cluster. */
    public TenureClient newClient() {
        return newClient(endpoints());
    }

    /** A new client for the given endpoints; closed with the cluster. */
    public TenureClient newClient(List<String> endpoints) {
        TenureClient client = TenureClient.connect(endpoints);
        clients.add(client);
        return client;
    }

    /** The running server of member {@code index}, or null while it is stopped. */
    public TenureServer server(int index) {
        return servers[index];
    }

    public synchronized boolean isRunning(int index) {
        return servers[index] != null;
    }

    /**
     * The index of the member that leads, as the running members see it, waiting up to the start
     * timeout for one.
     *
     * @throws IllegalStateException if no leader is known in time
     */
    public int leader() {
        long deadline = System.nanoTime() + startTimeout.toNanos();
        while (true) {
            int leader = knownLeader();
            if (leader >= 0) {
                return leader;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("no leader known to the running members within " + startTimeout);
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
        }
    }

    /** Stops member {@code index} (as a crash would, but closing its files); no-op when stopped. */
    public synchronized void stop(int index) {
        TenureServer server = servers[index];
        servers[index] = null;
        if (server != null) {
            server.close();
        }
    }

    /** Starts member {@code index} again from its data directory, on the same ports. */
    public void restart(int index) {
        stop(index);
        startMembers(List.of(index));
        awaitLeader();
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
        for (int i = 0; i < servers.length; i++) {
            stop(i);
        }
        if (ownsDataDir) {
            deleteTree(dataDir);
        }
    }

    private TenureCluster startAll() {
        List<Integer> all = new ArrayList<>();
        for (int i = 0; i < configs.size(); i++) {
            all.add(i);
        }
        try {
            startMembers(all);
            awaitLeader();
        } catch (RuntimeException e) {
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
                    servers[entry.getKey()] = server;
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

    private void awaitLeader() {
        leader();
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
        for (int i = 0; leader != null && i < servers.length; i++) {
            if (servers[i] != null && memberName(i).equals(leader) && servers[i].member().leaderReady()) {
                return i;
            }
        }
        return -1;
    }

    /** {@code n} distinct free ports: every socket stays open until all are chosen, so none repeats. */
    private static int[] freePorts(int n) {
        List<ServerSocket> held = new ArrayList<>();
        try {
            int[] ports = new int[n];
            for (int i = 0; i < n; i++) {
                ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                held.add(socket);
                ports[i] = socket.getLocalPort();
            }
            return ports;
        } catch (IOException e) {
            throw new UncheckedIOException("no free port on 127.0.0.1", e);
        } finally {
            for (ServerSocket socket : held) {
                try {
                    socket.close();
                } catch (IOException ignored) {
                    // closing a listening socket that accepted nothing does not fail in practice
                }
            }
        }
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

        /** Where the members keep their data (default: a temporary directory deleted on close). */
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

        /** Starts the members and waits until one leads. */
        public TenureCluster start() {
            try {
                return new TenureCluster(this).startAll();
            } catch (IOException e) {
                throw new UncheckedIOException("could not create the test data directory: " + e.getMessage(), e);
            }
        }
    }
}
