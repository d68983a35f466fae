package io.tenure.it.safety;

import io.tenure.client.TenureClient;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * A client process of a safety run (its main class; {@link SafetyRun} starts several):
 *
 * <pre>
 * SafetyWorker --name c3 --number 3 --role lock|keeper|watcher --run-dir DIR
 *              --endpoints HOST:PORT,... --resource HOST:PORT --seed N
 * </pre>
 *
 * It reads the TTL, the hot keys, the semaphores and the elections from {@code DIR/run.json}, connects with the Java SDK to the
 * endpoints given (the harness's links to the members), and plays its role until it is told to
 * stop: SIGTERM, or the end of its standard input (the harness closes it, or died). A lock
 * worker also runs a {@link SemaphoreWorker} and an {@link ElectionWorker}, each on a thread of its
 * own, when the run has semaphores and elections, a {@link RangeWorker} when it has range writers, a
 * {@link CounterWorker} and a {@link KvWorker}. Every
 * operation goes to {@code DIR/history/<name>.jsonl}; operations still open when it stops are
 * written as INFO. It may be killed or paused (SIGSTOP) at any moment; the SDK fails over when
 * members die.
 */
public final class SafetyWorker {
    public static final List<String> ROLES = List.of("lock", "keeper", "watcher");

    private SafetyWorker() {
    }

    public static void main(String[] args) throws IOException {
        Map<String, String> options = options(args);
        String name = options.get("name");
        Path runDir = Path.of(options.get("run-dir"));
        RunInfo run = RunInfo.read(runDir);
        History history = History.open(runDir.resolve("history").resolve(name + ".jsonl"), name,
                Integer.parseInt(options.get("number")));
        TenureClient.Builder builder = TenureClient.builder()
                .endpoints(List.of(options.get("endpoints").split(",")))
                .clientId(name);
        if (options.containsKey("ca")) {
            // A secured run (SecuredRun): TLS to the run's CA, and the worker user's token.
            SecuredRun.worker(builder, Path.of(options.get("ca")), Path.of(options.get("token-file")));
        }
        TenureClient client = builder.build();
        long seed = Long.parseLong(options.get("seed")) * 1_000_003L + Integer.parseInt(options.get("number"));
        WorkerContext ctx = new WorkerContext(name, history, client, new Random(seed), Duration.ofMillis(run.ttlMillis()), run.keys(),
                options.get("resource"));
        // The semaphore and election threads draw from randoms of their own, so the lock side's choices stay those of its seed.
        WorkerContext semaphoreCtx = ctx.withRandom(new Random(~seed));
        WorkerContext electionCtx = ctx.withRandom(new Random(Long.reverse(seed)));
        WorkerContext counterCtx = ctx.withRandom(new Random(seed ^ 0x5DEECE66DL));
        WorkerContext kvCtx = ctx.withRandom(new Random(seed * 31 + 7));
        WorkerContext rangeCtx = ctx.withRandom(new Random(Long.rotateLeft(seed, 21) ^ 0x2545F4914F6CDD1DL));
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            ctx.running = false;
            semaphoreCtx.running = false;
            electionCtx.running = false;
            counterCtx.running = false;
            kvCtx.running = false;
            rangeCtx.running = false;
            history.close("the process was stopped with the operation open");
        }, "history-close"));
        exitWhenStdinEnds();

        String role = options.get("role");
        try (TrackedLeases leases = new TrackedLeases(ctx)) {
            switch (role) {
                case "lock" -> {
                    if (!run.semaphores().isEmpty()) {
                        Thread semaphores = new Thread(() -> new SemaphoreWorker(semaphoreCtx, leases, run.semaphores()).run(),
                                "semaphore-worker");
                        semaphores.setDaemon(true);
                        semaphores.start();
                    }
                    if (!run.elections().isEmpty()) {
                        Thread elections = new Thread(() -> new ElectionWorker(electionCtx, leases, run.elections()).run(),
                                "election-worker");
                        elections.setDaemon(true);
                        elections.start();
                    }
                    if (run.hasRanges()) {
                        Thread ranges = new Thread(() -> new RangeWorker(rangeCtx, leases, run.rangeInode()).run(), "range-worker");
                        ranges.setDaemon(true);
                        ranges.start();
                    }
                    Thread counter = new Thread(() -> new CounterWorker(counterCtx).run(), "counter-worker");
                    counter.setDaemon(true);
                    counter.start();
                    int number = Integer.parseInt(options.get("number"));
                    Thread kv = new Thread(() -> new KvWorker(kvCtx, number).run(), "kv-worker");
                    kv.setDaemon(true);
                    kv.start();
                    new LockWorker(ctx, leases).run();
                }
                case "keeper" -> new KeeperWorker(ctx, leases).run();
                case "watcher" -> new WatchWorker(ctx).run();
                default -> throw new IllegalArgumentException("unknown role " + role + " (known: " + ROLES + ")");
            }
        }
    }

    /** The harness holds our standard input open while it wants us; its end (also the harness's death) ends us. */
    private static void exitWhenStdinEnds() {
        Thread watchdog = new Thread(() -> {
            try {
                InputStream in = System.in;
                while (in.read() >= 0) {
                    // nothing is sent; only the end matters
                }
            } catch (IOException ignored) {
                // the same as the end
            }
            System.exit(0);
        }, "stdin-watchdog");
        watchdog.setDaemon(true);
        watchdog.start();
    }

    private static Map<String, String> options(String[] args) {
        Map<String, String> options = new HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            if (!args[i].startsWith("--")) {
                throw new IllegalArgumentException("expected --option value, got " + args[i]);
            }
            options.put(args[i].substring(2), args[i + 1]);
        }
        for (String required : List.of("name", "number", "role", "run-dir", "endpoints", "resource", "seed")) {
            if (!options.containsKey(required)) {
                throw new IllegalArgumentException("missing --" + required);
            }
        }
        return options;
    }
}
