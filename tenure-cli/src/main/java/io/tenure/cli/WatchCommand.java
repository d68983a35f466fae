package io.tenure.cli;

import io.tenure.client.TenureClient;
import io.tenure.client.TenureException;
import io.tenure.client.Watch;
import io.tenure.client.WatchEvent;
import io.tenure.client.WatchListener;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code tenure watch KEY}: prints a lock's changes as they happen. */
@Command(name = "watch", mixinStandardHelpOptions = true,
        description = {
            "Prints the changes of lock KEY (or of the locks under a prefix, or of every name a pattern matches) as they happen.",
            "One line per change of lock KEY (or, with --prefix, of every lock whose name starts with KEY) until "
                    + "interrupted (Ctrl-C), in revision order, with no gap and no duplicate across member failures:",
            "  PUT KEY revision=R holder=ID lease=L token=R ...",
            "  DELETE KEY revision=R prev_holder=ID prev_token=T",
            "A PUT is a grant, R its fencing token; it ends with metadata=M when the holder gave some, and with "
                    + "prev_holder and prev_token when the lock was handed over. A DELETE is a lock freed with nobody "
                    + "waiting.",
            "Standard error says from which revision it watches once a member has confirmed the watch."
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:interrupted",
            "1:the watch ended: --rev is older than the changes the server keeps (it says the oldest it has), "
                    + "or the cluster refused the watch",
            "2:usage error"
        })
final class WatchCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "KEY", description = "The lock, or with --prefix the start of the locks' names "
            + "('' for every lock).")
    String key;

    @Option(names = "--prefix", description = "Watch every lock whose name starts with KEY (default: off).")
    boolean prefix;

    @Option(names = "--pattern", description = "KEY is a pattern: watch every name it matches, of every kind (locks, "
            + "semaphores, counters, keys, lists, ...). Dot-separated tokens; '*' matches one whole token, a last '>' "
            + "the one or more tokens after it (default: off).")
    boolean pattern;

    @Option(names = "--rev", paramLabel = "N", defaultValue = "0",
            description = "The first revision to print; 0 prints the changes after the watch starts (default: ${DEFAULT-VALUE}). "
                    + "To miss nothing after 'tenure describe', pass its revision + 1.")
    long startRevision;

    @Mixin
    EndpointsOption endpoints;

    @Override
    public Integer call() throws ExecutionException {
        if (startRevision < 0) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--rev': must be 0 or more, got "
                    + startRevision);
        }
        if (prefix && pattern) {
            throw new ParameterException(spec.commandLine(), "--prefix and --pattern cannot be used together");
        }
        if (!prefix && key.isEmpty()) {
            throw new ParameterException(spec.commandLine(),
                    "Invalid value for positional parameter KEY: must not be empty (use --prefix '' to watch every lock)");
        }
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        CompletableFuture<Integer> ended = new CompletableFuture<>();
        WatchListener listener = new WatchListener() {
            @Override
            public void onEvent(WatchEvent event) {
                out.println(line(event));
                out.flush();
            }

            @Override
            public void onCompacted(long compactRevision) {
                err.println("tenure watch: changes this watch has not printed yet are no longer kept (the oldest kept"
                        + " revision is " + compactRevision + "); read the state with 'tenure describe' and watch again"
                        + " from its revision + 1");
                err.flush();
                ended.complete(TenureCli.EXIT_ERROR);
            }

            @Override
            public void onError(TenureException error) {
                err.println("tenure watch: " + error.getMessage());
                err.flush();
                ended.complete(TenureCli.EXIT_ERROR);
            }
        };
        try (TenureClient client = endpoints.connect();
             Watch watch = pattern ? client.watchPattern(key, startRevision, listener)
                     : prefix ? client.watchPrefix(key, startRevision, listener) : client.watch(key, startRevision, listener)) {
            watch.started().thenAccept(revision -> {
                err.println("tenure watch: watching " + (pattern ? "names matching '" + key + "'" : prefix ? "locks under '" + key + "'" : "'" + key + "'")
                        + (startRevision > 0 ? " from revision " + startRevision : " for changes after revision " + revision));
                err.flush();
            });
            return ended.get();
        } catch (InterruptedException e) {
            // Interrupted (the watch is closed above): the normal end of a watch.
            Thread.currentThread().interrupt();
            return TenureCli.EXIT_OK;
        }
    }

    /** One event as one line: type, key, revision, then the holder (PUT) and the previous holder. */
    static String line(WatchEvent event) {
        StringBuilder line = new StringBuilder().append(event.type()).append(' ').append(event.key())
                .append(" revision=").append(event.revision());
        if (event.type() == WatchEvent.Type.PUT) {
            line.append(" holder=").append(event.holder()).append(" lease=").append(event.leaseId())
                    .append(" token=").append(event.fencingToken());
            String metadata = Formats.metadata(event.metadata());
            if (!metadata.isEmpty()) {
                line.append(" metadata=").append(metadata);
            }
        }
        if (event.prevFencingToken() != 0) {
            line.append(" prev_holder=").append(event.prevHolder()).append(" prev_token=").append(event.prevFencingToken());
        }
        if (!event.kind().equals("lock")) {
            // A lock's lines stay as they were; a barrier may share a lock's name.
            line.append(" kind=").append(event.kind());
        }
        return line.toString().replace('\n', ' ').replace('\r', ' ');
    }
}
