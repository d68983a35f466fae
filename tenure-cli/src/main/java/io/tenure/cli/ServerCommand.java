package io.tenure.cli;

import io.tenure.server.RaftEngine;
import io.tenure.server.ServerConfig;
import io.tenure.server.ServerLimits;
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
            "Raft timing: a leader's failure is noticed after one to four election timeouts. In a cluster the "
                    + "shortest lease TTL granted is 10 election timeouts (5s by default), so that a kept-alive "
                    + "lease survives a failover within its client's safe window (TTL/3 plus 2.5s, at most 5/6 of the TTL)."
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:stopped on request (SIGTERM, Ctrl-C) within --shutdown-timeout",
            "1:could not start (for example an unusable data directory, one of another cluster or member, "
                    + "or a port in use), stopped on a fatal error, or a stop on request did not finish within "
                    + "--shutdown-timeout",
            "2:usage error (an invalid option, from a flag, the environment or the config file; nothing was "
                    + "started and the data directory was not touched)"
        },
        footerHeading = "%nWhere settings come from:%n",
        footer = {
            "Each option above can also be set by an environment variable named after it (TENURE_ and the option's "
                    + "name in capitals, '_' for '-': TENURE_DATA_DIR, TENURE_CLIENT_PORT, TENURE_HTTP_PORT, "
                    + "TENURE_PEERS, TENURE_ID, TENURE_MAX_CONNECTIONS, ...; TENURE_CONFIG names the config file), or "
                    + "by a line of the --config file: 'key = value', the key being the option's name without dashes "
                    + "(data-dir = /var/lib/tenure); '#' starts a comment line.",
            "",
            "Precedence, highest first: flag > environment variable > config file > default. An empty variable "
                    + "counts as unset. An invalid value from any source, or an unknown key in the file, stops "
                    + "start-up naming the option and where the value came from. TENURE_LOCK_KEY, TENURE_LEASE_ID "
                    + "and TENURE_FENCING_TOKEN (what 'tenure lock' gives its command) are never read as settings."
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
            "peer listen port", "--peer-listen-port",
            "http port", "--http-port",
            "peers", "--peers",
            "snapshot threshold", "--snapshot-every",
            "election timeout", "--election-timeout",
            "raft engine", "--raft-engine",
            "shutdown timeout", "--shutdown-timeout",
            "max connections", "--max-connections",
            "max leases per client", "--max-leases-per-client",
            "max locks per client", "--max-locks-per-client",
            "max waiters per lock", "--max-waiters-per-lock",
            "max requests per second", "--max-requests-per-second",
            "max http body", "--max-http-body",
            "shed after", "--shed-after",
            "max locks per lease", "--max-locks-per-lease",
            "max leases per user", "--max-leases-per-user",
            "max locks per user", "--max-locks-per-user",
            "max requests per user", "--max-requests-per-user",
            "idle time", "--idle-time",
            "text port", "--text-port",
            "default lease ttl", "--default-lease-ttl",
            "max locks", "--max-locks",
            "max keys", "--max-keys",
            "max list length", "--max-list-length",
            "max waiters", "--max-waiters",
            "max subscriptions", "--max-subscriptions",
            "read timeout", "--read-timeout",
            "write timeout", "--write-timeout",
            "lease sweep interval", "--lease-sweep-interval",
            "gc interval", "--gc-interval",
            "gc max idle", "--gc-max-idle",
            "auth token", "--auth-token",
            "tls cert and tls key", "--tls-cert");

    // The defaults, as flag values; ServerOptionsTest checks that they make ServerConfig.defaults().
    // Help shows them as written here, not through picocli's ${DEFAULT-VALUE}, which would show a
    // value the environment or the config file gave instead.
    private static final String CLIENT_PORT = "" + ServerConfig.DEFAULT_CLIENT_PORT;
    private static final String HTTP_PORT = "" + ServerConfig.DEFAULT_HTTP_PORT;
    private static final String SNAPSHOT_EVERY = "" + ServerConfig.DEFAULT_SNAPSHOT_EVERY;
    private static final String DATA_DIR = "tenure-data";
    private static final String ELECTION_TIMEOUT = "300ms";
    private static final String SHUTDOWN_TIMEOUT = "10s";
    private static final String MAX_CONNECTIONS = "10000";
    private static final String MAX_LEASES_PER_CLIENT = "10000";
    private static final String MAX_LOCKS_PER_CLIENT = "10000";
    private static final String MAX_WAITERS_PER_LOCK = "10000";
    private static final String MAX_REQUESTS_PER_SECOND = "50000";
    private static final String MAX_HTTP_BODY = "128KiB";
    private static final String SHED_AFTER = "200ms";
    private static final String MAX_LOCKS_PER_LEASE = "10000";
    private static final String IDLE_TIME = "60s";

    @Spec
    CommandSpec spec;

    @Option(names = "--config", paramLabel = "FILE",
            description = "A file of settings, one 'key = value' per line, keys being these options' names without "
                    + "dashes (data-dir = /var/lib/tenure); flags and environment variables override it "
                    + "(default: none, or TENURE_CONFIG).")
    Path configFile;

    @Option(names = {"--id", "--member"}, paramLabel = "NAME", defaultValue = ServerConfig.DEFAULT_MEMBER,
            description = "This member's name: letters, digits, '_', '.', '-'. With --peers, it must be one of "
                    + "the names listed. --member is an older name of this option (default: " + ServerConfig.DEFAULT_MEMBER + ").")
    String member;

    @Option(names = "--peers", paramLabel = "NAME=HOST:PORT,...",
            description = "The cluster's members and their Raft (peer) addresses, this member among them, "
                    + "e.g. n1=10.0.0.1:7071,n2=10.0.0.2:7071,n3=10.0.0.3:7071. Every member starts with the same "
                    + "list; this member's entry sets its peer port. Default: none, a single member.")
    String peers;

    @Option(names = "--cluster", paramLabel = "NAME", defaultValue = ServerConfig.DEFAULT_CLUSTER,
            description = "The cluster's name; a data directory of another cluster is refused (default: "
                    + ServerConfig.DEFAULT_CLUSTER + ").")
    String cluster;

    @Option(names = "--join",
            description = "Start as a new member of a running cluster, to be added with 'tenure member add'; "
                    + "it takes part once added (default: off).")
    boolean join;

    @Option(names = "--data-dir", paramLabel = "DIR", defaultValue = DATA_DIR,
            description = "Where the Raft log, snapshots and member identity live (default: ./" + DATA_DIR + ").")
    Path dataDir;

    @Option(names = "--host", paramLabel = "ADDRESS", defaultValue = ServerConfig.DEFAULT_HOST,
            description = "Address the client and HTTP ports bind to, and without --peers the peer port too "
                    + "(default: " + ServerConfig.DEFAULT_HOST + ").")
    String host;

    @Option(names = "--client-port", paramLabel = "PORT", defaultValue = CLIENT_PORT, converter = PortConverter.class,
            description = "gRPC port for clients; 0 picks a free one (default: " + CLIENT_PORT + ").")
    int clientPort;

    @Option(names = "--peer-port", paramLabel = "PORT", converter = PortConverter.class,
            description = "Raft port for peer traffic; 0 picks a free one. With --peers it comes from this "
                    + "member's entry, and a different --peer-port is an error (default: "
                    + ServerConfig.DEFAULT_PEER_PORT + ").")
    Integer peerPort;

    @Option(names = "--peer-listen-port", paramLabel = "PORT", defaultValue = "0", converter = PortConverter.class,
            description = "Port the peer server binds when the other members reach this one at another port "
                    + "(its entry in --peers), as through a proxy or NAT; 0: the peer port itself (default: 0).")
    int peerListenPort;

    @Option(names = "--http-port", paramLabel = "PORT", defaultValue = HTTP_PORT, converter = PortConverter.class,
            description = "HTTP port for the JSON API, /metrics, /healthz and /readyz; 0 picks a free one "
                    + "(default: " + HTTP_PORT + ").")
    int httpPort;

    @Option(names = "--snapshot-every", paramLabel = "N", defaultValue = SNAPSHOT_EVERY,
            description = "Take a snapshot and purge the log after this many log entries, at least 100 "
                    + "(default: " + SNAPSHOT_EVERY + ").")
    long snapshotEvery;

    /**
     * Stops gracefully as soon as the member serves, and exits 0: the run the {@code tenure}
     * launcher makes once per build to record the classes a start loads (a class-data sharing
     * archive, which halves the start-up of every later run).
     */
    @Option(names = "--stop-when-serving", hidden = true)
    boolean stopWhenServing;

    @Option(names = "--log-level", paramLabel = "LEVEL", defaultValue = "info",
            description = "How much the member logs about itself: error, warn, info (one line per lease grant or batch of grants, revoke, "
                    + "expiry, cancelled wait, membership change), debug (adds one line per acquire and release) "
                    + "or trace (default: info).")
    String logLevel;

    @Option(names = "--raft-engine", paramLabel = "ENGINE", defaultValue = "auto",
            description = "The Raft library that runs the member's group: jraft (SOFAJRaft: several times Ratis's rate "
                    + "on three members), ratis (Apache Ratis) or auto. Every member of a cluster must use the same one, and "
                    + "a data directory keeps the one it was made with. auto takes the data directory's; for a new one, "
                    + "jraft when --peers names several members or peer TLS is on, the running members' engine with "
                    + "--join, and ratis for a member alone (default: auto).")
    String raftEngine;

    @Option(names = "--peer-cert-file", paramLabel = "FILE",
            description = "Mutual TLS between members (jraft engine): this member's certificate, PEM, with any "
                    + "intermediates. Needs --peer-key-file and --peer-trusted-ca-file; every member of the cluster "
                    + "then speaks TLS 1.2 or later on its peer port and accepts only members whose certificate that CA "
                    + "signed (default: plain TCP).")
    Path peerCertFile;

    @Option(names = "--peer-key-file", paramLabel = "FILE",
            description = "The private key of --peer-cert-file, PEM (PKCS#8, or PKCS#1 RSA), not encrypted (default: none).")
    Path peerKeyFile;

    @Option(names = "--peer-trusted-ca-file", paramLabel = "FILE",
            description = "The CA certificate(s), PEM, that sign the members' peer certificates (default: none).")
    Path peerTrustedCaFile;

    @Option(names = "--election-timeout", paramLabel = "DURATION", defaultValue = ELECTION_TIMEOUT,
            converter = DurationConverter.class,
            description = "Raft election timeout, 100ms to 60s; a follower starts an election one to four "
                    + "of it after the leader falls silent. In a cluster the shortest lease TTL is 10 of it, and at least 5s "
                    + "(default: " + ELECTION_TIMEOUT + ").")
    Duration electionTimeout;

    @Option(names = "--shutdown-timeout", paramLabel = "DURATION", defaultValue = SHUTDOWN_TIMEOUT,
            converter = DurationConverter.class,
            description = "How long a graceful stop (SIGTERM, SIGINT) may take, 100ms to 10m: refuse new calls, answer "
                    + "those in flight, hand leadership to another member, close the log. Past it the member stops "
                    + "anyway and exits 1 (default: " + SHUTDOWN_TIMEOUT + ").")
    Duration shutdownTimeout;

    @Option(names = "--max-connections", paramLabel = "N", defaultValue = MAX_CONNECTIONS,
            description = "Client connections accepted at once, gRPC and HTTP each (default: " + MAX_CONNECTIONS + ").")
    int maxConnections;

    @Option(names = "--max-leases-per-client", paramLabel = "N", defaultValue = MAX_LEASES_PER_CLIENT,
            description = "Live leases with the same client id (default: " + MAX_LEASES_PER_CLIENT + ").")
    int maxLeasesPerClient;

    @Option(names = "--max-locks-per-client", paramLabel = "N", defaultValue = MAX_LOCKS_PER_CLIENT,
            description = "Locks held or waited for by the leases of one client id (default: " + MAX_LOCKS_PER_CLIENT + ").")
    int maxLocksPerClient;

    @Option(names = "--max-leases-per-user", paramLabel = "N", defaultValue = MAX_LEASES_PER_CLIENT,
            description = "While authentication is on: live leases one user owns (default: " + MAX_LEASES_PER_CLIENT + ").")
    int maxLeasesPerUser;

    @Option(names = "--max-locks-per-user", paramLabel = "N", defaultValue = MAX_LOCKS_PER_CLIENT,
            description = "While authentication is on: locks, semaphores, elections, barriers, latches and list pops held or "
                    + "waited for by the leases of one user (default: " + MAX_LOCKS_PER_CLIENT + ").")
    int maxLocksPerUser;

    @Option(names = "--max-requests-per-user", paramLabel = "N", defaultValue = "0",
            description = "While authentication is on: requests one user makes per second on this member, on every port, lease "
                    + "keep-alives and renews not counted; 0: no quota (default: 0).")
    int maxRequestsPerUser;

    @Option(names = "--max-locks-per-lease", paramLabel = "N", defaultValue = MAX_LOCKS_PER_LEASE,
            description = "Locks, semaphores, elections and barriers held or waited for by one lease (default: " + MAX_LOCKS_PER_LEASE + ").")
    int maxLocksPerLease;

    @Option(names = "--idle-time", paramLabel = "DURATION", defaultValue = IDLE_TIME, converter = DurationConverter.class,
            description = "How long a semaphore nobody holds or waits for keeps its limit (and its name its kind) before the "
                    + "leader forgets it, 0s to 24h; 0s: within a second (default: " + IDLE_TIME + ").")
    Duration idleTime;

    @Option(names = "--max-waiters-per-lock", paramLabel = "N", defaultValue = MAX_WAITERS_PER_LOCK,
            description = "Leases queued for one lock (default: " + MAX_WAITERS_PER_LOCK + ").")
    int maxWaitersPerLock;

    @Option(names = "--max-requests-per-second", paramLabel = "N", defaultValue = MAX_REQUESTS_PER_SECOND,
            description = "Requests this member admits per second over gRPC and HTTP, lease keep-alives and renews not counted; 0 turns the guard off "
                    + "(default: " + MAX_REQUESTS_PER_SECOND + ").")
    int maxRequestsPerSecond;

    @Option(names = "--shed-after", paramLabel = "DURATION", defaultValue = SHED_AFTER, converter = DurationConverter.class,
            description = "Once new work has waited this long for the log (or renewals a quarter of it), the member sheds new "
                    + "acquires, grants, reads and watches with RESOURCE_EXHAUSTED / HTTP 429 and a retry hint, and keeps "
                    + "serving keep-alives first; 10ms to 10m (default: " + SHED_AFTER + ").")
    Duration shedAfter;

    @Option(names = "--max-http-body", paramLabel = "SIZE", defaultValue = MAX_HTTP_BODY, converter = SizeConverter.class,
            description = "The largest HTTP request body, in bytes or with KiB/MiB, at least 1024 "
                    + "(default: " + MAX_HTTP_BODY + ").")
    int maxHttpBody;

    // ---- the text front end: dflockd's line protocol and its server flags --------------------------

    @Option(names = "--text-port", paramLabel = "PORT", defaultValue = "6388", converter = TextPortConverter.class,
            description = "Port of the text front end, dflockd's line protocol (dflockd's --port), on --host; 0 picks a free one, "
                    + "off turns it off (default: 6388).")
    int textPort;

    @Option(names = "--default-lease-ttl", paramLabel = "SECONDS", defaultValue = "33", converter = SecondsConverter.class,
            description = "Text protocol: the lease of a hold whose request names none, and what 'n' without a TTL asks for; "
                    + "a bare number is seconds, as in dflockd; in a cluster it is raised to the cluster's shortest TTL (default: 33).")
    Duration defaultLeaseTtl;

    @Option(names = "--max-locks", paramLabel = "N", defaultValue = "1024",
            description = "Text protocol: locks, semaphores and elections that may exist before a text request for a new one "
                    + "gets error_max_locks; 0: no limit (default: 1024).")
    int maxLocks;

    @Option(names = "--max-keys", paramLabel = "N", defaultValue = "0",
            description = "Text protocol: counters and keys that may exist before a text request creating one gets "
                    + "error_max_keys; 0: no limit (default: 0).")
    int maxKeys;

    @Option(names = "--max-list-length", paramLabel = "N", defaultValue = "0",
            description = "Text protocol: the longest list a text push may make, else error_list_full; 0: no limit (default: 0).")
    int maxListLength;

    @Option(names = "--max-waiters", paramLabel = "N", defaultValue = "0",
            description = "Text protocol: waiters one lock, semaphore or election may have before a text acquire gets "
                    + "error_max_waiters; 0: no limit (--max-waiters-per-lock still applies) (default: 0).")
    int maxWaiters;

    @Option(names = "--max-subscriptions", paramLabel = "N", defaultValue = "0",
            description = "Text protocol: listen, watch and observe registrations one connection may hold; 0: no limit (default: 0).")
    int maxSubscriptions;

    @Option(names = "--read-timeout", paramLabel = "SECONDS", defaultValue = "23", converter = SecondsConverter.class,
            description = "Text protocol: a connection silent this long while the member waits for its next line is closed "
                    + "(default: 23).")
    Duration readTimeout;

    @Option(names = "--write-timeout", paramLabel = "SECONDS", defaultValue = "5", converter = SecondsConverter.class,
            description = "Text protocol: a reply or push that has not left within this is the end of the connection (default: 5).")
    Duration writeTimeout;

    @Option(names = "--auto-release-on-disconnect", paramLabel = "BOOLEAN", defaultValue = "true", arity = "0..1",
            fallbackValue = "true",
            description = "Text protocol: release a connection's holds when it closes (true), or leave them until their lease "
                    + "TTL ends (false); its waits, places and subscriptions end either way (default: true).")
    boolean autoReleaseOnDisconnect;

    @Option(names = "--auth-token", paramLabel = "TOKEN",
            description = "Text protocol: the token every connection's first request ('auth') must give; compared in constant "
                    + "time (default: none, no authentication).")
    String authToken;

    @Option(names = "--auth-token-file", paramLabel = "FILE",
            description = "Text protocol: a file whose first line is the --auth-token (default: none).")
    Path authTokenFile;

    @Option(names = {"--cert-file", "--tls-cert"}, paramLabel = "FILE",
            description = "TLS 1.2 or later on the client, HTTP and text ports with this PEM certificate (and any "
                    + "intermediates after it); needs --key-file. Re-read when the file changes: a rotation needs no restart. "
                    + "--tls-cert is dflockd's name for it (default: plain TCP, on loopback only).")
    Path certFile;

    @Option(names = {"--key-file", "--tls-key"}, paramLabel = "FILE",
            description = "The private key of --cert-file, PEM (PKCS#8, or PKCS#1 RSA), not encrypted; --tls-key is "
                    + "dflockd's name for it (default: none).")
    Path keyFile;

    @Option(names = "--trusted-ca-file", paramLabel = "FILE",
            description = "The CA certificate(s), PEM, that sign clients' certificates; with --client-cert-auth every client "
                    + "of the client, HTTP and text ports must present one (default: none).")
    Path trustedCaFile;

    @Option(names = "--client-cert-auth", paramLabel = "BOOLEAN", arity = "0..1", defaultValue = "false", fallbackValue = "true",
            description = "Mutual TLS: refuse every client that does not present a certificate signed by a CA of "
                    + "--trusted-ca-file (default: false).")
    boolean clientCertAuth;

    @Option(names = "--insecure", paramLabel = "BOOLEAN", arity = "0..1", defaultValue = "false", fallbackValue = "true",
            description = "Let the member listen beyond loopback without TLS and client certificates (and its cluster's "
                    + "members talk without peer TLS): anyone who reaches its ports can then take and release every lock. "
                    + "Without it such a member refuses to start; with it, it warns at every start (default: false).")
    boolean insecure;

    @Option(names = "--audit-file", paramLabel = "FILE",
            description = "Write an audit trail here, as JSON lines: every grant, release and revocation, every change of "
                    + "users, roles and the authentication switch, and every refused request, with the user, the remote "
                    + "address, the resource and the outcome; never a password or a token (default: none).")
    Path auditFile;

    @Option(names = "--audit-max-size", paramLabel = "SIZE", defaultValue = "64MiB", converter = SizeConverter.class,
            description = "Start a new audit file when the current one reaches this size; the old one becomes FILE.1 "
                    + "(default: 64MiB).")
    int auditMaxSize;

    @Option(names = "--audit-files", paramLabel = "N", defaultValue = "5",
            description = "How many older audit files to keep, FILE.1 (the newest) to FILE.N (default: 5).")
    int auditFiles;

    @Option(names = "--lease-sweep-interval", paramLabel = "SECONDS", defaultValue = "1", converter = SecondsConverter.class,
            description = "dflockd's lease sweep period, accepted for its scripts: Tenure's leader ends leases through the log "
                    + "as each one's TTL runs out, without a sweep (default: 1).")
    Duration leaseSweepInterval;

    @Option(names = "--gc-interval", paramLabel = "SECONDS", defaultValue = "5", converter = SecondsConverter.class,
            description = "dflockd's idle-resource sweep period, accepted for its scripts: Tenure forgets an idle name "
                    + "--idle-time after its last use (default: 5).")
    Duration gcInterval;

    @Option(names = "--gc-max-idle", paramLabel = "SECONDS", defaultValue = "60", converter = SecondsConverter.class,
            description = "dflockd's idle age before a resource is forgotten, accepted for its scripts; Tenure's is --idle-time "
                    + "(default: 60).")
    Duration gcMaxIdle;

    /** Hidden: a test aid of the safety suite (io.tenure.server.raft.AuditLog), not an operator's setting. */
    @Option(names = "--audit-log", paramLabel = "FILE", hidden = true,
            description = "Append every applied command, its result and a periodic state digest to FILE as JSON lines, "
                    + "for the safety suite's checker; buffered, not durable (default: off).")
    Path auditLog;

    /**
     * Netty's buffer leak detector samples one buffer in 128 and records a stack trace at each of its
     * touches: 1.4 % of a member's CPU under W9 (docs/benchmarks.md), for a diagnosis nobody reads in
     * production. Off in the member's process, for each Netty it carries (gRPC's, Ratis's, bolt's),
     * unless the operator set a level (-Dio.netty.leakDetection.level=paranoid and the like).
     */
    private static void noLeakSampling() {
        for (String prefix : new String[] {"", "io.grpc.netty.shaded.", "org.apache.ratis.thirdparty."}) {
            String level = prefix + "io.netty.leakDetection.level";
            if (System.getProperty(level) == null) {
                System.setProperty(level, "disabled");
            }
        }
    }

    /** Applies --log-level to Tenure's own loggers; refuses an unknown level before anything starts. */
    private void setLogLevel() {
        String level = logLevel.trim().toUpperCase(java.util.Locale.ROOT);
        if (!java.util.Set.of("ERROR", "WARN", "INFO", "DEBUG", "TRACE").contains(level)) {
            throw new ParameterException(spec.commandLine(), "--log-level must be error, warn, info, debug or trace, got '"
                    + logLevel + "'");
        }
        if (org.slf4j.LoggerFactory.getLogger("io.tenure") instanceof ch.qos.logback.classic.Logger tenure) {
            tenure.setLevel(ch.qos.logback.classic.Level.toLevel(level));
        }
    }

    @Override
    public Integer call() throws InterruptedException {
        noLeakSampling();
        LogSetup.awaitReady();
        ServerConfig config = config();
        setLogLevel();
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
        if (stopWhenServing) {
            boolean clean = server.shutdownGracefully() && server.failure() == null;
            flushLogs();
            return clean ? TenureCli.EXIT_OK : TenureCli.EXIT_ERROR;
        }
        Thread stopOnSignal = new Thread(() -> stopGracefully(server), "tenure-server-shutdown");
        Runtime.getRuntime().addShutdownHook(stopOnSignal);
        spec.commandLine().getOut().println(servingLine(config.withRaftEngine(server.raftEngine()), server.clientPort()));
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
     * The defaults overridden by the options given (as flags, environment variables or config-file
     * lines, see {@link SettingSources}). Checked completely before anything starts (so before the
     * data directory is touched); an invalid value is a usage error naming the option that sets
     * it, and where its value came from when that was not a flag.
     */
    ServerConfig config() {
        if (spec.defaultValueProvider() instanceof SettingSources sources) {
            // Refuses a bad config file even when flags give every setting it would.
            sources.configFile(spec);
        }
        ServerConfig config = ServerConfig.defaults()
                .withMemberName(member)
                .withClusterName(cluster)
                .withJoin(join)
                .withDataDir(dataDir)
                .withHost(host)
                .withClientPort(clientPort)
                .withHttpPort(httpPort)
                .withSnapshotEvery(snapshotEvery)
                .withElectionTimeout(electionTimeout)
                .withShutdownTimeout(shutdownTimeout)
                .withLimits(ServerLimits.defaults()
                        .withMaxConnections(maxConnections)
                        .withMaxLeasesPerClient(maxLeasesPerClient)
                        .withMaxLocksPerClient(maxLocksPerClient)
                        .withMaxWaitersPerLock(maxWaitersPerLock)
                        .withMaxRequestsPerSecond(maxRequestsPerSecond)
                        .withMaxHttpBodyBytes(maxHttpBody)
                        .withShedAfter(shedAfter)
                        .withMaxLocksPerLease(maxLocksPerLease)
                        .withIdleTime(idleTime)
                        .withMaxLeasesPerUser(maxLeasesPerUser)
                        .withMaxLocksPerUser(maxLocksPerUser)
                        .withMaxRequestsPerUser(maxRequestsPerUser))
                .withAuditLog(auditLog)
                .withText(textSettings());
        try {
            config = config.withRaftEngine(RaftEngine.parse(raftEngine));
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), from("--raft-engine") + "Invalid value for option '--raft-engine': " + e.getMessage());
        }
        if (peerCertFile != null || peerKeyFile != null || peerTrustedCaFile != null) {
            java.util.List<String> missing = new java.util.ArrayList<>();
            if (peerCertFile == null) {
                missing.add("--peer-cert-file");
            }
            if (peerKeyFile == null) {
                missing.add("--peer-key-file");
            }
            if (peerTrustedCaFile == null) {
                missing.add("--peer-trusted-ca-file");
            }
            if (!missing.isEmpty()) {
                throw new ParameterException(spec.commandLine(), "Peer TLS needs --peer-cert-file, --peer-key-file and "
                        + "--peer-trusted-ca-file together; missing: " + String.join(", ", missing));
            }
            config = config.withPeerTls(new io.tenure.server.PeerTls(peerCertFile, peerKeyFile, peerTrustedCaFile));
        }
        if (peers != null) {
            try {
                // After the member name: this member's entry sets the peer port.
                config = config.withPeers(ServerConfig.parsePeers(peers));
            } catch (IllegalArgumentException e) {
                throw new ParameterException(spec.commandLine(), from("--peers") + "Invalid value for option '--peers': " + e.getMessage());
            }
        }
        if (peerPort != null) {
            // Last, so that one differing from this member's entry in --peers is caught below.
            config = config.withPeerPort(peerPort);
        }
        config = config.withPeerListenPort(peerListenPort);
        if (certFile != null || keyFile != null) {
            if (certFile == null || keyFile == null) {
                throw new ParameterException(spec.commandLine(), "TLS needs --cert-file and --key-file (dflockd's --tls-cert "
                        + "and --tls-key) together; missing: " + (certFile == null ? "--cert-file" : "--key-file"));
            }
            config = config.withTls(new io.tenure.server.security.ClientTls(certFile, keyFile, trustedCaFile, clientCertAuth));
        } else if (trustedCaFile != null || clientCertAuth) {
            throw new ParameterException(spec.commandLine(), (clientCertAuth ? "--client-cert-auth" : "--trusted-ca-file")
                    + " needs TLS: give --cert-file and --key-file too");
        }
        config = config.withInsecure(insecure);
        io.tenure.server.security.AuditTrail.Settings audit = new io.tenure.server.security.AuditTrail.Settings(auditFile, auditMaxSize,
                auditFiles);
        if (audit.problem() != null) {
            throw new ParameterException(spec.commandLine(), audit.problem());
        }
        config = config.withAuditTrail(audit);
        try {
            return config.validate();
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), describe(e.getMessage(), peers != null, this::from));
        }
    }

    /** The text front end's settings from dflockd's flags. */
    private io.tenure.server.text.TextSettings textSettings() {
        String token = authToken;
        if (authTokenFile != null) {
            try {
                java.util.List<String> lines = java.nio.file.Files.readAllLines(authTokenFile);
                token = lines.isEmpty() ? "" : lines.get(0).strip();
            } catch (IOException e) {
                throw new ParameterException(spec.commandLine(), from("--auth-token-file") + "cannot read --auth-token-file "
                        + authTokenFile + ": " + e.getMessage());
            }
            if (token.isEmpty()) {
                throw new ParameterException(spec.commandLine(), "--auth-token-file " + authTokenFile + " has no token on its first line");
            }
        }
        return io.tenure.server.text.TextSettings.defaults()
                .withPort(textPort)
                .withDefaultLeaseTtl(defaultLeaseTtl)
                .withMaxLocks(maxLocks)
                .withMaxKeys(maxKeys)
                .withMaxListLength(maxListLength)
                .withMaxWaiters(maxWaiters)
                .withMaxSubscriptions(maxSubscriptions)
                .withReadTimeout(readTimeout)
                .withWriteTimeout(writeTimeout)
                .withAutoReleaseOnDisconnect(autoReleaseOnDisconnect)
                .withAuthToken(token)
                .withLeaseSweepInterval(leaseSweepInterval)
                .withGcInterval(gcInterval)
                .withGcMaxIdle(gcMaxIdle);
    }

    /** {@code "TENURE_CLIENT_PORT=abc: "} when the environment or the config file gave {@code option}, else "". */
    private String from(String option) {
        if (spec.defaultValueProvider() instanceof SettingSources sources) {
            String source = sources.sourceOf(spec.findOption(option));
            return source == null ? "" : source + ": ";
        }
        return "";
    }

    /** The line that says the member is up ("serving clients on" is what scripts and tests wait for). */
    static String servingLine(ServerConfig config, int clientPort) {
        String data = "data in " + config.dataDir().toAbsolutePath().normalize();
        if (config.raftEngine() != RaftEngine.AUTO) {
            data = config.raftEngine().flag() + ", " + data;
        }
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
        return describe(problem, withPeers, option -> "");
    }

    /** The message for a refused setting, naming its option, preceded by {@code sourceOf(option)}. */
    static String describe(String problem, boolean withPeers, java.util.function.Function<String, String> sourceOf) {
        for (Map.Entry<String, String> setting : OPTION_OF_SETTING.entrySet()) {
            if (problem.startsWith(setting.getKey())) {
                String option = setting.getValue();
                String hint = withPeers && option.equals("--peer-port")
                        ? " (with --peers, leave --peer-port out: this member's entry sets it)"
                        : "";
                return sourceOf.apply(option) + "Invalid value for option '" + option + "': " + problem + hint;
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
