package io.tenure.cli;

import io.tenure.client.TenureClient;
import io.tenure.client.TenureCounter;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code tenure counter incr|decr|get|set|cas}: replicated 64-bit counters. */
@Command(name = "counter", mixinStandardHelpOptions = true,
        description = {
            "Changes or reads a replicated signed 64-bit counter. A counter that does not exist reads 0 and comes into "
                    + "being at its first change; it is bound to no lease, and a change is applied once even when the "
                    + "client retries it on another member.",
            "Each command prints the counter's value alone (after the change), so scripts can use it: "
                    + "n=$(tenure counter incr jobs/seq)."
        },
        subcommands = {CounterCommand.Incr.class, CounterCommand.Decr.class, CounterCommand.Get.class, CounterCommand.Set.class,
            CounterCommand.CompareAndSet.class},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:success",
            "1:any other error (no member reachable, the sum would leave the 64-bit range, cas found another value)",
            "2:usage error"
        })
final class CounterCommand {

    /** What every counter subcommand shares: the counter's name and the members to ask. */
    abstract static class Change implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(index = "0", paramLabel = "NAME", description = "The counter's name.")
        String name;

        @Mixin
        EndpointsOption endpoints;

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            try (TenureClient client = endpoints.connect()) {
                TenureCounter counter;
                try {
                    counter = client.counter(name);
                } catch (IllegalArgumentException e) {
                    throw new ParameterException(spec.commandLine(), "Invalid value for positional parameter NAME: " + e.getMessage());
                }
                return run(counter, out, spec.commandLine().getErr());
            }
        }

        abstract int run(TenureCounter counter, PrintWriter out, PrintWriter err);

        static int printed(PrintWriter out, long value) {
            out.println(value);
            out.flush();
            return TenureCli.EXIT_OK;
        }
    }

    @Command(name = "incr", mixinStandardHelpOptions = true,
            description = "Adds DELTA (default 1) to counter NAME and prints the value after it.")
    static final class Incr extends Change {
        @Parameters(index = "1", paramLabel = "DELTA", defaultValue = "1", description = "How much to add (default: ${DEFAULT-VALUE}).")
        long delta;

        @Override
        int run(TenureCounter counter, PrintWriter out, PrintWriter err) {
            return printed(out, counter.addAndGet(delta));
        }
    }

    @Command(name = "decr", mixinStandardHelpOptions = true,
            description = "Subtracts DELTA (default 1) from counter NAME and prints the value after it.")
    static final class Decr extends Change {
        @Parameters(index = "1", paramLabel = "DELTA", defaultValue = "1", description = "How much to subtract (default: ${DEFAULT-VALUE}).")
        long delta;

        @Override
        int run(TenureCounter counter, PrintWriter out, PrintWriter err) {
            if (delta == Long.MIN_VALUE) {
                throw new ParameterException(spec.commandLine(), "Invalid value for positional parameter DELTA: "
                        + delta + " cannot be negated; use 'tenure counter incr NAME " + delta + "' instead");
            }
            return printed(out, counter.addAndGet(-delta));
        }
    }

    @Command(name = "get", mixinStandardHelpOptions = true,
            description = "Prints counter NAME's value alone, read linearizably (0 when it does not exist).")
    static final class Get extends Change {
        @Override
        int run(TenureCounter counter, PrintWriter out, PrintWriter err) {
            return printed(out, counter.get());
        }
    }

    @Command(name = "set", mixinStandardHelpOptions = true, description = "Sets counter NAME to VALUE and prints it.")
    static final class Set extends Change {
        @Parameters(index = "1", paramLabel = "VALUE", description = "The new value.")
        long value;

        @Override
        int run(TenureCounter counter, PrintWriter out, PrintWriter err) {
            counter.set(value);
            return printed(out, value);
        }
    }

    @Command(name = "cas", mixinStandardHelpOptions = true,
            description = "Sets counter NAME to VALUE only if it is EXPECTED now (0 when it does not exist), and prints VALUE; "
                    + "otherwise changes nothing, says what it is, and exits 1.")
    static final class CompareAndSet extends Change {
        @Parameters(index = "1", paramLabel = "EXPECTED", description = "The value the counter must have.")
        long expected;

        @Parameters(index = "2", paramLabel = "VALUE", description = "The new value.")
        long value;

        @Override
        int run(TenureCounter counter, PrintWriter out, PrintWriter err) {
            if (counter.compareAndSet(expected, value)) {
                return printed(out, value);
            }
            err.println("tenure counter cas: '" + counter.name() + "' is " + counter.get() + ", not " + expected + "; nothing changed");
            err.flush();
            return TenureCli.EXIT_ERROR;
        }
    }
}
