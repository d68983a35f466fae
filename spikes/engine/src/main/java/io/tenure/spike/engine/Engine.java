package io.tenure.spike.engine;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;

/**
 * A Raft group of {@code replicas.size()} members in this JVM, each on 127.0.0.1 with a data
 * directory of its own, feeding committed entries to its {@link Replica}. Entries are submitted
 * in-process on the leader; a leader change during a run is not handled (its calls fail).
 */
interface Engine extends AutoCloseable {
    /** Election timeouts of both engines, as Tenure's default: uniformly 500 ms to 1 s. */
    int ELECTION_TIMEOUT_MIN_MS = 500;
    int ELECTION_TIMEOUT_MAX_MS = 1_000;
    String HOST = "127.0.0.1";

    /** Starts the members and returns once one of them leads and can take entries. */
    static Engine start(String name, List<Replica> replicas, Path dataDir) throws Exception {
        return switch (name) {
            case "ratis" -> RatisEngine.start(replicas, dataDir);
            case "jraft" -> JRaftEngine.start(replicas, dataDir);
            default -> throw new IllegalArgumentException("unknown engine " + name + " (ratis or jraft)");
        };
    }

    /** The index in {@code replicas} of the member that leads. */
    int leader();

    /** The leader's current term, which the entry carries as its proposer term. */
    long term();

    /**
     * Submits one entry on the leader. The future completes once the entry is committed (on a
     * majority's disks, fsynced) and applied by the leader; it fails when it was not committed.
     */
    CompletableFuture<Void> submit(byte[] entry);

    @Override
    void close();

    /** Ports free on 127.0.0.1 now (another process could take one before the member binds it). */
    static int[] freePorts(int count) throws IOException {
        int[] ports = new int[count];
        ServerSocket[] sockets = new ServerSocket[count];
        try {
            for (int i = 0; i < count; i++) {
                sockets[i] = new ServerSocket(0, 1, InetAddress.getByName(HOST));
                ports[i] = sockets[i].getLocalPort();
            }
        } finally {
            for (ServerSocket s : sockets) {
                if (s != null) {
                    s.close();
                }
            }
        }
        return ports;
    }

    /** Waits for {@code condition}, failing after {@code seconds}. */
    static void await(String what, int seconds, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + seconds * 1_000_000_000L;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("no " + what + " within " + seconds + " s");
            }
            Thread.sleep(20);
        }
    }
}
