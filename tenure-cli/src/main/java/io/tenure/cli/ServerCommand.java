package io.tenure.cli;

import io.tenure.server.ServerConfig;
import io.tenure.server.TenureServer;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code tenure server}: runs one member until it is stopped. */
@Command(name = "server", mixinStandardHelpOptions = true, sortOptions = false,
        description = {
            "Runs a Tenure member until interrupted: a single durable node by default, or a member of a "
                    + "3- or 5-member cluster with --peers.",
            "A cluster starts from the same --peers on every member, each with its own --id, --client-port "
                    + "and --data-dir. To grow a running cluster, start the new member with --join and a --peers "
                    + "list that includes it, then run 'tenure member add NAME HOST:PORT'.",
            "Raft timing: a leader's failure is noticed after one to two election timeouts. In a cluster the "
                    + "shortest lease TTL granted is 10 election timeouts (10s by default), so that a kept-alive "
                    + "lease survives a failover within its client's TTL/2 safety window."
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:stopped on request (SIGTERM, Ctrl-C) within --shutdown-timeout",
            "1:could not start (for example an unusable data directory, one of another cluster or member, "
                    + "or a port in use), stopped on a fatal error, or a stop on request did not finish within "
                    + "--shutdown-timeout",
            "2:usage error (an invalid option; nothing was started and the data directory was not touched)"
        })
final class ServerCommand implements Callable<Integer> {
    /**
     * Which option sets each setting that {@link ServerConfig#validate()} may name first in its
     * message ("member name ... is not among the peers" is about --id too).
     */
    private static final Map<String, String> OPTION_OF_SETTING = orderedMap(
            "member name", "--id",
            "cluster name", "--cluster",
            "client port", "--client-port",
            "peer port", "--peer-port",
            "peers", "--peers",
            "snapshot threshold", "--snapshot-every",
            "election timeout", "--election-timeout",
            "shutdown timeout", "--shutdown-timeout");

    @Spec
    CommandSpec spec;

    @Option(names = {"--id", "--member"}, paramLabel = "NAME", defaultValue = ServerConfig.DEFAULT_MEMBER,
            description = "This member's name: letters, digits, '_', '.', '-'. With --peers, it must be one of "
                    + "the names listed. --member is an older name of this option (default: ${DEFAULT-VALUE}).")
    String member;

    @Option(names = "--peers", paramLabel = "NAME=HOST:PORT,...",
            description = "The cluster's members and their Raft (peer) addresses, this member among them, "
                    + "e.g. n1=10.0.0.1:7071,n2=10.0.0.2:7071,n3=10.0.0.3:7071. Every member starts with the same "
                    + "list; this member's entry sets its peer port. Default: none, a single member.")
    String peers;

    @Option(names = "--cluster", paramLabel = "NAME", defaultValue = ServerConfig.DEFAULT_CLUSTER,
            description = "The cluster's name; a data directory of another cluster is refused (default: ${DEFAULT-VALUE}).")
    String cluster;

    @Option(names = "--join",
            description = "Start as a new member of a running cluster, to be added with 'tenure member add'; "
                    + "it takes part once added (default: off).")
    boolean join;

    @Option(names = "--data-dir", paramLabel = "DIR", defaultValue = "tenure-data",
            description = "Where the Raft log, snapshots and member identity live (default: ./${DEFAULT-VALUE}).")
    Path dataDir;

    @Option(names = "--host", paramLabel = "ADDRESS", defaultValue = ServerConfig.DEFAULT_HOST,
            description = "Address the client port binds to, and without --peers the peer port too "
                    + "(default: ${DEFAULT-VALUE}).")
    String host;

    @Option(names = "--client-port", paramLabel = "PORT", defaultValue = "" + ServerConfig.DEFAULT_CLIENT_PORT,
            description = "gRPC port for clients; 0 picks a free one (default: ${DEFAULT-VALUE}).")
    int clientPort;

    @Option(names = "--peer-port", paramLabel = "PORT",
            description = "Raft port for peer traffic; 0 picks a free one. With --peers it comes from this "
                    + "member's entry, and a different --peer-port is an error (default: "
                    + ServerConfig.DEFAULT_PEER_PORT + ").")
    Integer peerPort;

    @Option(names = "--snapshot-every", paramLabel = "N", defaultValue = "" + ServerConfig.DEFAULT_SNAPSHOT_EVERY,
            description = "Take a snapshot and purge the log after this many log entries, at least 100 "
                    + "(default: ${DEFAULT-VALUE}).")
    long snapshotEvery;

    @Option(names = "--election-timeout", paramLabel = "DURATION", defaultValue = "1s",
            converter = DurationConverter.class,
            description = "Raft election timeout, 100ms to 60s; an election starts after between one and two "
                    + "of it without a leader. Keep lease TTLs well above it (default: ${DEFAULT-VALUE}).")
    Duration electionTimeout;

    @Option(names = "--shutdown-timeout", paramLabel = "DURATION", defaultValue = "10s",
            converter = DurationConverter.class,
            description = "How long a graceful stop (SIGTERM, SIGINT) may take, 100ms to 10m: refuse new calls, answer "
                    + "those in flight, hand leadership to another member, close the log. Past it the member stops "
                    + "anyway and exits 1 (default: ${DEFAULT-VALUE}).")
    Duration shutdownTimeout;

    @Override
    public Integer call() throws InterruptedException {
        ServerConfig config = config();
        TenureServer server;
        try {
            server = TenureServer.start(config);
        } catch (IllegalArgumentException e) {
            // A rule of the server's own that config() did not know; it refuses before touching anything.
            throw new ParameterException(spec.commandLine(), describe(e.getMessage(), peers != null));
        } catch (IOException | IllegalStateException e) {
            spec.commandLine().getErr().println("tenure server: cannot start: " + e.getMessage());
            return TenureCli.EXIT_ERROR;
        }
        Thread stopOnSignal = new Thread(() -> stopGracefully(server), "tenure-server-shutdown");
        Runtime.getRuntime().addShutdownHook(stopOnSignal);
        spec.commandLine().getOut().println(servingLine(config, server.clientPort()));
        spec.commandLine().getOut().flush();
        server.awaitTermination();
        try {
            Runtime.getRuntime().removeShutdownHook(stopOnSignal);
        } catch (IllegalStateException shuttingDown) {
            // A signal arrived: the hook stops the server and ends the process with its own exit
            // code (System.exit blocks while the hooks run, so what this returns is never used).
            return TenureCli.EXIT_OK;
        }
        // Here only when the member stopped on its own (the hook otherwise ends the process).
        spec.commandLine().getErr().println("tenure server: stopped: " + server.failure());
        spec.commandLine().getErr().flush();
        flushLogs();
        // A supervisor restarts a member that stopped on its own; it must not look like a clean stop.
        return TenureCli.EXIT_ERROR;
    }

    /**
     * SIGTERM or SIGINT (the JVM runs its shutdown hooks): the graceful stop of
     * {@link TenureServer#shutdownGracefully()}, then the process ends with 0 when it finished in
     * time and cleanly, 1 when it ran out of time or the member had failed. The exit code is set
     * with {@code halt}: a JVM ended by a signal would otherwise exit with 128 + the signal number.
     */
    private static void stopGracefully(TenureServer server) {
        boolean clean = server.shutdownGracefully() && server.failure() == null;
        flushLogs();
        System.out.flush();
        System.err.flush();
        Runtime.getRuntime().halt(clean ? TenureCli.EXIT_OK : TenureCli.EXIT_ERROR);
    }

    /** Lets Logback's asynchronous appender write what it holds: the shutdown's own lines come last. */
    private static void flushLogs() {
        if (org.slf4j.LoggerFactory.getILoggerFactory() instanceof ch.qos.logback.classic.LoggerContext logback) {
            logback.stop();
        }
    }

    /**
     * The defaults overridden by the options given. Checked completely before anything starts
     * (so before the data directory is touched); an invalid value is a usage error naming the
     * option that sets it.
     */
    ServerConfig config() {
        ServerConfig config = ServerConfig.defaults()
                .withMemberName(member)
                .withClusterName(cluster)
                .withJoin(join)
                .withDataDir(dataDir)
                .withHost(host)
                .withClientPort(clientPort)
                .withSnapshotEvery(snapshotEvery)
                .withElectionTimeout(electionTimeout)
                .withShutdownTimeout(shutdownTimeout);
        if (peers != null) {
            try {
                // After the member name: this member's entry sets the peer port.
                config = config.withPeers(ServerConfig.parsePeers(peers));
            } catch (IllegalArgumentException e) {
                throw new ParameterException(spec.commandLine(), "Invalid value for option '--peers': " + e.getMessage());
            }
        }
        if (peerPort != null) {
            // Last, so that one differing from this member's entry in --peers is caught below.
            config = config.withPeerPort(peerPort);
        }
        try {
            return config.validate();
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), describe(e.getMessage(), peers != null));
        }
    }

    /** The line that says the member is up ("serving clients on" is what scripts and tests wait for). */
    static String servingLine(ServerConfig config, int clientPort) {
        String data = "data in " + config.dataDir().toAbsolutePath().normalize();
        if (!config.clustered()) {
            return String.format("tenure: member %s serving clients on %s:%d (Raft peers on port %d, %s)",
                    config.memberName(), config.host(), clientPort, config.peerPort(), data);
        }
        String joining = config.join()
                ? "; joining: add it with 'tenure member add " + config.memberName() + " " + config.peerAddress() + "'"
                : "";
        String members = config.peers().isEmpty() ? "" : ", members " + String.join(",", config.peers().keySet());
        return String.format("tenure: member %s of cluster %s serving clients on %s:%d (Raft at %s%s%s; %s)",
                config.memberName(), config.clusterName(), config.host(), clientPort, config.peerAddress(),
                members, joining, data);
    }

    static String describe(String problem, boolean withPeers) {
        for (Map.Entry<String, String> setting : OPTION_OF_SETTING.entrySet()) {
            if (problem.startsWith(setting.getKey())) {
                String option = setting.getValue();
                String hint = withPeers && option.equals("--peer-port")
                        ? " (with --peers, leave --peer-port out: this member's entry sets it)"
                        : "";
                return "Invalid value for option '" + option + "': " + problem + hint;
            }
        }
        return "Invalid options: " + problem;
    }

    private static Map<String, String> orderedMap(String... keysAndValues) {
        Map<String, String> map = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            map.put(keysAndValues[i], keysAndValues[i + 1]);
        }
        return Collections.unmodifiableMap(map);
    }
}
