package io.tenure.cli;

import io.tenure.client.TenureClient;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code tenure signal CHANNEL PAYLOAD}: publishes a signal. */
@Command(name = "signal", mixinStandardHelpOptions = true,
        description = {
            "Publishes PAYLOAD on CHANNEL and prints how many listeners it went to (a queue group counts once).",
            "CHANNEL is dot-separated tokens without wildcards (orders.created). Every listener whose pattern matches "
                    + "receives it, on whichever member it listens, and one member of each queue group. Signals are not "
                    + "stored: a listener that is not listening when the signal is published misses it."
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:published (also to no listener: the count says 0)",
            "1:any other error (no member reachable, an invalid channel or payload)",
            "2:usage error"
        })
final class SignalCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "CHANNEL", description = "The channel, dot-separated tokens (no '*' or '>').")
    String channel;

    @Parameters(index = "1", paramLabel = "PAYLOAD", description = "The payload, sent as UTF-8 (at most 64 KiB).")
    String payload;

    @Mixin
    EndpointsOption endpoints;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        try (TenureClient client = endpoints.connect()) {
            out.println(client.topic().publish(channel, payload.getBytes(StandardCharsets.UTF_8)));
            out.flush();
            return TenureCli.EXIT_OK;
        }
    }
}
