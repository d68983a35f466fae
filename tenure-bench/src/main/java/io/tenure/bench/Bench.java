package io.tenure.bench;

import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Runs workloads against members it starts and stops itself, printing one JSON line per run
 * (see {@code package-info.java}). The entry point of {@code tenure bench}.
 */
public final class Bench {
    private Bench() {
    }

    /** Starts the target's members, runs the workload, stops them; the result line is the caller's to print. */
    public static BenchResult run(BenchSettings s) throws Exception {
        System.err.printf("tenure bench: %s %s, %s, %s after %s warm-up: starting members%n", s.label(), s.workload(),
                switch (s.workload()) {
                    case "W3" -> s.leases() + " leases";
                    case "W5" -> s.rounds() + " rounds";
                    case "W6" -> s.clients() + " clients on a semaphore of limit " + s.limit();
                    case "W7" -> s.clients() + " clients on a read/write lock, " + Math.round(BenchSettings.W7_READS * 100)
                            + " % reads";
                    case "W8" -> s.clients() + " clients incrementing one counter";
                    case "W9" -> s.clients() + " clients putting and reading keys";
                    case "W10" -> s.clients() + " producers and " + s.clients() + " consumers on one queue";
                    case "W11" -> s.clients() + " publishers on one channel, a listener on each member";
                    case "W12" -> s.clients() + " clients locking random 4 KiB ranges of one 1 GiB file, "
                            + Math.round(BenchSettings.W12_SHARED * 100) + " % shared";
                    case "T1" -> s.clients() + " text connections, each cycling its own lock";
                    case "T2" -> s.clients() + " text connections on one lock";
                    default -> s.clients() + " clients";
                }, s.duration(), s.warmup());
        try (Members members = Members.start(s.memberCount(), s.jvmOptions(), s.tls(), s.auth())) {
            return switch (s.workload()) {
                case "W1" -> Uncontended.run(members, s, "bench/w1/", null);
                case "W2" -> Contended.lock(members, s);
                case "W3" -> Leases.run(members, s);
                case "W4" -> Watches.run(members, s);
                case "W5" -> Failover.run(members, s);
                case "W6" -> Contended.semaphore(members, s);
                case "W7" -> Contended.readWrite(members, s);
                case "W8" -> Counted.run(members, s);
                case "W9" -> PutGets.run(members, s);
                case "W10" -> Queued.run(members, s);
                case "W11" -> Signalled.run(members, s);
                case "W12" -> Ranges.run(members, s);
                case "T1" -> TextLocks.uncontended(members, s);
                case "T2" -> TextLocks.contended(members, s);
                default -> throw new IllegalArgumentException("unknown workload " + s.workload());
            };
        }
    }

    /** Whether the run kept its promises: no overlap (W8: no value answered twice; W9: no stale read; W10: no item
     * popped twice), no lease (W8: increment; W10: item; W11: signal) lost. */
    public static boolean passed(BenchResult r) {
        Object lost = r.extra().get("lost");
        return r.overlaps() == 0 && (lost == null || ((Number) lost).longValue() == 0);
    }

    /** The Tenure rows of the matrix: {@code quick} (short runs, a few points) or {@code full} (issue 7's matrix). */
    public static List<BenchSettings> matrix(String which, List<String> jvmOptions) {
        boolean full = switch (which) {
            case "quick" -> false;
            case "full" -> true;
            default -> throw new IllegalArgumentException("--matrix must be quick or full, got " + which);
        };
        Duration duration = Duration.ofSeconds(full ? 20 : 10);
        // On two cores a member's JIT takes about half its CPU for the first 20-30 s under load
        // (measured with async-profiler); shorter warm-ups measured the compiler, not Tenure.
        Duration warmup = Duration.ofSeconds(full ? 60 : 30);
        List<BenchSettings> runs = new ArrayList<>();
        for (String target : List.of("tenure-1", "tenure-3")) {
            for (int c : full ? List.of(1, 16, 64) : List.of(1, 64)) {
                runs.add(settings(target, "W1", c, duration, warmup, BenchSettings.DEFAULT_LEASES, jvmOptions));
            }
            for (int c : full ? List.of(8, 64) : List.of(8)) {
                runs.add(settings(target, "W2", c, duration, warmup, BenchSettings.DEFAULT_LEASES, jvmOptions));
            }
            runs.add(settings(target, "W6", BenchSettings.DEFAULT_W6_CLIENTS, duration, warmup, BenchSettings.DEFAULT_LEASES,
                    jvmOptions));
            runs.add(settings(target, "W7", BenchSettings.DEFAULT_W7_CLIENTS, duration, warmup, BenchSettings.DEFAULT_LEASES,
                    jvmOptions));
            runs.add(settings(target, "W3", 1, full ? Duration.ofSeconds(60) : Duration.ofSeconds(20), warmup,
                    BenchSettings.DEFAULT_LEASES, jvmOptions));
            if (full) {
                runs.add(settings(target, "W3", 1, Duration.ofSeconds(60), warmup, 100_000, jvmOptions));
            }
            runs.add(settings(target, "W4", 16, duration, warmup, BenchSettings.DEFAULT_LEASES, jvmOptions));
        }
        runs.add(new BenchSettings("tenure-3", "W5", 1, duration, Duration.ZERO, BenchSettings.DEFAULT_LEASES,
                BenchSettings.DEFAULT_WATCHERS, full ? BenchSettings.DEFAULT_ROUNDS : 3, jvmOptions));
        return runs;
    }

    private static BenchSettings settings(String target, String workload, int clients, Duration duration, Duration warmup,
                                          int leases, List<String> jvmOptions) {
        return new BenchSettings(target, workload, clients, duration, warmup, leases, BenchSettings.DEFAULT_WATCHERS,
                BenchSettings.DEFAULT_ROUNDS, jvmOptions);
    }

    /**
     * Runs every setting in turn, printing each JSON line to {@code out} as it completes, then
     * the table. A failed run is reported on stderr and the matrix goes on.
     *
     * @return whether every run completed and passed
     */
    public static boolean runMatrix(List<BenchSettings> runs, PrintStream out) {
        List<BenchResult> results = new ArrayList<>();
        boolean ok = true;
        for (BenchSettings s : runs) {
            try {
                BenchResult r = run(s);
                out.println(r.toJson());
                out.flush();
                results.add(r);
                ok &= passed(r);
            } catch (Exception e) {
                System.err.println("tenure bench: " + s.target() + " " + s.workload() + " failed: " + e);
                ok = false;
            }
        }
        out.println();
        out.print(ResultTable.markdown(results));
        out.flush();
        return ok;
    }
}
