package io.tenure.cli;

import io.tenure.client.Lease;
import io.tenure.client.LeaseLostException;
import io.tenure.client.TenureClient;
import io.tenure.client.TenureCountDownLatch;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code tenure latch NAME --count N | --count-down | --await}: sets, counts down or awaits a count-down latch. */
@Command(name = "latch", mixinStandardHelpOptions = true,
        description = {"Sets count-down latch NAME's count (--count N, only when the latch does not exist), counts it down by "
                + "one (--count-down; prints 'count: C', the count after it), or waits until its count is zero (--await; "
                + "prints 'count: 0').",
            "A latch exists while its count is above zero and is bound to no lease; at zero every waiter is released "
                + "together and the latch is gone. Counting down a latch that does not exist changes nothing; awaiting one "
                + "returns at once. A wait that times out, or whose lease is lost, is withdrawn."},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:the count was set, counted down, or is zero",
            "1:any other error (no member reachable, request refused: --count for a latch that exists, a name of another kind)",
            "2:usage error",
            "3:the lease was lost while waiting",
            "4:the count did not reach zero within --timeout (the wait was withdrawn)"
        })
final class LatchCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "NAME", description = "The latch's name.")
    String name;

    @Option(names = "--count", paramLabel = "N", description = "Sets the count (1 to 1000000) when the latch does not exist.")
    Integer count;

    @Option(names = "--count-down", description = "Lowers the count by one.")
    boolean countDown;

    @Option(names = "--await", description = "Waits until the count is zero.")
    boolean await;

    @Option(names = "--timeout", defaultValue = "30s", converter = DurationConverter.OrForever.class, paramLabel = "DURATION",
            description = "With --await, how long to wait: 0 only looks, 'forever' waits until the count is zero "
                    + "(default: ${DEFAULT-VALUE}).")
    Duration timeout;

    @Option(names = "--ttl", defaultValue = "10s", converter = DurationConverter.class, paramLabel = "DURATION",
            description = "With --await, the lease's time to live while waiting (default: ${DEFAULT-VALUE}).")
    Duration ttl;

    @Option(names = "--client-id", paramLabel = "ID", description = "With --await, the name others see waiting (default: user@hostname:pid).")
    String clientId;

    @Mixin
    EndpointsOption endpoints;

    @Override
    public Integer call() {
        int modes = (count != null ? 1 : 0) + (countDown ? 1 : 0) + (await ? 1 : 0);
        if (modes != 1) {
            throw new ParameterException(spec.commandLine(), "Give exactly one of --count N, --count-down and --await");
        }
        if (count != null && (count < 1 || count > TenureCountDownLatch.MAX_COUNT)) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--count': must be 1 to "
                    + TenureCountDownLatch.MAX_COUNT + ", got " + count);
        }
        if (ttl.isZero()) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--ttl': must be more than 0");
        }
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        try (TenureClient client = endpoints.connect()) {
            TenureCountDownLatch latch = latch(client, null);
            if (count != null) {
                if (!latch.trySetCount(count)) {
                    err.println("tenure latch: '" + name + "' already exists with count " + latch.getCount()
                            + " (a count is set only while the latch does not exist)");
                    return TenureCli.EXIT_ERROR;
                }
                out.println("set: " + count);
            } else if (countDown) {
                out.println("count: " + latch.countDown());
            } else {
                return await(client, out, err);
            }
            out.flush();
            return TenureCli.EXIT_OK;
        }
    }

    private int await(TenureClient client, PrintWriter out, PrintWriter err) {
        try (Lease lease = client.grantLease(ttl, clientId != null ? clientId : LeaseBoundCommand.defaultClientId())) {
            TenureCountDownLatch latch = latch(client, lease);
            boolean zero = timeout == null ? latch.awaitAsync().join() : latch.awaitAsync(timeout).join();
            if (!zero) {
                err.println("tenure latch: '" + name + "' did not reach zero within " + timeout.toMillis() + " ms (count "
                        + latch.getCount() + "); the wait was withdrawn");
                return TenureCli.EXIT_NOT_ACQUIRED;
            }
            out.println("count: 0");
            out.flush();
            return TenureCli.EXIT_OK;
        } catch (java.util.concurrent.CompletionException e) {
            if (e.getCause() instanceof LeaseLostException lost) {
                err.println("tenure latch: " + lost.getMessage() + "; the wait at '" + name + "' was withdrawn");
                return TenureCli.EXIT_LEASE_LOST;
            }
            throw e.getCause() instanceof RuntimeException cause ? cause : e;
        }
    }

    private TenureCountDownLatch latch(TenureClient client, Lease lease) {
        try {
            return lease == null ? client.countDownLatch(name) : client.countDownLatch(name, lease);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), "Invalid value for positional parameter NAME: " + e.getMessage());
        }
    }
}
