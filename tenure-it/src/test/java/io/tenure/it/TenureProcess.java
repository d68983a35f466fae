package io.tenure.it;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.tenure.proto.v1.ClusterServiceGrpc;
import io.tenure.proto.v1.LockServiceGrpc;
import io.tenure.proto.v1.StatusRequest;
import io.tenure.proto.v1.StatusResponse;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A real {@code tenure server} child process on 127.0.0.1, started with this JVM's class path,
 * its output appended to a log file (kept across restarts, so one file tells a member's whole
 * story). Either a single member ({@link #TenureProcess(Path)}) or a member of a cluster
 * ({@link #member}), which {@link Cluster} starts.
 */
public final class TenureProcess implements AutoCloseable {
    /** The CLI's entry point. */
    static final String CLI_MAIN = "io.tenure.cli.TenureCli";
    /** Printed by {@code tenure server} on stdout, and logged as {@code event=serving}, once it serves clients. */
    private static final List<String> SERVING_MARKS = List.of("serving clients on", "event=serving");

    public final String name;
    public final Path dataDir;
    public final int clientPort;
    public final int peerPort;
    /** Every member gets a free {@code --http-port}, so that no two collide on the default 7080. */
    public final int httpPort;
    /** The address the member binds and is reached at; 127.0.0.1 unless placed elsewhere. */
    private final String host;
    /** Wraps the server's command (for example {@code ip netns exec NS}); the wrapper must exec in place, keeping the pid. */
    private final java.util.function.UnaryOperator<List<String>> wrapper;
    public final Path logFile;
    private final List<String> serverArgs;
    private volatile Process process;
    private volatile ManagedChannel channel;
    private volatile long logOffsetAtStart;
    /** Variables added to the environment of the next launches (for example libfaketime's). */
    private volatile Map<String, String> environment = Map.of();

    /** A single member (no peers) with free ports, its log beside its data directory. */
    TenureProcess(Path dataDir) throws IOException {
        this("n1", dataDir, dataDir.resolveSibling(dataDir.getFileName() + ".log"), freePorts(3), null);
    }

    private TenureProcess(String name, Path dataDir, Path logFile, int[] clientPeerAndHttpPort, List<String> serverArgs) {
        this(name, dataDir, logFile, clientPeerAndHttpPort[0], clientPeerAndHttpPort[1], clientPeerAndHttpPort[2], serverArgs);
    }

    private TenureProcess(String name, Path dataDir, Path logFile, int clientPort, int peerPort, int httpPort,
                          List<String> serverArgs) {
        this(name, dataDir, logFile, "127.0.0.1", c -> c, clientPort, peerPort, httpPort, serverArgs);
    }

    private TenureProcess(String name, Path dataDir, Path logFile, String host, java.util.function.UnaryOperator<List<String>> wrapper,
                          int clientPort, int peerPort, int httpPort, List<String> serverArgs) {
        this.name = name;
        this.host = host;
        this.wrapper = wrapper;
        this.dataDir = dataDir;
        this.logFile = logFile;
        this.clientPort = clientPort;
        this.peerPort = peerPort;
        this.httpPort = httpPort;
        this.serverArgs = serverArgs != null ? List.copyOf(serverArgs) : List.of("--data-dir", dataDir.toString(),
                "--client-port", Integer.toString(clientPort), "--peer-port", Integer.toString(peerPort),
                "--http-port", Integer.toString(httpPort));
    }

    /**
     * A member of a cluster: {@code tenure server --id NAME --peers PEERS --client-port C --http-port H --data-dir D}
     * followed by {@code extraArgs} (for example {@code --snapshot-every 200}, {@code --join}).
     */
    static TenureProcess member(String name, Path dataDir, Path logFile, int clientPort, int peerPort, int httpPort,
                                String peers, List<String> extraArgs) {
        return member(name, dataDir, logFile, Placement.LOOPBACK, clientPort, peerPort, httpPort, peers, extraArgs);
    }

    /** As above, placed by {@code placement} (its host address, and its command run where it says). */
    static TenureProcess member(String name, Path dataDir, Path logFile, Placement placement, int clientPort, int peerPort,
                                int httpPort, String peers, List<String> extraArgs) {
        String host = placement.host(name);
        List<String> args = new ArrayList<>(List.of("--id", name, "--peers", peers,
                "--client-port", Integer.toString(clientPort), "--http-port", Integer.toString(httpPort),
                "--data-dir", dataDir.toString()));
        if (!host.equals("127.0.0.1")) {
            args.addAll(List.of("--host", host));
        }
        args.addAll(extraArgs);
        return new TenureProcess(name, dataDir, logFile, host, command -> placement.wrap(name, command),
                clientPort, peerPort, httpPort, args);
    }

    /** As {@link #member(String, Path, Path, int, int, int, String, List)}, with a free HTTP port of its own. */
    static TenureProcess member(String name, Path dataDir, Path logFile, int clientPort, int peerPort,
                                String peers, List<String> extraArgs) throws IOException {
        int httpPort;
        do {
            httpPort = freePort();
        } while (httpPort == clientPort || httpPort == peerPort);
        return member(name, dataDir, logFile, clientPort, peerPort, httpPort, peers, extraArgs);
    }

    /**
     * Sets variables added to the environment of every later {@link #launch()} (empty: none), for
     * example {@code LD_PRELOAD} and {@code FAKETIME} to start the member with a skewed clock.
     */
    public void environment(Map<String, String> variables) {
        this.environment = Map.copyOf(variables);
    }

    /** Starts the single member and waits until it answers Status as leader. */
    TenureProcess start() throws IOException {
        launch();
        awaitServing(Duration.ofSeconds(60), true);
        return this;
    }

    /** Starts the process and returns at once. */
    public synchronized TenureProcess launch() throws IOException {
        if (process != null && process.isAlive()) {
            throw new IllegalStateException(name + " is already running (pid " + process.pid() + ")");
        }
        if (channel != null) {
            channel.shutdownNow();
        }
        List<String> server = new ArrayList<>(javaCommand(CLI_MAIN));
        server.add("server");
        server.addAll(serverArgs);
        List<String> command = wrapper.apply(server);
        Files.createDirectories(logFile.getParent());
        logOffsetAtStart = Files.exists(logFile) ? Files.size(logFile) : 0;
        Map<String, String> env = environment;
        Files.writeString(logFile, "##### " + java.time.Instant.now() + " test starts: " + (env.isEmpty() ? "" : env + " ")
                + String.join(" ", command.subList(command.indexOf(CLI_MAIN), command.size())) + "\n",
                StandardCharsets.UTF_8, java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
        ItLogs.register(logFile);
        ProcessBuilder builder = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()));
        builder.environment().putAll(env);
        process = builder.start();
        channel = NettyChannelBuilder.forAddress(host, clientPort).usePlaintext().build();
        return this;
    }

    /** The java command that runs {@code mainClass} with this JVM's class path. */
    public static List<String> javaCommand(String mainClass) {
        return ChildJava.command(mainClass);
    }

    /**
     * Waits until the member serves: it answers Status and, when {@code knowsLeader}, names a
     * leader (itself or another). With {@code knowsLeader} false it is enough that the process
     * printed that it serves (a joining member knows no leader until it is added).
     */
    public void awaitServing(Duration limit, boolean knowsLeader) throws IOException {
        long deadline = System.nanoTime() + limit.toNanos();
        String last = "no answer yet";
        while (true) {
            Process p = process;
            if (!p.isAlive()) {
                throw new IOException("tenure server " + name + " exited with " + p.exitValue() + "; see " + logFile
                        + "\n" + ItLogs.tail(logFile, 30));
            }
            if (!knowsLeader && printedServing()) {
                return;
            }
            try {
                channel.resetConnectBackoff();
                StatusResponse status = status(Duration.ofSeconds(1));
                if (!status.getLeader().isEmpty()) {
                    return;
                }
                last = "Status answered without a leader (term " + status.getRaftTerm() + ")";
                if (!knowsLeader) {
                    return;
                }
            } catch (RuntimeException notYet) {
                last = notYet.toString();
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IOException("tenure server " + name + " did not serve within " + limit + " (" + last + "); see "
                        + logFile + "\n" + ItLogs.tail(logFile, 30));
            }
            LockSupport.parkNanos(Await.POLL_NANOS);
        }
    }

    /** Whether the current run of the process said it serves clients. */
    boolean printedServing() {
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
    String wholeLog() {
        try {
            return new String(Files.readAllBytes(logFile), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }

    StatusResponse status(Duration deadline) {
        return LockServiceGrpc.newBlockingStub(channel).withDeadlineAfter(deadline.toMillis(), TimeUnit.MILLISECONDS)
                .status(StatusRequest.getDefaultInstance());
    }

    LockServiceGrpc.LockServiceBlockingStub blocking() {
        return LockServiceGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS);
    }

    LockServiceGrpc.LockServiceStub async() {
        return LockServiceGrpc.newStub(channel);
    }

    ClusterServiceGrpc.ClusterServiceBlockingStub admin() {
        return ClusterServiceGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS);
    }

    ManagedChannel channel() {
        return channel;
    }

    /** The address the member binds and is reached at. */
    public String host() {
        return host;
    }

    public String endpoint() {
        return host + ":" + clientPort;
    }

    public String peerAddress() {
        return host + ":" + peerPort;
    }

    public long pid() {
        return process.pid();
    }

    public boolean isAlive() {
        Process p = process;
        return p != null && p.isAlive();
    }

    /** The exit code of the last run, once it has ended. */
    int exitValue() {
        return process.exitValue();
    }

    /** kill -9: no shutdown hook, no flush, no goodbye. */
    public void kill9() throws InterruptedException {
        process.destroyForcibly();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException(name + " (pid " + process.pid() + ") survived kill -9 for 30 s");
        }
        channel.shutdownNow();
    }

    /** SIGTERM and wait for a clean stop (kill -9 if it takes over 20 s). */
    public void stop() throws InterruptedException {
        Process p = process;
        if (p != null && p.isAlive()) {
            p.destroy();
            if (!p.waitFor(20, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                p.waitFor(10, TimeUnit.SECONDS);
            }
        }
        if (channel != null) {
            channel.shutdownNow();
        }
    }

    public void signal(String signal) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).inheritIO().start();
        if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
            throw new IOException("kill -" + signal + " " + process.pid() + " failed");
        }
    }

    @Override
    public void close() throws InterruptedException {
        if (channel != null) {
            channel.shutdownNow();
        }
        Process p = process;
        if (p != null && p.isAlive()) {
            resumeQuietly(p); // a stopped process cannot handle SIGTERM
            p.destroy();
            if (!p.waitFor(20, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                p.waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    /** Starts closing without waiting; {@link #close()} then finishes. */
    void beginClose() {
        Process p = process;
        if (p != null && p.isAlive()) {
            resumeQuietly(p);
            p.destroy();
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
        return name + "(client " + clientPort + ", peer " + peerPort + ", http " + httpPort + (p == null ? ", not started" : ", pid " + p.pid()
                + (p.isAlive() ? "" : ", exited")) + ")";
    }

    static int freePort() throws IOException {
        return freePorts(1)[0];
    }

    /** {@code n} distinct free ports on 127.0.0.1 (all held open while choosing, so none repeats). */
    public static int[] freePorts(int n) throws IOException {
        List<ServerSocket> held = new ArrayList<>();
        try {
            int[] ports = new int[n];
            for (int i = 0; i < n; i++) {
                ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress());
                held.add(s);
                ports[i] = s.getLocalPort();
            }
            return ports;
        } finally {
            for (ServerSocket s : held) {
                s.close();
            }
        }
    }
}
