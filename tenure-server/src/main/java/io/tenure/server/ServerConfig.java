package io.tenure.server;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * The settings of one Tenure member. Every setting has a default that is safe for a single
 * durable node; {@link #validate()} names the first invalid one.
 *
 * @param memberName      this member's name, also the Raft peer id (default {@code n1})
 * @param dataDir         where the Raft log, snapshots and the member identity live ({@code ./tenure-data})
 * @param host            the address both ports bind to ({@code 127.0.0.1})
 * @param clientPort      gRPC port for clients (7070; 0 picks a free port)
 * @param peerPort        Raft port for peer traffic (7071; 0 picks a free port)
 * @param snapshotEvery   take a snapshot and purge the log after this many log entries (50,000)
 * @param electionTimeout the Raft election timeout lower bound (1 s); the upper bound is twice it
 */
public record ServerConfig(
        String memberName,
        Path dataDir,
        String host,
        int clientPort,
        int peerPort,
        long snapshotEvery,
        Duration electionTimeout) {

    public static final String DEFAULT_MEMBER = "n1";
    public static final Path DEFAULT_DATA_DIR = Path.of("tenure-data");
    public static final String DEFAULT_HOST = "127.0.0.1";
    public static final int DEFAULT_CLIENT_PORT = 7070;
    public static final int DEFAULT_PEER_PORT = 7071;
    /** Large enough that snapshots are rare under load, small enough that a restart replays seconds, not minutes. */
    public static final long DEFAULT_SNAPSHOT_EVERY = 50_000;
    /** Ratis's 150 ms default causes spurious elections on a busy 2-core machine (RATIS.md). */
    public static final Duration DEFAULT_ELECTION_TIMEOUT = Duration.ofSeconds(1);

    public ServerConfig {
        Objects.requireNonNull(memberName, "memberName");
        Objects.requireNonNull(dataDir, "dataDir");
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(electionTimeout, "electionTimeout");
    }

    public static ServerConfig defaults() {
        return new ServerConfig(DEFAULT_MEMBER, DEFAULT_DATA_DIR, DEFAULT_HOST, DEFAULT_CLIENT_PORT,
                DEFAULT_PEER_PORT, DEFAULT_SNAPSHOT_EVERY, DEFAULT_ELECTION_TIMEOUT);
    }

    public ServerConfig withMemberName(String v) { return new ServerConfig(v, dataDir, host, clientPort, peerPort, snapshotEvery, electionTimeout); }
    public ServerConfig withDataDir(Path v) { return new ServerConfig(memberName, v, host, clientPort, peerPort, snapshotEvery, electionTimeout); }
    public ServerConfig withHost(String v) { return new ServerConfig(memberName, dataDir, v, clientPort, peerPort, snapshotEvery, electionTimeout); }
    public ServerConfig withClientPort(int v) { return new ServerConfig(memberName, dataDir, host, v, peerPort, snapshotEvery, electionTimeout); }
    public ServerConfig withPeerPort(int v) { return new ServerConfig(memberName, dataDir, host, clientPort, v, snapshotEvery, electionTimeout); }
    public ServerConfig withSnapshotEvery(long v) { return new ServerConfig(memberName, dataDir, host, clientPort, peerPort, v, electionTimeout); }
    public ServerConfig withElectionTimeout(Duration v) { return new ServerConfig(memberName, dataDir, host, clientPort, peerPort, snapshotEvery, v); }

    /** @throws IllegalArgumentException naming the first invalid setting */
    public ServerConfig validate() {
        if (!memberName.matches("[A-Za-z0-9][A-Za-z0-9_.-]{0,62}")) {
            throw new IllegalArgumentException("member name '" + memberName
                    + "' must be 1-63 letters, digits, '_', '.' or '-', starting with a letter or digit");
        }
        checkPort("client port", clientPort);
        checkPort("peer port", peerPort);
        if (clientPort != 0 && clientPort == peerPort) {
            throw new IllegalArgumentException("client port and peer port must differ (both " + clientPort + ")");
        }
        if (snapshotEvery < 100) {
            throw new IllegalArgumentException("snapshot threshold must be at least 100 log entries, got " + snapshotEvery);
        }
        if (electionTimeout.toMillis() < 100 || electionTimeout.toSeconds() > 60) {
            throw new IllegalArgumentException("election timeout must be between 100ms and 60s, got " + electionTimeout);
        }
        return this;
    }

    private static void checkPort(String what, int port) {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException(what + " must be between 0 and 65535, got " + port);
        }
    }
}
