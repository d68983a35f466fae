package io.tenure.spike.engine;

import org.HdrHistogram.Histogram;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Runs one cell (engine × members × workload × clients) and prints its result as one JSON line:
 * <pre>
 * java -cp 'target/engine-spike.jar:target/lib/*' io.tenure.spike.engine.Main \
 *     --engine ratis|jraft --members 1|3 --workload W1|W2 [--clients 64] [--warmup 20] [--seconds 20]
 * </pre>
 * Exits non-zero on any failed check. Its data directory, under the temporary directory, is
 * deleted at the end.
 */
public final class Main {
    /**
     * Each client's lease. Nothing expires it during a run in any case: time enters the kernel
     * only through a leader's LeaseExpire proposal, and the spike has no expiry loop.
     */
    private static final long LEASE_TTL_MILLIS = 60_000;

    private Main() {
    }

    public static void main(String[] args) {
        int status = 0;
        try {
            System.out.println(run(flags(args)));
        } catch (Throwable t) {
            t.printStackTrace();
            status = 1;
        }
        // The engines leave non-daemon threads (bolt, gRPC, disruptors) after close.
        System.exit(status);
    }

    private static String run(Map<String, String> flags) throws Exception {
        String engineName = flags.getOrDefault("engine", "ratis");
        int members = Integer.parseInt(flags.getOrDefault("members", "1"));
        Workload workload = Workload.valueOf(flags.getOrDefault("workload", "W1"));
        int clients = Integer.parseInt(flags.getOrDefault("clients", "64"));
        double warmup = Double.parseDouble(flags.getOrDefault("warmup", "20"));
        double seconds = Double.parseDouble(flags.getOrDefault("seconds", "20"));
        Path dataDir = Files.createTempDirectory("tenure-engine-spike-");
        // SOFA bolt writes its own log files, by default under ~/logs.
        System.setProperty("logging.path", dataDir.resolve("logs").toString());
        List<Replica> replicas = new ArrayList<>();
        for (int i = 0; i < members; i++) {
            replicas.add(new Replica());
        }
        Map<String, Object> result = new LinkedHashMap<>();
        try (Engine engine = Engine.start(engineName, replicas, dataDir)) {
            Proposer proposer = new Proposer(engine);
            Locks locks = new Locks(proposer);
            Replica leader = replicas.get(engine.leader());
            leader.serve(proposer, locks);
            long term = engine.term();
            for (int i = 0; i < clients; i++) {
                locks.grantLease(i + 1, LEASE_TTL_MILLIS, "spike-client-" + i);
            }

            Workload.Window window = Workload.Window.after(warmup, seconds);
            Workload.Clients running = new Workload.Clients(workload, locks, window, clients);
            sleepUntil(window.start());
            long cpuAtStart = processCpuNanos();
            long[] submittedAtStart = proposer.submitted();
            sleepUntil(window.end());
            long cpuAtEnd = processCpuNanos();
            long[] submittedAtEnd = proposer.submitted();
            Workload.Outcome outcome = running.join();

            if (engine.term() != term) {
                throw new IllegalStateException("the leader changed during the run (term " + term + " to " + engine.term() + ")");
            }
            checkReplicasAgree(replicas, leader);
            long ops = outcome.operations();
            if (ops == 0) {
                throw new IllegalStateException("no operation completed in the measured window");
            }
            Histogram latencies = outcome.latencies();
            long entries = submittedAtEnd[0] - submittedAtStart[0];
            result.put("engine", engineName);
            result.put("members", members);
            result.put("workload", workload.name());
            result.put("clients", clients);
            result.put("warmup_s", warmup);
            result.put("seconds", window.seconds());
            result.put("ops", ops);
            result.put("ops_per_s", ops / window.seconds());
            result.put("latency", workload.latency);
            result.put("p50_ms", latencies.getValueAtPercentile(50) / 1e3);
            result.put("p99_ms", latencies.getValueAtPercentile(99) / 1e3);
            result.put("max_ms", latencies.getMaxValue() / 1e3);
            result.put("cpu_us_per_op", (cpuAtEnd - cpuAtStart) / 1e3 / ops);
            result.put("cpu_cores", (cpuAtEnd - cpuAtStart) / 1e9 / window.seconds());
            result.put("entries_per_s", entries / window.seconds());
            result.put("commands_per_entry", entries == 0 ? 0.0 : (double) (submittedAtEnd[1] - submittedAtStart[1]) / entries);
            result.put("client_ops_min", Arrays.stream(outcome.counts()).min().orElse(0));
            result.put("client_ops_max", Arrays.stream(outcome.counts()).max().orElse(0));
        } finally {
            deleteRecursively(dataDir);
        }
        return json(result);
    }

    /** Every follower catches up with the leader and holds the same state. */
    private static void checkReplicasAgree(List<Replica> replicas, Replica leader) throws InterruptedException {
        long index = leader.appliedIndex();
        Engine.await("follower catching up with index " + index, 10,
                () -> replicas.stream().allMatch(r -> r.appliedIndex() >= index));
        for (Replica r : replicas) {
            if (r.appliedIndex() != index || !r.fingerprint().equals(leader.fingerprint())) {
                throw new IllegalStateException("replicas differ: " + r.fingerprint() + " at index " + r.appliedIndex()
                        + ", leader " + leader.fingerprint() + " at " + index);
            }
        }
    }

    private static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    private static void sleepUntil(long nanoTime) {
        for (long left = nanoTime - System.nanoTime(); left > 0; left = nanoTime - System.nanoTime()) {
            LockSupport.parkNanos(left);
        }
    }

    private static Map<String, String> flags(String[] args) {
        Map<String, String> flags = new HashMap<>();
        for (int i = 0; i < args.length; i += 2) {
            if (!args[i].startsWith("--") || i + 1 >= args.length) {
                throw new IllegalArgumentException("expected --name value pairs, got " + String.join(" ", args));
            }
            flags.put(args[i].substring(2), args[i + 1]);
        }
        return flags;
    }

    private static String json(Map<String, Object> fields) {
        return fields.entrySet().stream().map(e -> "\"" + e.getKey() + "\":" + jsonValue(e.getValue()))
                .collect(Collectors.joining(",", "{", "}"));
    }

    private static String jsonValue(Object value) {
        if (value instanceof String s) {
            return "\"" + s + "\"";
        }
        return value instanceof Double d ? String.format(Locale.ROOT, "%.3f", d) : value.toString();
    }

    /** Best effort, so that it never hides the run's own failure; run.sh removes what is left. */
    private static void deleteRecursively(Path dir) {
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        } catch (IOException | UncheckedIOException e) {
            System.err.println("could not delete " + dir + ": " + e);
        }
    }
}
