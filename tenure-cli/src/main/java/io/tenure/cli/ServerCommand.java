package io.tenure.cli;

import io.tenure.server.ServerConfig;
import io.tenure.server.TenureServer;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code tenure server}: runs one member until it is stopped. */
@Command(name = "server", mixinStandardHelpOptions = true,
        description = "Runs a Tenure member (a single durable node by default) until interrupted.",
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:stopped on request (SIGTERM, Ctrl-C)",
            "1:could not start (for example an unusable data directory or a port in use), or stopped on a fatal error",
            "2:usage error"
        })
final class ServerCommand implements Callable<Integer> {
    /** Which option sets each setting that {@link ServerConfig#validate()} may name first in its message. */
    private static final Map<String, String> OPTION_OF_SETTING = Map.of(
            "member name", "--member",
            "client port", "--client-port",
            "peer port", "--peer-port");

    @Spec
    CommandSpec spec;

    @Option(names = "--data-dir", paramLabel = "DIR",
            description = "Where the Raft log, snapshots and member identity live (default: ./tenure-data).")
    Path dataDir;

    @Option(names = "--client-port", paramLabel = "PORT",
            description = "gRPC port for clients; 0 picks a free one (default: 7070).")
    Integer clientPort;

    @Option(names = "--peer-port", paramLabel = "PORT",
            description = "Raft port for peer traffic; 0 picks a free one (default: 7071).")
    Integer peerPort;

    @Option(names = "--host", paramLabel = "ADDRESS", description = "Address both ports bind to (default: 127.0.0.1).")
    String host;

    @Option(names = "--member", paramLabel = "NAME", description = "This member's name (default: n1).")
    String member;

    @Override
    public Integer call() throws InterruptedException {
        ServerConfig config = config();
        TenureServer server;
        try {
            server = TenureServer.start(config);
        } catch (IOException | IllegalStateException e) {
            spec.commandLine().getErr().println("tenure server: cannot start: " + e.getMessage());
            return TenureCli.EXIT_ERROR;
        }
        Thread closeOnShutdown = new Thread(server::close, "tenure-server-shutdown");
        Runtime.getRuntime().addShutdownHook(closeOnShutdown);
        spec.commandLine().getOut().printf("tenure: member %s serving clients on %s:%d (Raft peers on port %d, data in %s)%n",
                config.memberName(), config.host(), server.clientPort(), config.peerPort(),
                config.dataDir().toAbsolutePath().normalize());
        spec.commandLine().getOut().flush();
        server.awaitTermination();
        try {
            Runtime.getRuntime().removeShutdownHook(closeOnShutdown);
        } catch (IllegalStateException shuttingDown) {
            // The hook is closing the server; nothing to undo.
        }
        if (server.failure() != null) {
            // A supervisor restarts a member that stopped on its own; it must not look like a clean stop.
            spec.commandLine().getErr().println("tenure server: stopped: " + server.failure());
            return TenureCli.EXIT_ERROR;
        }
        return TenureCli.EXIT_OK;
    }

    /** The defaults overridden by the options given; invalid values are usage errors naming the option. */
    ServerConfig config() {
        ServerConfig config = ServerConfig.defaults();
        if (dataDir != null) {
            config = config.withDataDir(dataDir);
        }
        if (clientPort != null) {
            config = config.withClientPort(clientPort);
        }
        if (peerPort != null) {
            config = config.withPeerPort(peerPort);
        }
        if (host != null) {
            config = config.withHost(host);
        }
        if (member != null) {
            config = config.withMemberName(member);
        }
        try {
            return config.validate();
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), describe(e.getMessage()));
        }
    }

    private static String describe(String problem) {
        return OPTION_OF_SETTING.entrySet().stream()
                .filter(setting -> problem.startsWith(setting.getKey()))
                .findFirst()
                .map(setting -> "Invalid value for option '" + setting.getValue() + "': " + problem)
                .orElse("Invalid options: " + problem);
    }
}
