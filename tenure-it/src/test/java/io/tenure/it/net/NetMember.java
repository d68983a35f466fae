package io.tenure.it.net;

import io.tenure.it.ChildJava;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
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
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;

/**
 * A real {@code tenure server} in its own namespace of a {@link NetLab}: bound to the member's
 * address ({@code --host}, which the peer port binds too through the member's {@code --peers}
 * entry), with the same fixed ports in every namespace, since each has its own address. Its
 * output goes to a log file kept across restarts. Clients reach it from the root namespace at
 * {@link #endpoint()}.
 */
public final class NetMember implements AutoCloseable {
    /** The CLI's entry point. */
    static final String CLI_MAIN = "io.tenure.cli.TenureCli";
    /** The same ports in every namespace: no two members share an address, so none collide. */
    public static final int CLIENT_PORT = 7070;
    public static final int PEER_PORT = 7071;
    public static final int HTTP_PORT = 7080;
    private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    final String name;
    final Path dataDir;
    final Path logFile;
    private final NetLab lab;
    private final List<String> serverArgs;
    private volatile Process process;
    private volatile ManagedChannel channel;

    private NetMember(NetLab lab, String name, Path dataDir, Path logFile, List<String> serverArgs) {
        this.lab = lab;
        this.name = name;
        this.dataDir = dataDir;
        this.logFile = logFile;
        this.serverArgs = List.copyOf(serverArgs);
    }

    /**
     * One member per lab member, each with {@code --peers} naming every lab member at its address,
     * data in {@code dir/NAME} and log {@code dir/NAME.log}; none is started.
     */
    public static List<NetMember> cluster(NetLab lab, Path dir, List<String> extraArgs) {
        String peers = lab.members().stream().map(m -> m + "=" + lab.address(m) + ":" + PEER_PORT).collect(Collectors.joining(","));
        List<NetMember> all = new ArrayList<>();
        for (String member : lab.members()) {
            List<String> args = new ArrayList<>(List.of("--id", member, "--peers", peers, "--host", lab.address(member),
                    "--client-port", Integer.toString(CLIENT_PORT), "--http-port", Integer.toString(HTTP_PORT),
                    "--data-dir", dir.resolve(member).toString()));
            args.addAll(extraArgs);
            all.add(new NetMember(lab, member, dir.resolve(member), dir.resolve(member + ".log"), args));
        }
        return all;
    }

    /** Starts the process in the member's namespace and returns at once. */
    public synchronized NetMember launch() throws IOException {
        if (process != null && process.isAlive()) {
            throw new IllegalStateException(name + " is already running (pid " + process.pid() + ")");
        }
        if (channel != null) {
            channel.shutdownNow();
        }
        List<String> java = new ArrayList<>(ChildJava.command(CLI_MAIN));
        java.add("server");
        java.addAll(serverArgs);
        List<String> command = lab.wrap(name, java);
        Files.createDirectories(logFile.getParent());
        Files.writeString(logFile, "##### " + Instant.now() + " test starts in " + lab.namespace(name) + ": server "
                        + String.join(" ", serverArgs) + "\n", StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        // `ip netns exec` enters the namespace and execs java in place: the pid is the server's.
        process = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()))
                .start();
        channel = NettyChannelBuilder.forTarget(endpoint()).usePlaintext().build();
        return this;
    }

    /** Waits until the member answers Status naming a leader. */
    public void awaitServing(Duration limit) throws IOException {
        long deadline = System.nanoTime() + limit.toNanos();
        String last = "no answer yet";
        while (true) {
            Process p = process;
            if (!p.isAlive()) {
                throw new IOException("tenure server " + name + " exited with " + p.exitValue() + "; see " + logFile + "\n" + tail(30));
            }
            try {
                StatusResponse status = status(Duration.ofSeconds(1));
                if (!status.getLeader().isEmpty()) {
                    return;
                }
                last = "Status answered without a leader (term " + status.getRaftTerm() + ")";
            } catch (RuntimeException notYet) {
                last = notYet.toString();
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IOException("tenure server " + name + " did not serve within " + limit + " (" + last + "); see "
                        + logFile + "\n" + tail(30));
            }
            LockSupport.parkNanos(POLL_NANOS);
        }
    }

    /** Status, straight from this member (not forwarded), within {@code deadline}. */
    public StatusResponse status(Duration deadline) {
        channel.resetConnectBackoff();
        return LockServiceGrpc.newBlockingStub(channel).withDeadlineAfter(deadline.toMillis(), TimeUnit.MILLISECONDS)
                .status(StatusRequest.getDefaultInstance());
    }

    /** Status, or null when the member does not answer within 2 s. */
    public StatusResponse statusOrNull() {
        if (!isAlive()) {
            return null;
        }
        try {
            return status(Duration.ofSeconds(2));
        } catch (RuntimeException e) {
            return null;
        }
    }

    public String name() {
        return name;
    }

    /** {@code 10.77.R.i:7070}, reachable from the root namespace. */
    public String endpoint() {
        return lab.address(name) + ":" + CLIENT_PORT;
    }

    public long pid() {
        return process.pid();
    }

    public boolean isAlive() {
        Process p = process;
        return p != null && p.isAlive();
    }

    /** The last {@code lines} lines of this member's log. */
    public String tail(int lines) {
        try {
            List<String> all = Files.readAllLines(logFile, StandardCharsets.UTF_8);
            return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size())) + "\n";
        } catch (IOException | RuntimeException e) {
            return "(cannot read " + logFile + ": " + e + ")\n";
        }
    }

    /** SIGTERM and wait for a clean stop, SIGKILL after 20 s. */
    @Override
    public void close() throws InterruptedException {
        if (channel != null) {
            channel.shutdownNow();
        }
        Process p = process;
        if (p != null && p.isAlive()) {
            p.destroy();
            if (!p.waitFor(20, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                p.waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    /** Starts closing without waiting (for shutdown hooks). */
    void beginClose() {
        Process p = process;
        if (p != null && p.isAlive()) {
            p.destroy();
        }
    }

    @Override
    public String toString() {
        Process p = process;
        return name + "(" + endpoint() + (p == null ? ", not started" : ", pid " + p.pid() + (p.isAlive() ? "" : ", exited")) + ")";
    }
}
