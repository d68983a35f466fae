package io.tenure.server;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * The settings of one Tenure member. Every setting has a default that is safe for a single
 * durable node; {@link #validate()} names the first invalid one.
 *
 * @param memberName      this member's name, also the Raft peer id (default {@code n1})
 * @param dataDir         where the Raft log, snapshots and the member identity live ({@code ./tenure-data})
 * @param host            the address the client port binds to ({@code 127.0.0.1}); with no peers, the peer port too
 * @param clientPort      gRPC port for clients (7070; 0 picks a free port)
 * @param peerPort        Raft port for peer traffic (7071; 0 picks a free port); with peers, the port of
 *                        this member's own entry in {@code peers}
 * @param snapshotEvery   take a snapshot and purge the log after this many log entries (50,000)
 * @param electionTimeout the Raft election timeout lower bound (300 ms by default); the upper bound is twice it
 * @param clusterName     the cluster's name; a data directory of another cluster is refused ({@code tenure})
 * @param peers           the initial members, name to Raft address host:port, this member among them;
 *                        empty for a single member
 * @param join            start as a new member of a running cluster, to be added with {@code tenure member add}
 * @param httpPort        HTTP port for the JSON API, {@code /metrics}, {@code /healthz} and {@code /readyz}
 *                        (7080; 0 picks a free port)
 * @param shutdownTimeout how long a graceful shutdown (SIGTERM) may take before the member stops anyway (10 s)
 * @param limits          the per-member guards against overload (see {@link ServerLimits})
 * @param auditLog        a test aid, off ({@code null}) unless asked for: the file to which every applied command,
 *                        its result and a periodic state digest are appended as JSON lines, for the safety
 *                        suite's checker (see {@link io.tenure.server.raft.AuditLog}); never a durable record
 * @param peerListenPort  the port the peer server binds when the other members reach this one at a
 *                        different port (its entry in {@code peers}), as through a proxy or NAT; 0: the
 *                        peer port itself (the default)
 * @param raftEngine      the Raft library that runs the member's group ({@link RaftEngine#AUTO} by default:
 *                        see {@link TenureServer#engineFor})
 * @param peerTls         mutual TLS on the peer port and on this member's connections to the others;
 *                        {@code null} (the default): plain TCP
 * @param text            the text front end (dflockd's line protocol): its port (6388; 0 picks a free port;
 *                        {@link io.tenure.server.text.TextSettings#OFF} turns it off) and dflockd's server settings
 * @param tls             TLS on the client, HTTP and text ports, mutual where it asks for client certificates;
 *                        {@code null} (the default): plain TCP, which {@link #validate()} allows only on loopback
 * @param insecure        let a member listen beyond loopback without TLS and client authentication (or a
 *                        cluster's members talk without peer TLS): anyone who reaches its ports can then take and
 *                        release every lock; off by default, and a warning at every start when on
 */
public record ServerConfig(
        String memberName,
        Path dataDir,
        String host,
        int clientPort,
        int peerPort,
        long snapshotEvery,
        Duration electionTimeout,
        String clusterName,
        Map<String, String> peers,
        boolean join,
        int httpPort,
        Duration shutdownTimeout,
        ServerLimits limits,
        Path auditLog,
        int peerListenPort,
        RaftEngine raftEngine,
        PeerTls peerTls,
        io.tenure.server.text.TextSettings text,
        io.tenure.server.security.ClientTls tls,
        boolean insecure,
        io.tenure.server.security.AuditTrail.Settings auditTrail) {

    public static final String DEFAULT_MEMBER = "n1";
    public static final Path DEFAULT_DATA_DIR = Path.of("tenure-data");
    public static final String DEFAULT_HOST = "127.0.0.1";
    public static final int DEFAULT_CLIENT_PORT = 7070;
    public static final int DEFAULT_PEER_PORT = 7071;
    public static final String DEFAULT_CLUSTER = "tenure";
    public static final int DEFAULT_HTTP_PORT = 7080;
    public static final Duration DEFAULT_SHUTDOWN_TIMEOUT = Duration.ofSeconds(10);
    /** Large enough that snapshots are rare under load, small enough that a restart replays seconds, not minutes. */
    public static final long DEFAULT_SNAPSHOT_EVERY = 50_000;
    /**
     * Ratis's 150 ms default causes spurious elections on a busy 2-core machine (RATIS.md); 300 ms
     * does not here, since the leader's heartbeat (every half timeout) and pre-vote (a follower
     * that still hears the leader refuses a candidate) keep a stalled follower from deposing it.
     * Ratis's follower checks for a silent leader only at the end of each randomized sleep (one
     * to two timeouts), so it notices one between one and four timeouts after the leader's last
     * message, about 2.25 timeouts on average: a crash failover (kill -9 to the next acquire) took
     * a median of 1.4 s with 500 ms and about 0.9 s with 300 ms (docs/benchmarks.md, W5).
     */
    public static final Duration DEFAULT_ELECTION_TIMEOUT = Duration.ofMillis(300);
    /**
     * The shortest lease a cluster grants, in election timeouts; never under
     * {@link #MIN_CLUSTER_TTL}. The SDK renews every TTL/3 and declares a lease lost its safe
     * window after the send of its last acknowledged renewal (TTL/3 plus 2.5 s, at most 5/6 of the
     * TTL: 4.2 s at 5 s), so a leader that dies just before a renewal leaves 2.5 s for the
     * failover: noticing the dead leader (one to four timeouts, see above), electing another, and
     * the renewal forwarded to it. Measured here (kill -9 of the leader to every lease renewed): up
     * to about 2 s over 20 kills with 500 ms (docs/benchmarks.md, "Shorter TTLs"). Was 30 (15 s)
     * while the SDK's window was TTL/2.
     */
    public static final int MIN_TTL_ELECTION_TIMEOUTS = 10;
    /**
     * The floor of a cluster's shortest lease: the failover's 2.5 s in the SDK's safe window is a
     * fixed time, so a TTL shorter than 5 s leaves less of it than the failovers measured here
     * need, however short the election timeout.
     */
    public static final Duration MIN_CLUSTER_TTL = Duration.ofSeconds(5);

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,62}");

    public ServerConfig {
        Objects.requireNonNull(memberName, "memberName");
        Objects.requireNonNull(dataDir, "dataDir");
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(electionTimeout, "electionTimeout");
        Objects.requireNonNull(clusterName, "clusterName");
        Objects.requireNonNull(shutdownTimeout, "shutdownTimeout");
        Objects.requireNonNull(limits, "limits");
        Objects.requireNonNull(raftEngine, "raftEngine");
        Objects.requireNonNull(text, "text");
        peers = Collections.unmodifiableMap(new LinkedHashMap<>(peers));
        auditTrail = auditTrail == null ? io.tenure.server.security.AuditTrail.Settings.OFF : auditTrail;
    }

    public static ServerConfig defaults() {
        return new ServerConfig(DEFAULT_MEMBER, DEFAULT_DATA_DIR, DEFAULT_HOST, DEFAULT_CLIENT_PORT,
                DEFAULT_PEER_PORT, DEFAULT_SNAPSHOT_EVERY, DEFAULT_ELECTION_TIMEOUT, DEFAULT_CLUSTER, Map.of(), false,
                DEFAULT_HTTP_PORT, DEFAULT_SHUTDOWN_TIMEOUT, ServerLimits.defaults(), null, 0, RaftEngine.AUTO, null,
                io.tenure.server.text.TextSettings.defaults(), null, false, io.tenure.server.security.AuditTrail.Settings.OFF);
    }

    public ServerConfig withMemberName(String v) { return new ServerConfig(v, dataDir, host, clientPort, peerPort, snapshotEvery, electionTimeout, clusterName, peers, join, httpPort, shutdownTimeout, limits, auditLog, peerListenPort, raftEngine, peerTls, text, tls, insecure, auditTrail); }
    public ServerConfig withDataDir(Path v) { return new ServerConfig(memberName, v, host, clientPort, peerPort, snapshotEvery, electionTimeout, clusterName, peers, join, httpPort, shutdownTimeout, limits, auditLog, peerListenPort, raftEngine, peerTls, text, tls, insecure, auditTrail); }
    public ServerConfig withHost(String v) { return new ServerConfig(memberName, dataDir, v, clientPort, peerPort, snapshotEvery, electionTimeout, clusterName, peers, join, httpPort, shutdownTimeout, limits, auditLog, peerListenPort, raftEngine, peerTls, text, tls, insecure, auditTrail); }
    public ServerConfig withClientPort(int v) { return new ServerConfig(memberName, dataDir, host, v, peerPort, snapshotEvery, electionTimeout, clusterName, peers, join, httpPort, shutdownTimeout, limits, auditLog, peerListenPort, raftEngine, peerTls, text, tls, insecure, auditTrail); }
    public ServerConfig withPeerPort(int v) { return new ServerConfig(memberName, dataDir, host, clientPort, v, snapshotEvery, electionTimeout, clusterName, peers, join, httpPort, shutdownTimeout, limits, auditLog, peerListenPort, raftEngine, peerTls, text, tls, insecure, auditTrail); }
    public ServerConfig withSnapshotEvery(long v) { return new ServerConfig(memberName, dataDir, host, clientPort, peerPort, v, electionTimeout, clusterName, peers, join, httpPort, shutdownTimeout, limits, auditLog, peerListenPort, raftEngine, peerTls, text, tls, insecure, auditTrail); }
    public ServerConfig withElectionTimeout(Duration v) { return new ServerConfig(memberName, dataDir, host, clientPort, peerPort, snapshotEvery, v, clusterName, peers, join, httpPort, shutdownTimeout, limits, auditLog, peerListenPort, raftEngine, peerTls, text, tls, insecure, auditTrail); }
    public ServerConfig withClusterName(String v) { return new ServerConfig(memberName, dataDir, host, clientPort, peerPort, snapshotEvery, electionTimeout, v, peers, join, httpPort, shutdownTimeout, limits, auditLog, peerListenPort, raftEngine, peerTls, text, tls, insecure, auditTrail); }
    public ServerConfig withJoin(boolean v) { return new ServerConfig(memberName, dataDir, host, clientPort, peerPort, snapshotEvery, electionTimeout, clusterName, peers, v, httpPort, shutdownTimeout, limits, auditLog, peerListenPort, raftEngine, peerTls, text, tls, insecure, auditTrail); }
    public ServerConfig withHttpPort(int v) { return new ServerConfig(memberName, dataDir, host, clientPort, peerPort, snapshotEvery, electionTimeout, clusterName, peers, join, v, shutdownTimeout, limits, auditLog, peerListenPort, raftEngine, peerTls, text, tls, insecure, auditTrail); }
    public ServerConfig withShutdownTimeout(Duration v) { return new ServerConfig(memberName, dataDir, host, clientPort, peerPort, snapshotEvery, electionTimeout, clusterName, peers, join, httpPort, v, limits, auditLog, peerListenPort, raftEngine, peerTls, text, tls, insecure, auditTrail); }
    public ServerConfig withLimits(ServerLimits v) { return new ServerConfig(memberName, dataDir, host, clientPort, peerPort, snapshotEvery, electionTimeout, clusterName, peers, join, httpPort, shutdownTimeout, v, auditLog, peerListenPort, raftEngine, peerTls, text, tls, insecure, auditTrail); }
    /** Turns the audit log on ({@code null}: off, the default). A test aid; see {@link #auditLog()}. */
    public ServerConfig withAuditLog(Path v) { return new ServerConfig(memberName, dataDir, host, clientPort, peerPort, snapshotEvery, electionTimeout, clusterName, peers, join, httpPort, shutdownTimeout, limits, v, peerListenPort, raftEngine, peerTls, text, tls, insecure, auditTrail); }

    /** The initial members; this member's peer port becomes the port of its own entry. */
    public ServerConfig withPeers(Map<String, String> v) {
        String own = v.get(memberName);
        int port = own == null ? peerPort : portOf(own);
        return new ServerConfig(memberName, dataDir, host, clientPort, port, snapshotEvery, electionTimeout, clusterName, v, join, httpPort, shutdownTimeout, limits, auditLog, peerListenPort, raftEngine, peerTls, text, tls, insecure, auditTrail);
    }

    /**
     * Parses {@code n1=host:port,n2=host:port,...}.
     *
     * @throws IllegalArgumentException naming the malformed part
     */
    public static Map<String, String> parsePeers(String text) {
        Map<String, String> peers = new LinkedHashMap<>();
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("peers must list the members as name=host:port,...");
        }
        for (String part : text.split(",", -1)) {
            String item = part.trim();
            int eq = item.indexOf('=');
            if (eq <= 0 || eq == item.length() - 1) {
                throw new IllegalArgumentException("peers entry '" + item + "' is not name=host:port");
            }
            String name = item.substring(0, eq).trim();
            String address = item.substring(eq + 1).trim();
            checkAddress("peers entry '" + item + "'", address);
            if (peers.put(name, address) != null) {
                throw new IllegalArgumentException("peers names member '" + name + "' twice");
            }
        }
        return peers;
    }

    /** Binds the peer server to {@code v} while the others reach this member at its peer port (0: the peer port). */
    public ServerConfig withPeerListenPort(int v) { return new ServerConfig(memberName, dataDir, host, clientPort, peerPort, snapshotEvery, electionTimeout, clusterName, peers, join, httpPort, shutdownTimeout, limits, auditLog, v, raftEngine, peerTls, text, tls, insecure, auditTrail); }
    /** Which Raft library runs the member's group; a data directory keeps the one it was made with. */
    public ServerConfig withRaftEngine(RaftEngine v) { return new ServerConfig(memberName, dataDir, host, clientPort, peerPort, snapshotEvery, electionTimeout, clusterName, peers, join, httpPort, shutdownTimeout, limits, auditLog, peerListenPort, v, peerTls, text, tls, insecure, auditTrail); }

    /** Mutual TLS between members ({@code null}: none). */
    public ServerConfig withPeerTls(PeerTls v) { return new ServerConfig(memberName, dataDir, host, clientPort, peerPort, snapshotEvery, electionTimeout, clusterName, peers, join, httpPort, shutdownTimeout, limits, auditLog, peerListenPort, raftEngine, v, text, tls, insecure, auditTrail); }

    /** The text (dflockd protocol) front end's port and settings. */
    public ServerConfig withTls(io.tenure.server.security.ClientTls v) { return new ServerConfig(memberName, dataDir, host, clientPort, peerPort, snapshotEvery, electionTimeout, clusterName, peers, join, httpPort, shutdownTimeout, limits, auditLog, peerListenPort, raftEngine, peerTls, text, v, insecure, auditTrail); }
    /** Where the audit trail of grants, releases, revocations, management and refusals goes ({@code --audit-file}). */
    public ServerConfig withAuditTrail(io.tenure.server.security.AuditTrail.Settings v) { return new ServerConfig(memberName, dataDir, host, clientPort, peerPort, snapshotEvery, electionTimeout, clusterName, peers, join, httpPort, shutdownTimeout, limits, auditLog, peerListenPort, raftEngine, peerTls, text, tls, insecure, v); }
    public ServerConfig withInsecure(boolean v) { return new ServerConfig(memberName, dataDir, host, clientPort, peerPort, snapshotEvery, electionTimeout, clusterName, peers, join, httpPort, shutdownTimeout, limits, auditLog, peerListenPort, raftEngine, peerTls, text, tls, v, auditTrail); }
    public ServerConfig withText(io.tenure.server.text.TextSettings v) { return new ServerConfig(memberName, dataDir, host, clientPort, peerPort, snapshotEvery, electionTimeout, clusterName, peers, join, httpPort, shutdownTimeout, limits, auditLog, peerListenPort, raftEngine, peerTls, v, tls, insecure, auditTrail); }

    /** The port the peer server binds: {@link #peerListenPort()} when set, else the peer port. */
    public int peerBindPort() {
        return peerListenPort != 0 ? peerListenPort : peerPort;
    }

    /** Whether this member starts or joins a cluster of several members. */
    public boolean clustered() {
        return peers.size() > 1 || join;
    }

    /** This member's Raft address as peers reach it. */
    public String peerAddress() {
        String own = peers.get(memberName);
        return own != null ? own : host + ":" + peerPort;
    }

    /**
     * The shortest lease TTL this member grants: 1 s alone; in a cluster
     * {@link #MIN_TTL_ELECTION_TIMEOUTS} election timeouts, and at least {@link #MIN_CLUSTER_TTL}.
     */
    public Duration minTtl() {
        return clustered() ? minClusterTtl(electionTimeout) : Duration.ofSeconds(1);
    }

    /** The shortest lease TTL of a cluster whose members run with {@code electionTimeout}: 5 s with the default. */
    public static Duration minClusterTtl(Duration electionTimeout) {
        Duration timeouts = electionTimeout.multipliedBy(MIN_TTL_ELECTION_TIMEOUTS);
        return timeouts.compareTo(MIN_CLUSTER_TTL) > 0 ? timeouts : MIN_CLUSTER_TTL;
    }

    /** @throws IllegalArgumentException naming the first invalid setting */
    public ServerConfig validate() {
        if (!NAME.matcher(memberName).matches()) {
            throw new IllegalArgumentException("member name '" + memberName
                    + "' must be 1-63 letters, digits, '_', '.' or '-', starting with a letter or digit");
        }
        if (!NAME.matcher(clusterName).matches()) {
            throw new IllegalArgumentException("cluster name '" + clusterName
                    + "' must be 1-63 letters, digits, '_', '.' or '-', starting with a letter or digit");
        }
        checkPort("client port", clientPort);
        checkPort("peer port", peerPort);
        checkPort("http port", httpPort);
        checkPort("peer listen port", peerListenPort);
        if (peerListenPort != 0 && (peerListenPort == clientPort || peerListenPort == httpPort)) {
            throw new IllegalArgumentException("peer listen port " + peerListenPort + " must differ from the client and http ports");
        }
        if (httpPort != 0 && (httpPort == clientPort || httpPort == peerPort)) {
            throw new IllegalArgumentException("http port " + httpPort + " must differ from the client and peer ports");
        }
        if (shutdownTimeout.toMillis() < 100 || shutdownTimeout.toMinutes() > 10) {
            throw new IllegalArgumentException("shutdown timeout must be between 100ms and 10m, got " + shutdownTimeout);
        }
        limits.validate();
        text.validate();
        if (text.port() > 0 && (text.port() == clientPort || text.port() == peerPort || text.port() == httpPort)) {
            throw new IllegalArgumentException("text port " + text.port() + " must differ from the client, peer and http ports");
        }
        if (clientPort != 0 && clientPort == peerPort) {
            throw new IllegalArgumentException("client port and peer port must differ (both " + clientPort + ")");
        }
        if (snapshotEvery < 100) {
            throw new IllegalArgumentException("snapshot threshold must be at least 100 log entries, got " + snapshotEvery);
        }
        if (electionTimeout.toMillis() < 100 || electionTimeout.toSeconds() > 60) {
            throw new IllegalArgumentException("election timeout must be between 100ms and 60s, got " + electionTimeout);
        }
        if (peerTls != null) {
            if (raftEngine == RaftEngine.RATIS) {
                throw new IllegalArgumentException("peer TLS needs the jraft Raft engine (--raft-engine jraft or auto, "
                        + "on a new data directory or one made with jraft); the ratis engine has no TLS between members yet");
            }
            peerTls.validate();
        }
        if (tls != null) {
            tls.validate();
        } else if (text.tlsCert() != null) {
            io.tenure.server.security.ClientTls.of(text.tlsCert(), text.tlsKey()).validate();
        }
        String exposure = exposure();
        if (exposure != null && !insecure) {
            throw new IllegalArgumentException(exposure);
        }
        if (join && peers.keySet().stream().noneMatch(name -> !name.equals(memberName))) {
            throw new IllegalArgumentException("peers must list the running members (and this one) to join a cluster");
        }
        if (!peers.isEmpty()) {
            Map<String, String> byAddress = new HashMap<>();
            for (Map.Entry<String, String> peer : peers.entrySet()) {
                if (!NAME.matcher(peer.getKey()).matches()) {
                    throw new IllegalArgumentException("peers: member name '" + peer.getKey()
                            + "' must be 1-63 letters, digits, '_', '.' or '-', starting with a letter or digit");
                }
                checkAddress("peers entry '" + peer.getKey() + "=" + peer.getValue() + "'", peer.getValue());
                String other = byAddress.put(peer.getValue(), peer.getKey());
                if (other != null) {
                    throw new IllegalArgumentException("peers: members '" + other + "' and '" + peer.getKey()
                            + "' are both given " + peer.getValue());
                }
            }
            if (!peers.containsKey(memberName)) {
                throw new IllegalArgumentException("member name '" + memberName + "' is not among the peers ("
                        + String.join(", ", peers.keySet()) + ")");
            }
            if (portOf(peers.get(memberName)) != peerPort) {
                throw new IllegalArgumentException("peer port " + peerPort + " differs from this member's entry in peers ("
                        + peers.get(memberName) + ")");
            }
            for (Map.Entry<String, String> peer : peers.entrySet()) {
                if (clientPort != 0 && portOf(peer.getValue()) == clientPort
                        && hostOf(peer.getValue()).equals(host)) {
                    throw new IllegalArgumentException("client port " + clientPort + " is the peer port of member '"
                            + peer.getKey() + "' (" + peer.getValue() + ")");
                }
            }
        }
        return this;
    }

    /**
     * Why this member would be open to anyone who reaches it, or null: it listens beyond loopback
     * without TLS and client certificates on its client ports, or its cluster's members talk
     * beyond loopback without peer TLS. Such a member starts only with {@code --insecure}.
     */
    public String exposure() {
        boolean clientsAuthenticated = tls != null && tls.clientCertAuth();
        if (!loopback(host) && !clientsAuthenticated) {
            return "the member would listen on " + host + " (--host), beyond loopback, "
                    + (tls == null ? "without TLS and without client authentication" : "without client authentication")
                    + ": anyone who reaches it could take and release every lock. Give --cert-file, --key-file, "
                    + "--trusted-ca-file and --client-cert-auth (each client then shows a certificate that CA signed), "
                    + "or --insecure to run it open anyway";
        }
        if (peerTls == null) {
            for (Map.Entry<String, String> peer : peers.entrySet()) {
                if (!loopback(hostOf(peer.getValue()))) {
                    return "the members would talk over " + peer.getValue() + " (peers entry '" + peer.getKey()
                            + "'), beyond loopback, without TLS: anyone who reaches a peer port could vote or write the log. "
                            + "Give --peer-cert-file, --peer-key-file and --peer-trusted-ca-file (with the jraft engine), "
                            + "or --insecure to run it open anyway";
                }
            }
        }
        return null;
    }

    /** Whether {@code host} names this machine only: 127.0.0.0/8, ::1 or localhost. */
    public static boolean loopback(String host) {
        String h = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
        return h.equals("localhost") || h.equals("::1") || h.equals("0:0:0:0:0:0:0:1") || h.matches("127\\.\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}");
    }

    private static void checkPort(String what, int port) {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException(what + " must be between 0 and 65535, got " + port);
        }
    }

    private static void checkAddress(String what, String address) {
        int colon = address.lastIndexOf(':');
        if (colon <= 0 || colon == address.length() - 1) {
            throw new IllegalArgumentException(what + ": address '" + address + "' is not host:port");
        }
        int port;
        try {
            port = Integer.parseInt(address.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(what + ": port '" + address.substring(colon + 1) + "' is not a number");
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException(what + ": port must be between 1 and 65535, got " + port);
        }
    }

    public static int portOf(String address) {
        return Integer.parseInt(address.substring(address.lastIndexOf(':') + 1));
    }

    public static String hostOf(String address) {
        return address.substring(0, address.lastIndexOf(':'));
    }
}
