package io.tenure.it;

import io.tenure.proto.v1.StatusResponse;
import io.tenure.server.ServerConfig;
import io.tenure.testing.Await;
import io.tenure.testing.FreePorts;
import io.tenure.testing.MemberProcess;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * A Tenure cluster of real {@code tenure server} processes on 127.0.0.1 (or where a {@link Placement} puts them), for process-level
 * tests. Members are named n1, n2, ...; each has its own free client, peer and HTTP ports, its data
 * directory {@code DIR/NAME} and its log {@code DIR/NAME.log} (registered with {@link ItLogs},
 * which prints their tails when a test fails).
 *
 * <p>Every wait re-checks its condition every 50 ms until a deadline ({@link Await#PROCESSES});
 * nothing sleeps for a fixed time in place of a condition. Each member is a {@link MemberProcess}.
 */
public final class Cluster implements AutoCloseable {
    /** Starting JVMs (3-5 at once on 2 cores) and electing a leader. */
    public static final Duration START_LIMIT = Duration.ofSeconds(120);
    /** A new leader after the old one died: a few election timeouts, generously. */
    public static final Duration ELECTION_LIMIT = Duration.ofSeconds(60);
    private static final Pattern SNAPSHOT_FILE = Pattern.compile("snapshot\\.(\\d+)_(\\d+)");
    private static final Pattern CLOSED_SEGMENT = Pattern.compile("log_(\\d+)-(\\d+)");
    private static final Pattern OPEN_SEGMENT = Pattern.compile("log_inprogress_(\\d+)");
    /** A SOFAJRaft snapshot directory (jraft/snapshot/snapshot_INDEX); its log is in RocksDB, without segment files. */
    private static final Pattern JRAFT_SNAPSHOT = Pattern.compile("snapshot_(\\d+)");
    /** Per JRaft member, the snapshot indexes seen here, to tell where its log starts (see {@link #firstLogIndex}). */
    private final Map<String, java.util.TreeSet<Long>> jraftSnapshotsSeen = new java.util.concurrent.ConcurrentHashMap<>();

    /** How to start the members. */
    public static final class Options {
        int size = 3;
        /** {@code --snapshot-every}; 0 leaves the server's default. */
        long snapshotEvery;
        /** {@code --election-timeout}; null leaves the server's default. */
        Duration electionTimeout;
        final List<String> extraArgs = new ArrayList<>();
        /** Arguments of one member only, by its name (for example a file of its own); after {@link #extraArgs}. */
        Function<String, List<String>> memberArgs = name -> List.of();
        /**
         * Where a member keeps its files: false, data in {@code DIR/NAME} and log in {@code DIR/NAME.log};
         * true, both under a folder of its own, {@code DIR/NAME/data} and {@code DIR/NAME/member.log}.
         */
        boolean nested;
        /** Where each member runs (its address, and a network namespace around its command); loopback by default. */
        Placement placement = Placement.LOOPBACK;

        /**
         * Each member's peer port is a {@link PeerProxy} in front of it (started where the member
         * runs), so that its peer links can be slowed (F11): the others reach the member at the
         * proxy's port, the member binds another ({@code --peer-listen-port}).
         */
        boolean peerProxies;
        /** The CA of members that serve TLS on their client ports (their {@code --cert-file}); null: plaintext. */
        Path trustedCa;
        /** The bearer token calls to the members show once authentication is on (read at each call; null: none). */
        java.util.function.Supplier<String> token = () -> null;

        /**
         * For members with TLS on their client ports and, later, authentication: the CA that signed
         * their certificates, and the token this cluster's own calls (status, membership, its
         * clients) show, read at each call.
         */
        public Options secured(Path trustedCa, java.util.function.Supplier<String> token) {
            this.trustedCa = trustedCa;
            this.token = token;
            return this;
        }

        public Options peerProxies() {
            this.peerProxies = true;
            return this;
        }

        /** Runs the members where {@code placement} says (for example each in a network namespace of its own). */
        public Options placement(Placement placement) {
            this.placement = placement;
            return this;
        }

        /** Adds arguments for one member only (see {@link #memberArgs}). */
        public Options memberArgs(Function<String, List<String>> args) {
            this.memberArgs = args;
            return this;
        }

        /** Each member's data and log in a folder of its own (see {@link #nested}). */
        public Options nested() {
            this.nested = true;
            return this;
        }

        public Options size(int size) {
            this.size = size;
            return this;
        }

        public Options snapshotEvery(long entries) {
            this.snapshotEvery = entries;
            return this;
        }

        public Options electionTimeout(Duration timeout) {
            this.electionTimeout = timeout;
            return this;
        }
    }

    private final Path dir;
    private final Options options;
    /** The members of the current configuration, in the order they were created. */
    private final Map<String, MemberProcess> members = new LinkedHashMap<>();
    /** Members prepared or started but not (yet) in the configuration, and removed ones. */
    private final Map<String, MemberProcess> others = new LinkedHashMap<>();
    private final Thread killOnExit;
    /** The members' peer proxies, when {@link Options#peerProxies} asked for them. */
    private final PeerProxies proxies = new PeerProxies();
    private int nextNumber = 1;

    private Cluster(Path dir, Options options) {
        this.dir = dir;
        this.options = options;
        // Should this JVM end without closing the cluster (a surefire timeout), leave no member behind.
        this.killOnExit = new Thread(() -> {
            allProcesses().forEach(MemberProcess::beginClose);
            proxies.killAll();
        }, "tenure-it-cluster-cleanup");
        Runtime.getRuntime().addShutdownHook(killOnExit);
    }

    static Cluster start(Path dir, int size) throws IOException {
        return start(dir, new Options().size(size));
    }

    /** Starts {@code options.size} members, waits until each serves and they agree on a leader. */
    public static Cluster start(Path dir, Options options) throws IOException {
        Cluster cluster = new Cluster(dir, options);
        try {
            List<String> names = new ArrayList<>();
            // Client, peer and HTTP port of each member, all distinct; and the port it binds behind its peer proxy.
            int[] ports = FreePorts.take((options.peerProxies ? 4 : 3) * options.size);
            // Their text ports, distinct from all of those: each member's own choice would avoid only its own ports
            // (a CI run started n1's text port on n3's peer port, chosen a moment before and not yet bound).
            int[] textPorts = FreePorts.take(options.size, java.util.Arrays.stream(ports).boxed().collect(java.util.stream.Collectors.toSet()));
            int[] behindProxy = new int[options.size];
            for (int i = 0; options.peerProxies && i < options.size; i++) {
                behindProxy[i] = ports[3 * options.size + i];
            }
            for (int i = 0; i < options.size; i++) {
                names.add("n" + cluster.nextNumber++);
            }
            String peers = peersOf(names, ports, options.placement);
            for (int i = 0; i < options.size; i++) {
                String name = names.get(i);
                cluster.startProxy(name, ports[3 * i + 1], behindProxy[i]);
                cluster.members.put(name, cluster.newMember(name, ports[3 * i], ports[3 * i + 1], ports[3 * i + 2], textPorts[i], peers,
                        cluster.memberArgs(name, false, behindProxy[i])));
            }
            for (MemberProcess member : cluster.members.values()) {
                member.launch();
            }
            long deadline = System.nanoTime() + START_LIMIT.toNanos();
            for (MemberProcess member : cluster.members.values()) {
                member.awaitServing(Duration.ofNanos(Math.max(deadline - System.nanoTime(), 1)), true);
            }
            cluster.awaitLeader(START_LIMIT);
            return cluster;
        } catch (IOException | RuntimeException | Error e) {
            cluster.close();
            throw e;
        }
    }

    private static String peersOf(List<String> names, int[] ports, Placement placement) {
        List<String> parts = new ArrayList<>();
        for (int i = 0; i < names.size(); i++) {
            parts.add(names.get(i) + "=" + placement.host(names.get(i)) + ":" + ports[3 * i + 1]);
        }
        return String.join(",", parts);
    }

    /** A member (not started) placed where the options say, its log registered with {@link ItLogs}. */
    /** {@code textPort}: 0 to let the member choose one besides its own other ports. */
    private MemberProcess newMember(String name, int clientPort, int peerPort, int httpPort, int textPort, String peers, List<String> args) {
        MemberProcess.Builder member = ItLogs.member(name, dataDirOf(name)).logFile(logOf(name))
                .host(options.placement.host(name)).wrapper(command -> options.placement.wrap(name, command))
                .clientPort(clientPort).peerPort(peerPort).httpPort(httpPort).textPort(textPort).peers(peers).args(args).token(options.token);
        if (options.trustedCa != null) {
            member.clientTls(options.trustedCa, null, null);
        }
        return member.build();
    }

    /** A client of {@code endpoints}, over TLS with the cluster's token when it is {@linkplain Options#secured secured}. */
    public io.tenure.client.TenureClient.Builder client(List<String> endpoints) {
        io.tenure.client.TenureClient.Builder builder = io.tenure.client.TenureClient.builder().endpoints(endpoints);
        if (options.trustedCa != null) {
            builder.tls(options.trustedCa);
        }
        String token = options.token.get();
        if (token != null) {
            builder.token(token);
        }
        return builder;
    }

    /** A gRPC channel to a client endpoint, over TLS with the cluster's token when it is {@linkplain Options#secured secured}. */
    public io.grpc.ManagedChannel channel(String endpoint) {
        io.grpc.ChannelCredentials credentials = io.grpc.InsecureChannelCredentials.create();
        if (options.trustedCa != null) {
            try {
                credentials = io.grpc.TlsChannelCredentials.newBuilder().trustManager(options.trustedCa.toFile()).build();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return io.grpc.Grpc.newChannelBuilder(endpoint, credentials).intercept(MemberProcess.bearer(options.token)).build();
    }

    private Path dataDirOf(String name) {
        return options.nested ? dir.resolve(name).resolve("data") : dir.resolve(name);
    }

    private Path logOf(String name) {
        return options.nested ? dir.resolve(name).resolve("member.log") : dir.resolve(name + ".log");
    }

    /** With {@link Options#peerProxies}: starts {@code name}'s proxy on its peer port, in front of {@code behind}. */
    private void startProxy(String name, int peerPort, int behind) throws IOException {
        if (options.peerProxies) {
            proxies.start(name, options.placement, options.placement.host(name), peerPort, behind, logOf(name));
        }
    }

    /** The members' peer proxies (F11); only with {@link Options#peerProxies}. */
    public PeerProxies peerProxies() {
        if (!options.peerProxies) {
            throw new IllegalStateException("this cluster runs without peer proxies");
        }
        return proxies;
    }

    public boolean hasPeerProxies() {
        return options.peerProxies;
    }

    private List<String> memberArgs(String name, boolean join, int behindProxy) {
        List<String> args = new ArrayList<>();
        if (behindProxy != 0) {
            args.addAll(List.of("--peer-listen-port", Integer.toString(behindProxy)));
        }
        if (options.snapshotEvery > 0) {
            args.addAll(List.of("--snapshot-every", Long.toString(options.snapshotEvery)));
        }
        if (options.electionTimeout != null) {
            args.addAll(List.of("--election-timeout", options.electionTimeout.toMillis() + "ms"));
        }
        // -Dtenure.it.raftEngine=jraft runs every process-level test's members on SOFAJRaft.
        String engine = System.getProperty("tenure.it.raftEngine", "");
        if (!engine.isEmpty()) {
            args.addAll(List.of("--raft-engine", engine));
        }
        args.addAll(options.extraArgs);
        args.addAll(options.memberArgs.apply(name));
        if (join) {
            args.add("--join");
        }
        return args;
    }

    /** The election timeout the members run with. */
    public Duration electionTimeout() {
        return options.electionTimeout != null ? options.electionTimeout : ServerConfig.DEFAULT_ELECTION_TIMEOUT;
    }

    /** The names of the current configuration's members. */
    public List<String> names() {
        return List.copyOf(members.keySet());
    }

    public MemberProcess member(String name) {
        MemberProcess member = members.get(name);
        if (member == null) {
            member = others.get(name);
        }
        if (member == null) {
            throw new IllegalArgumentException("no member " + name + " (members: " + members.keySet() + ")");
        }
        return member;
    }

    /** Client endpoints of every member of the configuration, in member order. */
    public List<String> endpoints() {
        return members.values().stream().map(MemberProcess::endpoint).collect(Collectors.toList());
    }

    /** Client endpoints of the named members, in the order given. */
    public List<String> endpoints(String... names) {
        return Stream.of(names).map(n -> member(n).endpoint()).collect(Collectors.toList());
    }

    /** Members of the configuration whose process runs. */
    public List<String> live() {
        return members.values().stream().filter(MemberProcess::isAlive).map(MemberProcess::name).collect(Collectors.toList());
    }

    /** Status from one member, or null when it does not answer within 2 s. */
    public StatusResponse statusOrNull(String name) {
        return member(name).statusOrNull();
    }

    /** Status of each live member that answers. */
    Map<String, StatusResponse> statuses() {
        Map<String, StatusResponse> answers = new LinkedHashMap<>();
        for (String name : live()) {
            StatusResponse status = statusOrNull(name);
            if (status != null) {
                answers.put(name, status);
            }
        }
        return answers;
    }

    /**
     * Waits until a live member says it leads and a majority of the configuration names it as
     * leader in the same term; returns its name.
     */
    public String awaitLeader(Duration limit) {
        return Await.PROCESSES.value("a leader agreed by a majority of " + members.keySet(), limit, this::agreedLeader);
    }

    String awaitLeader() {
        return awaitLeader(ELECTION_LIMIT);
    }

    /** The current leader (waits for one if there is none). */
    public String leader() {
        return awaitLeader();
    }

    /** Waits for a leader other than {@code old} (which is dead, removed or deposed). */
    public String awaitNewLeader(String old, Duration limit) {
        return Await.PROCESSES.value("a leader other than " + old, limit, () -> {
            String leader = agreedLeader();
            return leader != null && !leader.equals(old) ? leader : null;
        });
    }

    private String agreedLeader() {
        Map<String, StatusResponse> answers = statuses();
        int majority = members.size() / 2 + 1;
        for (Map.Entry<String, StatusResponse> self : answers.entrySet()) {
            StatusResponse status = self.getValue();
            if (!self.getKey().equals(status.getLeader())) {
                continue;
            }
            long agreeing = answers.values().stream()
                    .filter(s -> s.getLeader().equals(self.getKey()) && s.getRaftTerm() == status.getRaftTerm())
                    .count();
            if (agreeing >= majority) {
                return self.getKey();
            }
        }
        return null;
    }

    /** The live members other than the current leader. */
    public List<String> followers() {
        String leader = leader();
        return live().stream().filter(n -> !n.equals(leader)).collect(Collectors.toList());
    }

    /** Waits until {@code name} has applied everything the leader had committed when this is called. */
    public void awaitCaughtUp(String name) {
        long commit = Await.PROCESSES.value("the leader's commit index", ELECTION_LIMIT, () -> {
            StatusResponse status = statusOrNull(leader());
            return status == null ? null : status.getCommitIndex();
        });
        Await.PROCESSES.until(name + " applies up to " + commit, START_LIMIT, () -> {
            StatusResponse status = statusOrNull(name);
            return status != null && status.getAppliedIndex() >= commit;
        });
    }

    public void kill9(String name) throws InterruptedException {
        member(name).kill9();
    }

    /** SIGTERM, and waits until the process has exited. */
    public void stop(String name) throws InterruptedException {
        member(name).stop();
    }

    /** Starts a killed or stopped member again with its data directory; waits until it knows a leader. */
    public void restart(String name) throws IOException {
        MemberProcess member = member(name);
        member.launch();
        member.awaitServing(START_LIMIT, true);
    }

    /** SIGSTOP: the process stops answering but keeps its sockets open. */
    public void pause(String name) throws IOException, InterruptedException {
        member(name).pause();
    }

    public void resume(String name) throws IOException, InterruptedException {
        member(name).resume();
    }

    /**
     * Prepares (does not start) a new member to join the cluster: new name and ports, started
     * with {@code --join} and the peer list of the current configuration plus itself.
     */
    public MemberProcess prepareJoin() throws IOException {
        String name = "n" + nextNumber++;
        int[] ports = FreePorts.take(options.peerProxies ? 4 : 3);
        int behind = options.peerProxies ? ports[3] : 0;
        startProxy(name, ports[1], behind);
        List<String> parts = new ArrayList<>();
        members.values().forEach(m -> parts.add(m.name() + "=" + m.peerAddress()));
        parts.add(name + "=" + options.placement.host(name) + ":" + ports[1]);
        MemberProcess joining = newMember(name, ports[0], ports[1], ports[2], 0, String.join(",", parts), memberArgs(name, true, behind));
        others.put(name, joining);
        return joining;
    }

    /** Records that {@code name} is now a member of the configuration (after MemberAdd succeeded). */
    public void added(String name) {
        MemberProcess member = others.remove(name);
        if (member == null) {
            throw new IllegalArgumentException("no prepared member " + name);
        }
        members.put(name, member);
    }

    /** Records that {@code name} is no longer a member of the configuration (after MemberRemove). */
    public void removed(String name) {
        MemberProcess member = members.remove(name);
        if (member == null) {
            throw new IllegalArgumentException("no member " + name);
        }
        others.put(name, member);
    }

    /** The highest index of a snapshot in the member's data directory, or -1 when it has none. */
    public long snapshotIndex(String name) {
        Path dir = member(name).dataDir();
        if (Files.isDirectory(dir.resolve("jraft"))) {
            long latest = scan(dir.resolve("jraft"), JRAFT_SNAPSHOT, 1).stream().mapToLong(Long::longValue).max().orElse(-1);
            if (latest >= 0) {
                java.util.TreeSet<Long> seen = jraftSnapshotsSeen.computeIfAbsent(name, n -> new java.util.TreeSet<>());
                synchronized (seen) {
                    seen.add(latest);
                }
            }
            return latest;
        }
        return scan(dir, SNAPSHOT_FILE, 2).stream().mapToLong(Long::longValue).max().orElse(-1);
    }

    /**
     * The first index still in the member's log (the lowest segment start), or empty when it has no
     * segment. A JRaft member's log is in RocksDB: JRaft cuts it, when it takes a snapshot, up to
     * the snapshot before; so its log starts after the second newest snapshot {@link #snapshotIndex}
     * has seen (or earlier, when one was taken between two looks).
     */
    public OptionalLong firstLogIndex(String name) {
        if (Files.isDirectory(member(name).dataDir().resolve("jraft"))) {
            snapshotIndex(name);
            java.util.TreeSet<Long> seen = jraftSnapshotsSeen.getOrDefault(name, new java.util.TreeSet<>());
            synchronized (seen) {
                return seen.size() < 2 ? OptionalLong.empty() : OptionalLong.of(seen.lower(seen.last()) + 1);
            }
        }
        List<Long> starts = new ArrayList<>(scan(member(name).dataDir(), CLOSED_SEGMENT, 1));
        starts.addAll(scan(member(name).dataDir(), OPEN_SEGMENT, 1));
        return starts.stream().mapToLong(Long::longValue).min();
    }

    /** Group {@code group} of every file name under {@code root} that matches {@code pattern}. */
    private static List<Long> scan(Path root, Pattern pattern, int group) {
        for (int attempt = 0; ; attempt++) {
            try (Stream<Path> files = Files.walk(root)) {
                List<Long> found = new ArrayList<>();
                files.forEach(file -> {
                    Matcher m = pattern.matcher(file.getFileName().toString());
                    if (m.matches()) {
                        found.add(Long.parseLong(m.group(group)));
                    }
                });
                return found;
            } catch (NoSuchFileException e) {
                if (!Files.exists(root)) {
                    return List.of();
                }
            } catch (UncheckedIOException e) {
                // A file vanished while walking (the member purged its log): look again.
                if (attempt >= 10) {
                    throw e;
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    private Collection<MemberProcess> allProcesses() {
        List<MemberProcess> all = new ArrayList<>(members.values());
        all.addAll(others.values());
        return all;
    }

    /** Stops every member (SIGTERM to all at once, kill -9 after 20 s). */
    @Override
    public void close() {
        Collection<MemberProcess> all = allProcesses();
        all.forEach(MemberProcess::beginClose);
        for (MemberProcess member : all) {
            try {
                member.close();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        proxies.close();
        try {
            Runtime.getRuntime().removeShutdownHook(killOnExit);
        } catch (IllegalStateException exiting) {
            // The JVM is shutting down; the hook runs anyway.
        }
    }

    @Override
    public String toString() {
        return "Cluster" + members.values() + (others.isEmpty() ? "" : " others " + others.values());
    }
}
