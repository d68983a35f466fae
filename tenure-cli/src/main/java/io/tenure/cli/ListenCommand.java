package io.tenure.cli;

import io.tenure.client.SignalListener;
import io.tenure.client.Subscription;
import io.tenure.client.TenureClient;
import io.tenure.client.TenureException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code tenure listen PATTERN [--group G]}: prints signals as they come. */
@Command(name = "listen", mixinStandardHelpOptions = true,
        description = {
            "Prints the signals published on the channels PATTERN matches, one line each, until interrupted (Ctrl-C):",
            "  CHANNEL PAYLOAD",
            "PATTERN is dot-separated tokens; '*' matches one whole token and a last '>' the one or more tokens that "
                    + "follow (orders.> matches orders.created and orders.created.eu). With --group, this listener is "
                    + "one of a queue group: each signal goes to one member of the group, in turn.",
            "The listener is bound to this command's session lease: it goes when the command ends. It follows the "
                    + "cluster across member failures, missing the signals published while it moves (signals are not stored). "
                    + "Standard error says when a member has registered it.",
            "Line breaks in a payload are printed as spaces."
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:interrupted",
            "1:the listener ended: refused (an invalid pattern), cut off as too slow, or its lease was lost",
            "2:usage error"
        })
final class ListenCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "PATTERN", description = "The channels to listen to: tokens, '*' and a last '>'.")
    String pattern;

    @Option(names = "--group", paramLabel = "G", defaultValue = "", description = "A queue group to listen in (default: none).")
    String group;

    @Mixin
    EndpointsOption endpoints;

    @Override
    public Integer call() throws ExecutionException {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        CompletableFuture<Integer> ended = new CompletableFuture<>();
        SignalListener listener = new SignalListener() {
            @Override
            public void onSignal(String channel, byte[] payload) {
                String text = new String(payload, StandardCharsets.UTF_8).replace('\n', ' ').replace('\r', ' ');
                out.println(channel + " " + text);
                out.flush();
            }

            @Override
            public void onError(TenureException error) {
                err.println("tenure listen: " + error.getMessage());
                err.flush();
                ended.complete(TenureCli.EXIT_ERROR);
            }
        };
        try (TenureClient client = endpoints.connect();
             Subscription subscription = client.topic().listen(pattern, group, listener)) {
            subscription.started().thenRun(() -> {
                err.println("tenure listen: listening to '" + pattern + "'" + (group.isEmpty() ? "" : " in group '" + group + "'"));
                err.flush();
            });
            return ended.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return TenureCli.EXIT_OK;
        }
    }
}
