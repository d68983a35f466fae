package io.tenure.cli;

import io.tenure.client.TenureClient;
import io.tenure.client.TenureQueue;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code tenure list push|pop|len}: replicated lists used as queues. */
@Command(name = "list", mixinStandardHelpOptions = true,
        description = {
            "Pushes to, pops from, or measures a replicated list. An item goes to exactly one pop; pops that wait are "
                    + "served in arrival order. Values are text (UTF-8), at most 16 KiB.",
            "pop prints the item alone, so scripts can use it: job=$(tenure list pop jobs --timeout 30s)."
        },
        subcommands = {ListCommand.Push.class, ListCommand.Pop.class, ListCommand.Length.class},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:success",
            "1:any other error (no member reachable, the list is full, a value too long)",
            "2:usage error",
            "3:the lease was lost while waiting",
            "4:pop: no item came within --timeout (the wait was withdrawn)"
        })
final class ListCommand {

    /** What every list subcommand shares: the list's name and the members to ask. */
    abstract static class OnList implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(index = "0", paramLabel = "NAME", description = "The list's name.")
        String name;

        @Mixin
        EndpointsOption endpoints;

        @Override
        public Integer call() {
            try (TenureClient client = endpoints.connect()) {
                TenureQueue list;
                try {
                    list = client.queue(name);
                } catch (IllegalArgumentException e) {
                    throw new ParameterException(spec.commandLine(), "Invalid value for positional parameter NAME: " + e.getMessage());
                }
                return run(list, spec.commandLine().getOut(), spec.commandLine().getErr());
            }
        }

        abstract int run(TenureQueue list, PrintWriter out, PrintWriter err);
    }

    @Command(name = "push", mixinStandardHelpOptions = true,
            description = "Pushes VALUE at the tail of list NAME (--left: at its head) and prints the length after it "
                    + "(0 when a waiting pop received the item).")
    static final class Push extends OnList {
        @Parameters(index = "1", paramLabel = "VALUE", description = "The item, as text.")
        String value;

        @Option(names = "--left", description = "Push at the head, so that it is popped next.")
        boolean left;

        @Override
        int run(TenureQueue list, PrintWriter out, PrintWriter err) {
            byte[] item = value.getBytes(StandardCharsets.UTF_8);
            if (item.length > TenureQueue.MAX_VALUE_BYTES) {
                throw new ParameterException(spec.commandLine(), "Invalid value for positional parameter VALUE: at most "
                        + TenureQueue.MAX_VALUE_BYTES + " bytes, got " + item.length);
            }
            out.println(left ? list.offerFirst(item) : list.offer(item));
            out.flush();
            return TenureCli.EXIT_OK;
        }
    }

    @Command(name = "pop", mixinStandardHelpOptions = true,
            description = "Pops the item at the head of list NAME (--right: at its tail) and prints it alone, waiting up to "
                    + "--timeout for one; exit 4 when none came.")
    static final class Pop extends OnList {
        @Option(names = "--timeout", defaultValue = "0s", converter = DurationConverter.OrForever.class, paramLabel = "DURATION",
                description = "How long to wait for an item: 0 does not wait, 'forever' waits until one comes (default: ${DEFAULT-VALUE}).")
        Duration timeout;

        @Option(names = "--right", description = "Pop at the tail.")
        boolean right;

        @Override
        int run(TenureQueue list, PrintWriter out, PrintWriter err) {
            Optional<byte[]> item;
            try {
                item = timeout != null && timeout.isZero() ? list.pollAsync(!right).join()
                        : list.pollAsync(!right, timeout == null ? Duration.ofDays(3650) : timeout).join();
            } catch (java.util.concurrent.CompletionException e) {
                if (e.getCause() instanceof io.tenure.client.LeaseLostException lost) {
                    err.println("tenure list pop: " + lost.getMessage() + "; the wait at '" + name + "' was withdrawn");
                    return TenureCli.EXIT_LEASE_LOST;
                }
                throw e.getCause() instanceof RuntimeException cause ? cause : e;
            }
            if (item.isEmpty()) {
                err.println("tenure list pop: no item in '" + name + "'" + (timeout != null && timeout.isZero() ? ""
                        : " within " + timeout.toMillis() + " ms; the wait was withdrawn"));
                err.flush();
                return TenureCli.EXIT_NOT_ACQUIRED;
            }
            out.println(new String(item.get(), StandardCharsets.UTF_8));
            out.flush();
            return TenureCli.EXIT_OK;
        }
    }

    @Command(name = "len", mixinStandardHelpOptions = true, description = "Prints the number of items in list NAME, read linearizably.")
    static final class Length extends OnList {
        @Override
        int run(TenureQueue list, PrintWriter out, PrintWriter err) {
            out.println(list.size());
            out.flush();
            return TenureCli.EXIT_OK;
        }
    }
}
