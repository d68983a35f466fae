package io.tenure.cli;

import io.tenure.bench.Bench;
import io.tenure.bench.BenchResult;
import io.tenure.bench.BenchSettings;
import io.tenure.bench.ResultTable;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code tenure bench}: the load generator of module tenure-bench; options in, JSON lines out. */
@Command(name = "bench", mixinStandardHelpOptions = true,
        description = {
            "Starts Tenure members as child processes on 127.0.0.1 (free ports, data in a temporary directory, "
                    + "default durability), runs a workload through the Java SDK, stops them, and prints one JSON "
                    + "line per run on stdout (the format is documented in docs/benchmarks.md).",
            "W1 uncontended lock+unlock, W2 contended hand-offs, W3 leases kept alive, W4 watchers while W1 runs, "
                    + "W5 leader kill -9 and failover (tenure-3 only), W6 clients on one semaphore of --limit permits, "
                    + "W7 clients on one read/write lock, 90 %% of the acquisitions reads, W8 clients incrementing one counter, "
                    + "W9 clients each putting a key of 1,000 and reading it back linearizably, W10 as many producers as consumers on one queue, "
                    + "W11 publishers on one channel with a listener on each member, W12 clients locking random 4 KiB byte ranges "
                    + "of one 1 GiB file (half shared, half exclusive); T1 and T2 are W1 and W2 over the text "
                    + "(dflockd) protocol, one TCP connection per client, to the leader."
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:every run completed without an overlap, a lost lease, a lost or doubled increment or queue item, a lost or reordered signal, or a stale read", "1:a run failed or broke a promise", "2:usage error"})
final class BenchCommand implements Callable<Integer> {
    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @ArgGroup(exclusive = true)
    Mode mode = new Mode();

    static final class Mode {
        @Option(names = "--matrix", paramLabel = "quick|full", description = "Run Tenure's part of the matrix and print the table.")
        String matrix;

        @Option(names = "--table", arity = "0..*", paramLabel = "FILE",
                description = "Print the markdown table (with Tenure-to-peer ratios) of the result lines in FILEs, or stdin.")
        List<Path> table;
    }

    @Option(names = "--target", defaultValue = "tenure-1", description = "tenure-1 or tenure-3 (default: ${DEFAULT-VALUE}).")
    String target;

    @Option(names = "--workload", defaultValue = "W1", description = "W1..W12, T1, T2 (default: ${DEFAULT-VALUE}).")
    String workload;

    @Option(names = "--clients", description = "Concurrent clients for W1, W2, W4, W6 to W9 and W12; W10: producers, and as many consumers; W11: publishers (default: 16; W6 to W10 and W12: 64).")
    Integer clients;

    @Option(names = "--duration", defaultValue = "20s", converter = DurationConverter.class, paramLabel = "DURATION",
            description = "Measured time (W3: how long the leases are held) (default: ${DEFAULT-VALUE}).")
    Duration duration;

    @Option(names = "--warmup", defaultValue = "30s", converter = DurationConverter.class, paramLabel = "DURATION",
            description = "Load before measuring, to get past the JIT: on two cores the members still compile for 20-30 s (default: ${DEFAULT-VALUE}).")
    Duration warmup;

    @Option(names = "--leases", defaultValue = "10000", description = "W3: leases kept alive (default: ${DEFAULT-VALUE}).")
    int leases;

    @Option(names = "--watchers", defaultValue = "1000", description = "W4: watchers on the prefix (default: ${DEFAULT-VALUE}).")
    int watchers;

    @Option(names = "--rounds", defaultValue = "10", description = "W5: leader kills (default: ${DEFAULT-VALUE}).")
    int rounds;

    @Option(names = "--limit", defaultValue = "8", description = "W6: the semaphore's limit, permits held at once (default: ${DEFAULT-VALUE}).")
    int limit;

    @Option(names = "--lock-calls", defaultValue = "session", paramLabel = "session|unary",
            description = "How the SDK sends W1's and W2's lock calls: in its session stream, or one unary RPC each (default: ${DEFAULT-VALUE}).")
    String lockCalls;

    @Option(names = "--tls", description = "Members serve their client ports with mutual TLS (--cert-file, --key-file, "
            + "--trusted-ca-file, --client-cert-auth, certificates made for the run with openssl) and the clients present a "
            + "certificate: what TLS costs, beside a run without (default: off).")
    boolean tls;

    @Option(names = "--auth", description = "Authentication on: the run adds a root user, switches it on, and every client shows "
            + "a bearer token: what checking credentials costs, beside a run without (default: off).")
    boolean auth;

    @Option(names = "--member-jvm-opts", defaultValue = "-Xmx1g -XX:+UseZGC", paramLabel = "OPTIONS",
            description = "JVM options of each member, space separated (default: ${DEFAULT-VALUE}).")
    String memberJvmOptions;

    @Override
    public Integer call() throws Exception {
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        if (mode.table != null) {
            out.print(ResultTable.markdown(ResultTable.read(mode.table)));
            return TenureCli.EXIT_OK;
        }
        List<String> jvm = Arrays.stream(memberJvmOptions.trim().split("\\s+")).filter(o -> !o.isEmpty()).toList();
        if (mode.matrix != null) {
            return Bench.runMatrix(Bench.matrix(mode.matrix, jvm), out) ? TenureCli.EXIT_OK : TenureCli.EXIT_ERROR;
        }
        if (!lockCalls.equals("session") && !lockCalls.equals("unary")) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--lock-calls must be session or unary, got '" + lockCalls + "'");
        }
        BenchResult r = Bench.run(settings(jvm));
        out.println(r.toJson());
        return Bench.passed(r) ? TenureCli.EXIT_OK : TenureCli.EXIT_ERROR;
    }

    /** The one run the options describe; {@code --clients} defaults by workload (W6 to W10: 64). */
    BenchSettings settings(List<String> jvm) {
        int n = clients != null ? clients : BenchSettings.defaultClients(workload);
        return new BenchSettings(target, workload, n, duration, warmup, leases, watchers, rounds, limit, jvm,
                lockCalls.equals("unary"), tls, auth);
    }
}
