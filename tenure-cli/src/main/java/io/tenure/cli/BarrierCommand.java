package io.tenure.cli;

import io.tenure.client.Lease;
import io.tenure.client.LeaseLostException;
import io.tenure.client.TenureBarrier;
import io.tenure.client.TenureClient;
import io.tenure.core.barrier.DoubleBarrierTable;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code tenure barrier NAME --parties N}: arrives at a barrier and returns once every party has;
 * with {@code --double -- COMMAND}, runs COMMAND inside a double barrier ({@link DoubleBarrierRun}).
 */
@Command(name = "barrier", mixinStandardHelpOptions = true,
        description = {"Arrives at barrier NAME and returns once --parties processes (on any host) have arrived, all of them "
                + "together; prints 'released: REVISION' (the same for every party).",
            "A party that times out, or whose lease is lost, leaves the barrier. The number of parties is fixed while anyone "
                + "waits.",
            "With --double -- COMMAND: enters double barrier NAME, runs COMMAND once all --parties have entered (it sees "
                + "TENURE_LOCK_KEY, the name, and TENURE_LEASE_ID), then leaves and returns once every party has left, with "
                + "COMMAND's exit status. A party whose lease is lost (COMMAND is stopped) leaves; one not let in within "
                + "--timeout withdraws and exits 4. While a generation is inside, an enter waits for the next one."},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:released",
            "0..255:with --double: COMMAND's own exit status",
            "1:any other error (no member reachable, request refused: another number of parties, a name of another kind)",
            "2:usage error",
            "3:the lease was lost while waiting",
            "4:not released within --timeout (this party left the barrier)"
        })
final class BarrierCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "NAME", description = "The barrier's name.")
    String name;

    @Option(names = "--parties", required = true, paramLabel = "N", description = "How many parties the barrier releases together (1 to 100000).")
    int parties;

    @Option(names = "--timeout", defaultValue = "30s", converter = DurationConverter.OrForever.class, paramLabel = "DURATION",
            description = "How long to wait for the others: 0 passes only as the last party, 'forever' waits until released "
                    + "(default: ${DEFAULT-VALUE}).")
    Duration timeout;

    @Option(names = "--ttl", defaultValue = "10s", converter = DurationConverter.class, paramLabel = "DURATION",
            description = "Lease time to live while waiting (default: ${DEFAULT-VALUE}).")
    Duration ttl;

    @Option(names = "--client-id", paramLabel = "ID", description = "The party name others see (default: user@hostname:pid).")
    String clientId;

    @Option(names = "--double", description = "A double barrier: enter, run COMMAND, leave (1 to 1000000 parties).")
    boolean doubleBarrier;

    @Parameters(index = "1..*", arity = "0..*", paramLabel = "COMMAND", description = "With --double: the command to run inside.")
    List<String> command;

    @Mixin
    EndpointsOption endpoints;

    @Override
    public Integer call() throws java.io.IOException, InterruptedException {
        if (doubleBarrier || command != null) {
            return callDouble();
        }
        if (parties < 1 || parties > 100_000) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--parties': must be 1 to 100000, got " + parties);
        }
        if (ttl.isZero()) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--ttl': must be more than 0");
        }
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        try (TenureClient client = endpoints.connect();
             Lease lease = client.grantLease(ttl, clientId != null ? clientId : LeaseBoundCommand.defaultClientId())) {
            TenureBarrier barrier = client.barrier(name, parties, lease);
            TenureBarrier.Release release = timeout == null ? barrier.awaitAsync().join() : barrier.awaitAsync(timeout).join();
            if (!release.released()) {
                err.println("tenure barrier: '" + name + "' was not released within " + timeout.toMillis() + " ms ("
                        + release.arrived() + " other of " + parties + " parties waiting); this party left");
                return TenureCli.EXIT_NOT_ACQUIRED;
            }
            out.println("released: " + release.revision());
            out.flush();
            return TenureCli.EXIT_OK;
        } catch (java.util.concurrent.CompletionException e) {
            if (e.getCause() instanceof LeaseLostException lost) {
                err.println("tenure barrier: " + lost.getMessage() + "; this party left '" + name + "'");
                return TenureCli.EXIT_LEASE_LOST;
            }
            throw e.getCause() instanceof RuntimeException cause ? cause : e;
        }
    }

    /** {@code --double -- COMMAND}: enters, runs COMMAND once all parties entered, leaves ({@link DoubleBarrierRun}). */
    private int callDouble() throws java.io.IOException, InterruptedException {
        if (!doubleBarrier || command == null || command.isEmpty()) {
            throw new ParameterException(spec.commandLine(), doubleBarrier ? "--double needs a COMMAND to run inside, after '--'"
                    : "a COMMAND runs inside a double barrier only: add --double");
        }
        if (parties < 1 || parties > DoubleBarrierTable.MAX_PARTIES) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--parties': must be 1 to "
                    + DoubleBarrierTable.MAX_PARTIES + ", got " + parties);
        }
        if (ttl.isZero()) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--ttl': must be more than 0");
        }
        try (TenureClient client = endpoints.connect()) {
            return new DoubleBarrierRun(spec.qualifiedName(), name, parties, timeout, command, spec.commandLine().getErr())
                    .run(client, ttl, clientId != null ? clientId : LeaseBoundCommand.defaultClientId());
        }
    }
}
