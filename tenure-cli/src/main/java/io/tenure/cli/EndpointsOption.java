package io.tenure.cli;

import io.tenure.client.TenureClient;
import java.time.Duration;
import java.util.List;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The {@code --endpoints} and {@code --request-timeout} options shared by the client commands;
 * {@code TENURE_ENDPOINTS} and {@code TENURE_REQUEST_TIMEOUT} when not given (see {@link SettingSources}).
 */
final class EndpointsOption {
    @Spec(Spec.Target.MIXEE)
    CommandSpec spec;

    // Defaults written out, not ${DEFAULT-VALUE}, which would show what TENURE_ENDPOINTS gave.
    @Option(names = "--endpoints", split = ",", paramLabel = "HOST:PORT", defaultValue = "127.0.0.1:7070",
            description = "Members to talk to, comma-separated; TENURE_ENDPOINTS when not given. Any member will do: "
                    + "a call that finds one not serving (down, no leader) moves on to the next, and keeps cycling "
                    + "through them with backoff until answered or --request-timeout (default: 127.0.0.1:7070).")
    List<String> endpoints;

    @Option(names = "--request-timeout", paramLabel = "DURATION", defaultValue = "10s",
            converter = DurationConverter.class,
            description = "How long one request may keep trying the endpoints, e.g. 500ms, 10s; long enough "
                    + "for a leader election; TENURE_REQUEST_TIMEOUT when not given (default: 10s).")
    Duration requestTimeout;

    @Option(names = "--cacert", paramLabel = "FILE",
            description = "Speak TLS to the members, trusting the CA certificate(s) of this PEM file (a member's "
                    + "certificate must name the host of its endpoint); TENURE_CACERT when not given (default: plaintext).")
    java.nio.file.Path cacert;

    @Option(names = "--cert", paramLabel = "FILE",
            description = "This client's certificate, PEM, for members started with --client-cert-auth; needs --key and "
                    + "--cacert; TENURE_CERT when not given (default: none).")
    java.nio.file.Path cert;

    @Option(names = "--key", paramLabel = "FILE",
            description = "The private key of --cert, PEM (PKCS#8), not encrypted; TENURE_KEY when not given (default: none).")
    java.nio.file.Path key;

    @Option(names = "--token", paramLabel = "TOKEN",
            description = "A bearer token (from 'tenure auth token') shown on every call, for members with authentication "
                    + "on; TENURE_TOKEN when not given. Use it with --cacert: over plaintext it can be read off the wire "
                    + "(default: none).")
    String token;

    /** Connects lazily; a malformed endpoint is a usage error naming {@code --endpoints}. */
    TenureClient connect() {
        if (requestTimeout.isZero()) {
            throw new ParameterException(spec.commandLine(), sourceOf("--request-timeout")
                    + "Invalid value for option '--request-timeout': must be more than 0");
        }
        TenureClient.Builder builder = TenureClient.builder();
        if ((cert == null) != (key == null)) {
            throw new ParameterException(spec.commandLine(), "a client certificate needs --cert and --key together; missing: "
                    + (cert == null ? "--cert" : "--key"));
        }
        if (cert != null && cacert == null) {
            throw new ParameterException(spec.commandLine(), "--cert needs --cacert: the CA that signed the members' certificates");
        }
        if (cacert != null) {
            try {
                builder.tls(cacert, cert, key);
            } catch (IllegalArgumentException e) {
                throw new ParameterException(spec.commandLine(), sourceOf("--cacert") + e.getMessage());
            }
        }
        if (token != null && !token.isEmpty()) {
            try {
                builder.token(token);
            } catch (IllegalArgumentException e) {
                throw new ParameterException(spec.commandLine(), sourceOf("--token") + "Invalid value for option '--token': "
                        + e.getMessage());
            }
        }
        try {
            return builder.endpoints(endpoints).requestTimeout(requestTimeout).build();
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), sourceOf("--endpoints") + "Invalid value for option '--endpoints': "
                    + e.getMessage());
        }
    }

    /** {@code "TENURE_ENDPOINTS=...: "} when the environment gave {@code option}, else "". */
    String sourceOf(String option) {
        if (spec.defaultValueProvider() instanceof SettingSources sources) {
            String source = sources.sourceOf(spec.findOption(option));
            return source == null ? "" : source + ": ";
        }
        return "";
    }
}
