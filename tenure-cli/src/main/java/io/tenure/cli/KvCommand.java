package io.tenure.cli;

import io.tenure.client.TenureClient;
import io.tenure.client.TenureKv;
import java.io.PrintWriter;
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

/** {@code tenure kv put|get|del|list}: the replicated key-value store. */
@Command(name = "kv", mixinStandardHelpOptions = true,
        description = {
            "Puts, reads, deletes and lists keys of the replicated key-value store. Values are text here (UTF-8); "
                    + "a put is applied once even when the client retries it on another member.",
            "get prints the value alone, so scripts can use it: mode=$(tenure kv get config/mode)."
        },
        subcommands = {KvCommand.Put.class, KvCommand.Get.class, KvCommand.Delete.class, KvCommand.List.class},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:success",
            "1:any other error (no member reachable, the key is absent for get or del)",
            "2:usage error"
        })
final class KvCommand {

    /** What every kv subcommand shares: the members to ask. */
    abstract static class Call implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        EndpointsOption endpoints;

        @Override
        public Integer call() {
            try (TenureClient client = endpoints.connect()) {
                try {
                    return run(client.kv(), spec.commandLine().getOut(), spec.commandLine().getErr());
                } catch (IllegalArgumentException e) {
                    throw new ParameterException(spec.commandLine(), "Invalid value: " + e.getMessage());
                }
            }
        }

        abstract int run(TenureKv kv, PrintWriter out, PrintWriter err);

        static int absent(PrintWriter err, String command, String key) {
            err.println("tenure kv " + command + ": key '" + key + "' does not exist");
            err.flush();
            return TenureCli.EXIT_ERROR;
        }
    }

    @Command(name = "put", mixinStandardHelpOptions = true,
            description = "Sets KEY to VALUE (replacing its value and any TTL) and prints the put's revision.")
    static final class Put extends Call {
        @Parameters(index = "0", paramLabel = "KEY", description = "The key.")
        String key;

        @Parameters(index = "1", paramLabel = "VALUE", description = "The value, as UTF-8 text.")
        String value;

        @Option(names = "--ttl", paramLabel = "DURATION", converter = DurationConverter.class,
                description = "The key goes this long after the put unless put again, e.g. 30s, 5m (default: never).")
        Duration ttl;

        @Override
        int run(TenureKv kv, PrintWriter out, PrintWriter err) {
            if (ttl != null && (ttl.isZero() || ttl.compareTo(Duration.ofDays(1)) > 0)) {
                throw new ParameterException(spec.commandLine(), "Invalid value for option '--ttl': must be between 1ms and 24h, got " + ttl);
            }
            long revision = ttl == null ? kv.put(key, value) : kv.put(key, value, ttl);
            out.println(revision);
            out.flush();
            return TenureCli.EXIT_OK;
        }
    }

    @Command(name = "get", mixinStandardHelpOptions = true,
            description = "Prints KEY's value alone, read linearizably; exits 1 with a message when the key does not exist.")
    static final class Get extends Call {
        @Parameters(index = "0", paramLabel = "KEY", description = "The key.")
        String key;

        @Override
        int run(TenureKv kv, PrintWriter out, PrintWriter err) {
            Optional<TenureKv.Entry> entry = kv.get(key);
            if (entry.isEmpty()) {
                return absent(err, "get", key);
            }
            out.println(entry.get().valueAsString());
            out.flush();
            return TenureCli.EXIT_OK;
        }
    }

    @Command(name = "del", mixinStandardHelpOptions = true,
            description = "Deletes KEY; exits 1 with a message when it does not exist.")
    static final class Delete extends Call {
        @Parameters(index = "0", paramLabel = "KEY", description = "The key.")
        String key;

        @Override
        int run(TenureKv kv, PrintWriter out, PrintWriter err) {
            return kv.delete(key) ? TenureCli.EXIT_OK : absent(err, "del", key);
        }
    }

    @Command(name = "list", mixinStandardHelpOptions = true,
            description = "Prints the keys that start with PREFIX, in key order, one a line: the key, a tab, the value.")
    static final class List extends Call {
        /** A page: the list continues after its last key until none remain. */
        private static final int PAGE = 1_000;

        @Parameters(index = "0", paramLabel = "PREFIX", defaultValue = "", description = "The keys' prefix (default: every key).")
        String prefix;

        @Override
        int run(TenureKv kv, PrintWriter out, PrintWriter err) {
            String after = "";
            TenureKv.Page page;
            do {
                page = kv.list(prefix, after, PAGE);
                for (TenureKv.Entry entry : page.entries()) {
                    out.println(entry.key() + "\t" + entry.valueAsString());
                }
                after = page.nextAfterKey();
            } while (page.more());
            out.flush();
            return TenureCli.EXIT_OK;
        }
    }
}
