package io.tenure.testing;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.tenure.proto.v1.ClusterServiceGrpc;
import io.tenure.proto.v1.LockServiceGrpc;
import io.tenure.proto.v1.StatusRequest;
import io.tenure.proto.v1.StatusResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

/**
 * A real {@code tenure server} in a child JVM with this JVM's class path (see {@link ChildJava}),
 * for process-level tests and the bench: kill -9, SIGSTOP, SIGTERM and restarts of a real process.
 * Its output is appended to a log file kept across restarts, so one file tells a member's whole
 * story. Only the process this object started is ever signalled, by its own pid.
 *
 * <pre>{@code
 * try (MemberProcess member = MemberProcess.single(dir.resolve("data")).start()) {   // n1, free ports
 *     member.blocking().leaseGrant(...);
 *     member.kill9();
 *     member.launch();
 *     member.awaitServing(Duration.ofSeconds(60), true);
 * }
 * }</pre>
 *
 * <p>The child runs {@code io.tenure.cli.TenureCli server ...}, or, when the CLI is not on the class
 * path (the bench's own tests: the CLI depends on the bench), {@code io.tenure.bench.MemberMain},
 * which takes the same few options. Nothing here depends on either at compile time. A
 * {@linkplain Builder#wrapper command wrapper} may place the process elsewhere (for example
 * {@code ip netns exec NS}, which execs in place, so the pid stays the server's).
 *
 * <p>Waits re-check every 50 ms ({@link Await#PROCESSES}: each check is an RPC to another JVM) until a deadline.
 */
public final class MemberProcess implements AutoCloseable {
    /** The CLI's entry point. */
    public static final String CLI_MAIN = "io.tenure.cli.TenureCli";
    /** The bench's member entry point, for class paths without the CLI. */
    public static final String MEMBER_MAIN = "io.tenure.bench.MemberMain";
    /** How long {@link #start()} waits for a single member to serve. */
    public static final Duration START_LIMIT = Duration.ofSeconds(60);
    /** Printed by {@code tenure server} on stdout, and logged as {@code event=serving}, once it serves clients. */
    private static final List<String> SERVING_MARKS = List.of("serving clients on", "event=serving");
    private static final String LOOPBACK = "127.0.0.1";

    private final String name;
    private final Path dataDir;
    private final Path logFile;
    private final String host;
    private final int clientPort;
    private final int peerPort;
    private final int httpPort;
    private final int textPort;
    private final List<String> serverArgs;
    private final String mainClass;
    private final List<String> jvmOptions;
    private final boolean ownClassPath;
    private final UnaryOperator<List<String>> wrapper;
    private final Consumer<MemberProcess> onLaunch;
    /** How this object's own status calls reach the member: plaintext, or TLS when it serves TLS. */
    private final io.grpc.ChannelCredentials statusCredentials;
    /** The bearer token this object's own calls show (a member with authentication on); null: none. */
    private final java.util.function.Supplier<String> token;
    private volatile Process process;
    private volatile ManagedChannel channel;
    private volatile long logOffsetAtStart;
    /** Variables added to the environment of the next launches (for example libfaketime's). */
    private volatile Map<String, String> environment = Map.of();

    private MemberProcess(Builder b, int clientPort, int peerPort, int httpPort, int textPort) {
        this.name = b.name;
        this.dataDir = b.dataDir;
        this.logFile = b.logFile != null ? b.logFile : b.dataDir.resolveSibling(b.dataDir.getFileName() + ".log");
        this.host = b.host;
        this.clientPort = clientPort;
        this.peerPort = peerPort;
        this.httpPort = httpPort;
        this.textPort = textPort;
        this.mainClass = b.mainClass;
        this.jvmOptions = b.jvmOptions;
        this.ownClassPath = b.ownClassPath;
        this.wrapper = b.wrapper;
        this.onLaunch = b.onLaunch;
        this.statusCredentials = b.statusCredentials;
        this.token = b.token;
        List<String> args = new ArrayList<>(List.of("--id", name));
        if (b.peers != null) {
            args.addAll(List.of("--peers", b.peers));
        }
        if (!host.equals(LOOPBACK)) {
            args.addAll(List.of("--host", host));
        }
        if (!io.tenure.server.ServerConfig.loopback(host) || (b.peers != null && java.util.Arrays.stream(b.peers.split(","))
                .anyMatch(peer -> !io.tenure.server.ServerConfig.loopback(io.tenure.server.ServerConfig.hostOf(peer.substring(peer.indexOf('=') + 1)))))) {
            // The test's own network namespaces: plain TCP beyond loopback is what the test is about.
            args.add("--insecure");
        }
        args.addAll(List.of("--client-port", Integer.toString(clientPort)));
        if (b.peers == null) {
            // With peers, the member's own entry names its peer port.
            args.addAll(List.of("--peer-port", Integer.toString(peerPort)));
        }
        args.addAll(List.of("--http-port", Integer.toString(httpPort), "--text-port", Integer.toString(textPort),
                "--data-dir", dataDir.toString()));
        args.addAll(b.extraArgs);
        this.serverArgs = List.copyOf(args);
    }

    /** A member to be described further; see {@link Builder}. */
    public static Builder builder(String name, Path dataDir) {
        return new Builder(name, dataDir);
    }

    /** A single member n1 (no peers) with free ports, its log beside its data directory ({@code DATA.log}); not started. */
    public static MemberProcess single(Path dataDir) {
        return builder("n1", dataDir).build();
    }

    /**
     * Sets variables added to the environment of every later {@link #launch()} (empty: none), for
     * example {@code LD_PRELOAD} and {@code FAKETIME} to start the member with a skewed clock.
     */
    public void environment(Map<String, String> variables) {
        this.environment = Map.copyOf(variables);
    }

    /** Launches the member and waits up to {@link #START_LIMIT} until it serves and names a leader. */
    public MemberProcess start() throws IOException {
        launch();
        awaitServing(START_LIMIT, true);
        return this;
    }

    /** Starts the process and returns at once; again after it ended, with the same data, ports and log. */
    public synchronized MemberProcess launch() throws IOException {
        if (process != null && process.isAlive()) {
            throw new IllegalStateException(name + " is already running (pid " + process.pid() + ")");
        }
        if (channel != null) {
            channel.shutdownNow();
        }
        String main = mainClass != null ? mainClass : defaultMainClass();
        List<String> server = new ArrayList<>(jvmOptions == null ? ChildJava.command(main)
                : ChildJava.command(jvmOptions, ownClassPath ? ChildJava.ownClassPath() : ChildJava.copiedClassPath(), main));
        server.add("server");
        server.addAll(serverArgs);
        List<String> command = wrapper.apply(server);
        Files.createDirectories(logFile.toAbsolutePath().getParent());
        logOffsetAtStart = Files.exists(logFile) ? Files.size(logFile) : 0;
        Map<String, String> env = environment;
        List<String> wrapping = command.subList(0, Math.max(0, command.indexOf(server.get(0))));
        Files.writeString(logFile, "##### " + Instant.now() + " starts: " + (env.isEmpty() ? "" : env + " ")
                        + (wrapping.isEmpty() ? "" : String.join(" ", wrapping) + " ... ")
                        + main + " " + String.join(" ", server.subList(server.indexOf(main) + 1, server.size())) + "\n",
                StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        onLaunch.accept(this);
        ProcessBuilder builder = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()));
        builder.environment().putAll(env);
        process = builder.start();
        channel = NettyChannelBuilder.forAddress(host, clientPort, statusCredentials).intercept(bearer(token)).build();
        return this;
    }

    /**
     * Shows {@code token}'s current value (when there is one) as {@code authorization: Bearer ...}
     * on every call: a cluster switches authentication on after it started, so the token comes later.
     */
    public static io.grpc.ClientInterceptor bearer(java.util.function.Supplier<String> token) {
        io.grpc.Metadata.Key<String> authorization = io.grpc.Metadata.Key.of("authorization", io.grpc.Metadata.ASCII_STRING_MARSHALLER);
        return new io.grpc.ClientInterceptor() {
            @Override
            public <Q, A> io.grpc.ClientCall<Q, A> interceptCall(io.grpc.MethodDescriptor<Q, A> method, io.grpc.CallOptions options,
                                                                 io.grpc.Channel next) {
                return new io.grpc.ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
                    @Override
                    public void start(Listener<A> listener, io.grpc.Metadata headers) {
                        String value = token.get();
                        if (value != null) {
                            headers.put(authorization, "Bearer " + value);
                        }
                        super.start(listener, headers);
                    }
                };
            }
        };
    }

    /** The CLI when it is on the class path, else the bench's member main. */
    private static String defaultMainClass() {
        for (String candidate : List.of(CLI_MAIN, MEMBER_MAIN)) {
            try {
                Class.forName(candidate, false, MemberProcess.class.getClassLoader());
                return candidate;
            } catch (ClassNotFoundException e) {
                // try the next
            }
        }
        throw new IllegalStateException("neither " + CLI_MAIN + " nor " + MEMBER_MAIN + " is on the class path: "
                + "add io.tenure:tenure-cli (or tenure-bench) to run a member process");
    }

    /**
     * Waits until the member serves: it answers Status and, when {@code knowsLeader}, names a
     * leader (itself or another). With {@code knowsLeader} false it is enough that the process
     * printed that it serves (a joining member knows no leader until it is added).
     *
     * @throws IOException when the process exits first or the limit passes, with the tail of its log
     */
    public void awaitServing(Duration limit, boolean knowsLeader) throws IOException {
        String[] last = {"no answer yet"};
        boolean done = Await.PROCESSES.within(limit, () -> {
            if (!process.isAlive()) {
                return true;
            }
            if (!knowsLeader && printedServing()) {
                return true;
            }
            channel.resetConnectBackoff();
            StatusResponse status;
            try {
                status = status(Duration.ofSeconds(1));
            } catch (RuntimeException notYet) {
                last[0] = notYet.toString();
                return false;
            }
            last[0] = "Status answered without a leader (term " + status.getRaftTerm() + ")";
            return !knowsLeader || !status.getLeader().isEmpty();
        });
        Process p = process;
        if (!p.isAlive()) {
            throw new IOException("tenure server " + name + " exited with " + p.exitValue() + "; see " + logFile
                    + "\n" + tail(logFile, 30));
        }
        if (!done) {
            throw new IOException("tenure server " + name + " did not serve within " + limit + " (" + last[0] + "); see "
                    + logFile + "\n" + tail(logFile, 30));
        }
    }

    /** Whether the current run of the process said it serves clients. */
    public boolean printedServing() {
        return logSinceStart().lines().anyMatch(line -> SERVING_MARKS.stream().anyMatch(line::contains));
    }

    /** What the current run (since the last launch) wrote to the log. */
    public String logSinceStart() {
        try {
            byte[] all = Files.readAllBytes(logFile);
            int from = (int) Math.min(all.length, logOffsetAtStart);
            return new String(all, from, all.length - from, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }

    /** Everything this member logged, across restarts. */
    public String wholeLog() {
        try {
            return new String(Files.readAllBytes(logFile), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }

    /** The last {@code lines} lines of this member's log. */
    public String tail(int lines) {
        return tail(logFile, lines);
    }

    /** The last {@code lines} lines of a file, ending with a newline, or a note that it cannot be read. */
    public static String tail(Path file, int lines) {
        try {
            if (!Files.exists(file)) {
                return "(no log)\n";
            }
            String[] all = new String(Files.readAllBytes(file), StandardCharsets.UTF_8).split("\n", -1);
            StringBuilder text = new StringBuilder();
            for (int i = Math.max(0, all.length - 1 - lines); i < all.length; i++) {
                text.append(all[i]).append(i < all.length - 1 ? "\n" : "");
            }
            return text.length() == 0 || text.charAt(text.length() - 1) != '\n' ? text.append('\n').toString() : text.toString();
        } catch (IOException | RuntimeException e) {
            return "(cannot read " + file + ": " + e + ")\n";
        }
    }

    /** Status, straight from this member (not forwarded), within {@code deadline}. */
    public StatusResponse status(Duration deadline) {
        return LockServiceGrpc.newBlockingStub(channel).withDeadlineAfter(deadline.toMillis(), TimeUnit.MILLISECONDS)
                .status(StatusRequest.getDefaultInstance());
    }

    /** Status, or null when the process is not running or does not answer within 2 s. */
    public StatusResponse statusOrNull() {
        if (!isAlive()) {
            return null;
        }
        try {
            channel.resetConnectBackoff();
            return status(Duration.ofSeconds(2));
        } catch (RuntimeException e) {
            return null;
        }
    }

    /** A blocking stub of the lock service with a 30 s deadline. */
    public LockServiceGrpc.LockServiceBlockingStub blocking() {
        return LockServiceGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS);
    }

    /** An asynchronous stub of the lock service (no deadline). */
    public LockServiceGrpc.LockServiceStub async() {
        return LockServiceGrpc.newStub(channel);
    }

    /** A blocking stub of the cluster (membership) service with a 30 s deadline. */
    public ClusterServiceGrpc.ClusterServiceBlockingStub admin() {
        return ClusterServiceGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS);
    }

    /** The channel to this member's client port, made anew at each launch. */
    public ManagedChannel channel() {
        return channel;
    }

    public String name() {
        return name;
    }

    public Path dataDir() {
        return dataDir;
    }

    public Path logFile() {
        return logFile;
    }

    /** The address the member binds and is reached at. */
    public String host() {
        return host;
    }

    public int clientPort() {
        return clientPort;
    }

    /** The port peers reach this member at. */
    public int peerPort() {
        return peerPort;
    }

    public int httpPort() {
        return httpPort;
    }

    /** The text (dflockd protocol) port. */
    public int textPort() {
        return textPort;
    }

    /** The client endpoint, {@code host:port}. */
    public String endpoint() {
        return host + ":" + clientPort;
    }

    /** The Raft address peers reach this member at, {@code host:port}. */
    public String peerAddress() {
        return host + ":" + peerPort;
    }

    /** The HTTP endpoint, {@code http://host:port}. */
    public String httpEndpoint() {
        return "http://" + host + ":" + httpPort;
    }

    public long pid() {
        return process.pid();
    }

    public boolean isAlive() {
        Process p = process;
        return p != null && p.isAlive();
    }

    /** Whether {@link #launch()} started a process (which may have ended since). */
    public boolean launched() {
        return process != null;
    }

    /** The exit code of the last run, once it has ended. */
    public int exitValue() {
        return process.exitValue();
    }

    /** kill -9: no shutdown hook, no flush, no goodbye. Waits until the process is gone. */
    public void kill9() throws InterruptedException {
        process.destroyForcibly();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException(name + " (pid " + process.pid() + ") survived kill -9 for 30 s");
        }
        channel.shutdownNow();
    }

    /** SIGTERM and wait for a clean stop (kill -9 if it takes over 20 s). */
    public void stop() throws InterruptedException {
        terminate(process);
        if (channel != null) {
            channel.shutdownNow();
        }
    }

    /** Sends {@code signal} (a name such as {@code STOP}, {@code CONT}, {@code TERM}) to this process. */
    public void signal(String signal) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).inheritIO().start();
        if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
            throw new IOException("kill -" + signal + " " + process.pid() + " failed");
        }
    }

    /** SIGSTOP: the process stops answering but keeps its sockets open. */
    public void pause() throws IOException, InterruptedException {
        signal("STOP");
    }

    /** SIGCONT after {@link #pause()}. */
    public void resume() throws IOException, InterruptedException {
        signal("CONT");
    }

    /** Stops the process if it runs (resuming it first should it be paused: a stopped process cannot handle SIGTERM). */
    @Override
    public void close() throws InterruptedException {
        if (channel != null) {
            channel.shutdownNow();
        }
        Process p = process;
        if (p != null && p.isAlive()) {
            resumeQuietly(p);
            terminate(p);
        }
    }

    /** Starts closing without waiting (several members at once, or a shutdown hook); {@link #close()} then finishes. */
    public void beginClose() {
        Process p = process;
        if (p != null && p.isAlive()) {
            resumeQuietly(p);
            p.destroy();
        }
    }

    /** SIGTERM, and kill -9 after 20 s. */
    private static void terminate(Process p) throws InterruptedException {
        if (p != null && p.isAlive()) {
            p.destroy();
            if (!p.waitFor(20, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                p.waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    private static void resumeQuietly(Process p) {
        try {
            new ProcessBuilder("kill", "-CONT", Long.toString(p.pid())).start().waitFor(5, TimeUnit.SECONDS);
        } catch (IOException | InterruptedException e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public String toString() {
        Process p = process;
        return name + "(" + endpoint() + ", peer " + peerPort + ", http " + httpPort + ", text " + textPort
                + (p == null ? ", not started" : ", pid " + p.pid() + (p.isAlive() ? "" : ", exited")) + ")";
    }

    /**
     * How to run a member: {@code tenure server --id NAME [--peers PEERS] [--host HOST] --client-port C
     * [--peer-port P] --http-port H --data-dir D} followed by {@linkplain #args extra arguments}. Ports
     * not given are free ports of 127.0.0.1.
     */
    public static final class Builder {
        private final String name;
        private final Path dataDir;
        private Path logFile;
        private String host = LOOPBACK;
        private int clientPort;
        private int peerPort;
        private int httpPort;
        private int textPort;
        private String peers;
        private final List<String> extraArgs = new ArrayList<>();
        private String mainClass;
        private List<String> jvmOptions;
        private boolean ownClassPath;
        private UnaryOperator<List<String>> wrapper = command -> command;
        private Consumer<MemberProcess> onLaunch = member -> { };
        private io.grpc.ChannelCredentials statusCredentials = io.grpc.InsecureChannelCredentials.create();
        private java.util.function.Supplier<String> token = () -> null;

        private Builder(String name, Path dataDir) {
            this.name = Objects.requireNonNull(name, "name");
            this.dataDir = Objects.requireNonNull(dataDir, "dataDir");
        }

        /** Where the output goes, appended (default {@code DATA.log} beside the data directory). */
        public Builder logFile(Path logFile) {
            this.logFile = Objects.requireNonNull(logFile, "logFile");
            return this;
        }

        /** The address the member binds and is reached at (default 127.0.0.1; another one is passed as {@code --host}). */
        public Builder host(String host) {
            this.host = Objects.requireNonNull(host, "host");
            return this;
        }

        /** The client port (0: a free one). */
        public Builder clientPort(int port) {
            this.clientPort = port;
            return this;
        }

        /** The peer port (0: a free one, or with {@link #peers} the port of this member's own entry). */
        public Builder peerPort(int port) {
            this.peerPort = port;
            return this;
        }

        /** The HTTP port (0: a free one, so that no two members collide on the default 7080). */
        public Builder httpPort(int port) {
            this.httpPort = port;
            return this;
        }

        /** The text port (0: a free one, so that no two members collide on the default 6388). */
        public Builder textPort(int port) {
            this.textPort = port;
            return this;
        }

        /** {@code --peers}: every member of the cluster as {@code name=host:port,...}, this one among them. */
        public Builder peers(String peers) {
            this.peers = Objects.requireNonNull(peers, "peers");
            return this;
        }

        /** Arguments after the standard ones (for example {@code --snapshot-every 200}, {@code --join}). */
        /**
         * For a member started with TLS on its client port ({@link #args} with {@code --cert-file}):
         * the CA that signed its certificate, and the client certificate and key this object's
         * status calls present (null for none).
         */
        public Builder clientTls(Path trustedCa, Path certFile, Path keyFile) {
            io.grpc.TlsChannelCredentials.Builder tls = io.grpc.TlsChannelCredentials.newBuilder();
            try {
                tls.trustManager(trustedCa.toFile());
                if (certFile != null) {
                    tls.keyManager(certFile.toFile(), keyFile.toFile());
                }
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
            this.statusCredentials = tls.build();
            return this;
        }

        /**
         * The bearer token this object's own calls show, read at each call (null: none yet), for
         * a member whose cluster switches authentication on.
         */
        public Builder token(java.util.function.Supplier<String> token) {
            this.token = Objects.requireNonNull(token, "token");
            return this;
        }

        public Builder args(List<String> args) {
            this.extraArgs.addAll(args);
            return this;
        }

        /** The main class (default: the CLI when on the class path, else the bench's member main). */
        public Builder mainClass(String mainClass) {
            this.mainClass = Objects.requireNonNull(mainClass, "mainClass");
            return this;
        }

        /**
         * The child's JVM options instead of {@link ChildJava}'s heap and options; with
         * {@code ownClassPath}, this JVM's class path exactly as it is instead of one with Tenure's
         * jars copied aside (a class path that is one jar naming the others in its manifest).
         */
        public Builder jvmOptions(List<String> options, boolean ownClassPath) {
            this.jvmOptions = List.copyOf(options);
            this.ownClassPath = ownClassPath;
            return this;
        }

        /** Wraps the command (for example {@code ip netns exec NS ...}); the wrapper must exec in place, keeping the pid. */
        public Builder wrapper(UnaryOperator<List<String>> wrapper) {
            this.wrapper = Objects.requireNonNull(wrapper, "wrapper");
            return this;
        }

        /** Called at every launch, before the process starts (for example to note the log file of a test). */
        public Builder onLaunch(Consumer<MemberProcess> listener) {
            this.onLaunch = Objects.requireNonNull(listener, "listener");
            return this;
        }

        /** The member, not started; free ports are chosen now for those not given. */
        public MemberProcess build() {
            if (peers != null && peerPort == 0) {
                peerPort = ownPeerPort();
            }
            Set<Integer> given = new HashSet<>(List.of(clientPort, peerPort, httpPort, textPort));
            given.remove(0);
            int missing = (clientPort == 0 ? 1 : 0) + (peerPort == 0 ? 1 : 0) + (httpPort == 0 ? 1 : 0) + (textPort == 0 ? 1 : 0);
            int[] free = FreePorts.take(missing, given);
            int next = 0;
            int client = clientPort != 0 ? clientPort : free[next++];
            int peer = peerPort != 0 ? peerPort : free[next++];
            int http = httpPort != 0 ? httpPort : free[next++];
            int text = textPort != 0 ? textPort : free[next];
            return new MemberProcess(this, client, peer, http, text);
        }

        /** The port of this member's own entry in {@link #peers}. */
        private int ownPeerPort() {
            for (String entry : peers.split(",")) {
                String[] nameAndAddress = entry.trim().split("=", 2);
                if (nameAndAddress.length == 2 && nameAndAddress[0].equals(name)) {
                    return Integer.parseInt(nameAndAddress[1].substring(nameAndAddress[1].lastIndexOf(':') + 1));
                }
            }
            throw new IllegalArgumentException("--peers " + peers + " has no entry for " + name);
        }
    }
}
