package io.tenure.it;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.tenure.proto.v1.LockServiceGrpc;
import io.tenure.proto.v1.StatusRequest;
import io.tenure.proto.v1.StatusResponse;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A real {@code tenure server} child process on 127.0.0.1, started with this JVM's class path,
 * its output in a file beside its data directory.
 */
final class TenureProcess implements AutoCloseable {
    /** The CLI's entry point. */
    static final String CLI_MAIN = "io.tenure.cli.TenureCli";
    final Path dataDir;
    final int clientPort;
    final int peerPort;
    private final Path logFile;
    private Process process;
    private ManagedChannel channel;

    TenureProcess(Path dataDir) throws IOException {
        this.dataDir = dataDir;
        this.clientPort = freePort();
        this.peerPort = freePort();
        this.logFile = dataDir.resolveSibling(dataDir.getFileName() + ".log");
    }

    /** Starts the server and waits until it answers Status as leader. */
    TenureProcess start() throws IOException {
        List<String> command = new ArrayList<>(javaCommand(CLI_MAIN));
        command.addAll(List.of("server", "--data-dir", dataDir.toString(),
                "--client-port", Integer.toString(clientPort), "--peer-port", Integer.toString(peerPort)));
        process = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()))
                .start();
        channel = NettyChannelBuilder.forAddress("127.0.0.1", clientPort).usePlaintext().build();
        awaitServing(Duration.ofSeconds(60));
        return this;
    }

    /** The java command that runs {@code mainClass} with this JVM's class path. */
    static List<String> javaCommand(String mainClass) {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        return List.of(java, "-Xmx512m", "-cp", System.getProperty("java.class.path"), mainClass);
    }

    private void awaitServing(Duration limit) throws IOException {
        long deadline = System.nanoTime() + limit.toNanos();
        while (true) {
            if (!process.isAlive()) {
                throw new IOException("tenure server exited with " + process.exitValue() + "; see " + logFile);
            }
            try {
                StatusResponse status = LockServiceGrpc.newBlockingStub(channel).withDeadlineAfter(1, TimeUnit.SECONDS)
                        .status(StatusRequest.getDefaultInstance());
                if (!status.getLeader().isEmpty()) {
                    return;
                }
            } catch (RuntimeException notYet) {
                // not listening yet
            }
            if (System.nanoTime() > deadline) {
                throw new IOException("tenure server did not serve within " + limit + "; see " + logFile);
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
        }
    }

    LockServiceGrpc.LockServiceBlockingStub blocking() {
        return LockServiceGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS);
    }

    String endpoint() {
        return "127.0.0.1:" + clientPort;
    }

    long pid() {
        return process.pid();
    }

    /** kill -9: no shutdown hook, no flush, no goodbye. */
    void kill9() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
        channel.shutdownNow();
    }

    void signal(String signal) throws IOException, InterruptedException {
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
        if (process != null && process.isAlive()) {
            process.destroy();
            if (!process.waitFor(20, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
