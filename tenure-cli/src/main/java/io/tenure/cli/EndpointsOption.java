package io.tenure.cli;

import io.tenure.client.TenureClient;
import java.util.List;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** The {@code --endpoints} option shared by the client commands. */
final class EndpointsOption {
    @Spec(Spec.Target.MIXEE)
    CommandSpec spec;

    @Option(names = "--endpoints", split = ",", paramLabel = "HOST:PORT", defaultValue = "127.0.0.1:7070",
            description = "Members to talk to, comma-separated; any member will do (default: ${DEFAULT-VALUE}).")
    List<String> endpoints;

    /** Connects lazily; a malformed endpoint is a usage error naming {@code --endpoints}. */
    TenureClient connect() {
        try {
            return TenureClient.connect(endpoints);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--endpoints': " + e.getMessage());
        }
    }
}
