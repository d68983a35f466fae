package io.tenure.cli;

import io.tenure.client.TenureClient;
import java.time.Duration;
import java.util.List;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** The {@code --endpoints} and {@code --request-timeout} options shared by the client commands. */
final class EndpointsOption {
    @Spec(Spec.Target.MIXEE)
    CommandSpec spec;

    @Option(names = "--endpoints", split = ",", paramLabel = "HOST:PORT", defaultValue = "127.0.0.1:7070",
            description = "Members to talk to, comma-separated. Any member will do: a call that finds one not "
                    + "serving (down, no leader) moves on to the next, and keeps cycling through them with "
                    + "backoff until answered or --request-timeout (default: ${DEFAULT-VALUE}).")
    List<String> endpoints;

    @Option(names = "--request-timeout", paramLabel = "DURATION", defaultValue = "10s",
            converter = DurationConverter.class,
            description = "How long one request may keep trying the endpoints, e.g. 500ms, 10s; long enough "
                    + "for a leader election (default: ${DEFAULT-VALUE}).")
    Duration requestTimeout;

    /** Connects lazily; a malformed endpoint is a usage error naming {@code --endpoints}. */
    TenureClient connect() {
        if (requestTimeout.isZero()) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--request-timeout': must be more than 0");
        }
        try {
            return TenureClient.builder().endpoints(endpoints).requestTimeout(requestTimeout).build();
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--endpoints': " + e.getMessage());
        }
    }
}
