package io.tenure.server;

import io.grpc.StatusRuntimeException;
import io.tenure.proto.v1.LeaseGrantRequest;
import io.tenure.proto.v1.LockRequest;
import io.tenure.proto.v1.MemberAddRequest;
import io.tenure.proto.v1.MemberListRequest;
import io.tenure.proto.v1.StatusRequest;
import io.tenure.server.security.PemFiles;
import io.tenure.testing.Await;
import io.tenure.testing.TenureCluster;
import io.tenure.testing.TestCertificates;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import java.io.ByteArrayInputStream;
import java.math.BigInteger;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Three members on JRaft with mutual TLS on their peer ports: they elect, replicate and forward
 * over it; the peer port speaks only TLS and only to a peer whose certificate the cluster's CA
 * signed, so a member with a certificate from another CA can neither connect nor be added.
 */
class PeerTlsTest {
    @TempDir
    Path dir;
    TestCertificates clusterCa;
    TestCertificates otherCa;
    /** The peer TLS of each member by name, as the cluster's config tweak gives it. */
    final Map<String, PeerTls> tlsByMember = new ConcurrentHashMap<>();
    TenureCluster cluster;

    @BeforeEach
    void start() {
        clusterCa = new TestCertificates(dir.resolve("certs"), "tenure-peers");
        otherCa = new TestCertificates(dir.resolve("certs"), "somebody-else");
        for (String member : new String[] {"n1", "n2", "n3"}) {
            tlsByMember.put(member, clusterCa.member(member));
        }
        cluster = TenureCluster.builder().members(3).dataDir(dir.resolve("data"))
                .electionTimeout(ServerConfig.DEFAULT_ELECTION_TIMEOUT)
                .config(c -> c.withRaftEngine(RaftEngine.JRAFT).withPeerTls(tlsByMember.get(c.memberName())))
                .start();
    }

    @AfterEach
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void membersElectReplicateAndForwardOverMutualTls() {
        int leader = cluster.leader();
        int follower = (leader + 1) % 3;
        // A write sent to a follower is forwarded to the leader over the peer port, then replicated.
        long lease = cluster.blocking(follower).leaseGrant(LeaseGrantRequest.newBuilder().setTtl(60).build()).getId();
        assertThat(cluster.blocking(follower).lock(LockRequest.newBuilder().setName("over-tls").setLeaseId(lease).build())
                .getAcquired()).isTrue();
        long committed = cluster.blocking(leader).status(StatusRequest.getDefaultInstance()).getCommitIndex();
        Await.until("every member applied the write", Duration.ofSeconds(20), () -> {
            for (int i = 0; i < 3; i++) {
                if (cluster.blocking(i).status(StatusRequest.getDefaultInstance()).getAppliedIndex() < committed) {
                    return false;
                }
            }
            return true;
        });
        // The key store bolt reads lives in the data directory, readable by the member's user only.
        Path store = cluster.config(leader).dataDir().resolve("jraft").resolve("peer-tls.p12");
        assertThat(store).exists();
        assertThat(posixPermissions(store)).isEqualTo("rw-------");
    }

    @Test
    void aLockGrantedOverTlsSurvivesTheLeadersStopAndTheNextTokenIsLarger() {
        int leader = cluster.leader();
        long holder = cluster.blocking(leader).leaseGrant(LeaseGrantRequest.newBuilder().setTtl(60).build()).getId();
        long token = cluster.blocking(leader).lock(LockRequest.newBuilder().setName("kept").setLeaseId(holder).build())
                .getFencingToken();
        assertThat(token).isPositive();
        cluster.stop(leader);
        int survivor = (leader + 1) % 3;
        Await.until("a new leader among the other two, over TLS", Duration.ofSeconds(30), () -> {
            try {
                return !cluster.blocking(survivor).status(StatusRequest.getDefaultInstance()).getLeader().isEmpty();
            } catch (StatusRuntimeException notYet) {
                return false;
            }
        });
        // I9 and I1: the acknowledged grant survived with its holder and token; another lease cannot take it.
        var kept = cluster.blocking(survivor).describe(io.tenure.proto.v1.DescribeRequest.newBuilder().setName("kept").build()).getLock();
        assertThat(kept.getHeld()).isTrue();
        assertThat(kept.getLeaseId()).isEqualTo(holder);
        assertThat(kept.getFencingToken()).isEqualTo(token);
        long other = cluster.blocking(survivor).leaseGrant(LeaseGrantRequest.newBuilder().setTtl(60).build()).getId();
        assertThat(cluster.blocking(survivor).tryLock(io.tenure.proto.v1.TryLockRequest.newBuilder().setName("kept")
                .setLeaseId(other).build()).getAcquired()).isFalse();
        // I2: a grant under the new leader gets a larger token.
        assertThat(cluster.blocking(survivor).lock(LockRequest.newBuilder().setName("after-failover").setLeaseId(other).build())
                .getFencingToken()).isGreaterThan(token);
    }

    @Test
    void thePeerPortAnswersOnlyPeersTheCaSigned() throws Exception {
        int port = peerPort(0);
        // A peer with a certificate of the cluster's CA: the handshake completes, the member shows its own.
        try (SSLSocket socket = tlsSocket(port, clusterCa.member("probe"), clusterCa.caFile())) {
            socket.startHandshake();
            X509Certificate shown = (X509Certificate) socket.getSession().getPeerCertificates()[0];
            assertThat(shown.getSubjectX500Principal().getName()).isEqualTo("CN=n1");
            assertThat(socket.getSession().getProtocol()).isIn("TLSv1.2", "TLSv1.3");
            assertThat(refusedWithin(socket, Duration.ofMillis(500))).as("the connection stays open").isFalse();
        }
        // No client certificate, or one from another CA: the member closes the connection.
        try (SSLSocket socket = tlsSocket(port, null, clusterCa.caFile())) {
            assertThat(refusedWithin(socket, Duration.ofSeconds(10))).as("no client certificate").isTrue();
        }
        try (SSLSocket socket = tlsSocket(port, otherCa.member("intruder"), clusterCa.caFile())) {
            assertThat(refusedWithin(socket, Duration.ofSeconds(10))).as("a certificate of another CA").isTrue();
        }
        // Plain TCP (bolt's own protocol, unencrypted): refused as well.
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
            socket.getOutputStream().write(new byte[] {2, 1, 0, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
            socket.getOutputStream().flush();
            assertThat(refusedWithin(socket, Duration.ofSeconds(10))).as("plain TCP").isTrue();
        }
    }

    @Test
    void aMemberWhoseCertificateTheClusterCaDidNotSignCannotBeAdded() throws Exception {
        // n4 trusts both CAs, so it would talk to the cluster; its own certificate is the other CA's.
        PeerTls own = otherCa.member("n4");
        Path bothCas = dir.resolve("certs").resolve("both-cas.pem");
        Files.writeString(bothCas, Files.readString(clusterCa.caFile()) + Files.readString(otherCa.caFile()));
        tlsByMember.put("n4", new PeerTls(own.certFile(), own.keyFile(), bothCas));
        int asker = cluster.leader();
        int n4 = cluster.startJoining();
        String n4Address = cluster.config(n4).peerAddress();
        var admin = cluster.admin(asker).withDeadlineAfter(120, TimeUnit.SECONDS);
        assertThatThrownBy(() -> admin.memberAdd(MemberAddRequest.newBuilder().setName("n4").setPeerAddress(n4Address).build()))
                .isInstanceOf(StatusRuntimeException.class).hasMessageContaining("did not catch up");
        assertThat(cluster.admin(asker).memberList(MemberListRequest.getDefaultInstance()).getMembersList())
                .extracting(io.tenure.proto.v1.Member::getName).containsExactlyInAnyOrder("n1", "n2", "n3");
        // The three still commit (a member that is not the leader forwards).
        long lease = cluster.blocking(asker).leaseGrant(LeaseGrantRequest.newBuilder().setTtl(60).build()).getId();
        assertThat(cluster.blocking(asker).lock(LockRequest.newBuilder().setName("after").setLeaseId(lease).build())
                .getAcquired()).isTrue();
        assertThat(cluster.blocking(n4).status(StatusRequest.getDefaultInstance()).getLeader()).isEmpty();
    }

    @Test
    void aRotatedPeerCertificateServesNewConnectionsWithoutARestartAndNoRequestFails() throws Exception {
        int leader = cluster.leader();
        String name = cluster.memberName(leader);
        int port = peerPort(leader);
        BigInteger first = shownSerial(port);
        assertThat(first).isNotNull();
        ch.qos.logback.classic.Logger raftLog = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(
                io.tenure.server.raft.JRaftRaft.class);
        ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> events = new ch.qos.logback.core.read.ListAppender<>();
        events.start();
        ch.qos.logback.classic.Level level = raftLog.getLevel();
        raftLog.setLevel(ch.qos.logback.classic.Level.INFO);
        raftLog.addAppender(events);
        AtomicInteger cycles = new AtomicInteger();
        java.util.List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
        AtomicBoolean running = new AtomicBoolean(true);
        // Load while the certificate turns: lock and unlock cycles through a follower, which
        // forwards each write to the leader over the peer port; the leader replicates over it.
        int follower = (leader + 1) % 3;
        int other = (leader + 2) % 3;
        Thread load = new Thread(() -> {
            long lease = cluster.blocking(follower).leaseGrant(LeaseGrantRequest.newBuilder().setTtl(60).build()).getId();
            while (running.get()) {
                try {
                    var blocking = cluster.blocking(follower).withDeadlineAfter(10, TimeUnit.SECONDS);
                    var granted = blocking.lock(LockRequest.newBuilder().setName("turning").setLeaseId(lease).build());
                    assertThat(granted.getAcquired()).isTrue();
                    blocking.unlock(io.tenure.proto.v1.UnlockRequest.newBuilder().setKey("turning").setLeaseId(lease)
                            .setFencingToken(granted.getFencingToken()).build());
                    cycles.incrementAndGet();
                } catch (Throwable e) {
                    failures.add(e);
                    return;
                }
            }
        }, "rotation-load");
        load.start();
        try {
            Await.until("some cycles before the rotation", Duration.ofSeconds(20), () -> cycles.get() >= 20 || !failures.isEmpty());

            // The operator's rotation: new key and certificate of the same CA, written over the member's files.
            PeerTls rotated = clusterCa.member(name);
            BigInteger second = PemFiles.certificates(rotated.certFile(), "cert").get(0).getSerialNumber();
            assertThat(second).isNotEqualTo(first);
            Await.until("the member's peer port shows the new certificate to a new connection", Duration.ofSeconds(20),
                    () -> second.equals(shownSerial(port)));
            int afterRotation = cycles.get();
            Await.until("cycles go on after the rotation", Duration.ofSeconds(20),
                    () -> cycles.get() >= afterRotation + 20 || !failures.isEmpty());

            // Files that do not load (a certificate another CA signed) are refused: the rotated one stays.
            PeerTls foreign = otherCa.member("foreign");
            Files.write(rotated.keyFile(), Files.readAllBytes(foreign.keyFile()));
            Files.write(rotated.certFile(), Files.readAllBytes(foreign.certFile()));
            Await.until("the refusal logged", Duration.ofSeconds(20), () -> events.list.stream().anyMatch(
                    e -> e.getFormattedMessage().contains("peer_tls_reload_refused") && e.getFormattedMessage().contains("not signed by a CA")));
            assertThat(shownSerial(port)).isEqualTo(second);

            // New connections made by the member present the rotated certificate and are accepted:
            // a member restarted (every connection to it is new) catches up with the others.
            cluster.stop(other);
            int beforeRestart = cycles.get();
            Await.until("cycles go on with two members", Duration.ofSeconds(20),
                    () -> cycles.get() >= beforeRestart + 20 || !failures.isEmpty());
            cluster.startMember(other);
            long committed = cluster.blocking(leader).status(StatusRequest.getDefaultInstance()).getCommitIndex();
            Await.until("the restarted member applied what was committed", Duration.ofSeconds(30), () -> {
                try {
                    return cluster.blocking(other).status(StatusRequest.getDefaultInstance()).getAppliedIndex() >= committed;
                } catch (StatusRuntimeException notYet) {
                    return false;
                }
            });
        } finally {
            running.set(false);
            load.join(20_000);
            raftLog.detachAppender(events);
            raftLog.setLevel(level);
            events.list.forEach(e -> System.err.println("logged: " + e.getFormattedMessage()));
        }
        assertThat(failures).as("requests failed during the rotation").isEmpty();
        assertThat(cycles.get()).isGreaterThanOrEqualTo(60);
        assertThat(cluster.leader()).as("the rotation needed no failover").isEqualTo(leader);
    }

    /**
     * The serial number of the certificate a member's peer port shows to a new connection from a
     * peer of the cluster's CA; {@code null} when the handshake does not complete.
     */
    private BigInteger shownSerial(int port) {
        try (SSLSocket socket = tlsSocket(port, clusterCa.member("probe"), clusterCa.caFile())) {
            socket.setSoTimeout(5_000);
            socket.startHandshake();
            return ((X509Certificate) socket.getSession().getPeerCertificates()[0]).getSerialNumber();
        } catch (Exception e) {
            return null;
        }
    }

    private int peerPort(int index) {
        return ServerConfig.portOf(cluster.config(index).peerAddress());
    }

    private static String posixPermissions(Path file) {
        try {
            return java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(file));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A TLS client socket presenting {@code identity} (none when {@code null}) and trusting {@code trustedCa}. */
    private static SSLSocket tlsSocket(int port, PeerTls identity, Path trustedCa) throws Exception {
        KeyManagerFactory keys = null;
        if (identity != null) {
            char[] password = "test".toCharArray();
            KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(new ByteArrayInputStream(identity.keyStore(password)), password);
            keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            keys.init(store, password);
        }
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        try (InputStream in = Files.newInputStream(trustedCa)) {
            int i = 0;
            for (var cert : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
                trust.setCertificateEntry("ca-" + i++, cert);
            }
        }
        TrustManagerFactory trusts = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trusts.init(trust);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(keys == null ? null : keys.getKeyManagers(), trusts.getTrustManagers(), null);
        SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket();
        socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
        return socket;
    }

    /**
     * Whether the member ends the connection (an alert, a reset or end of stream) within {@code within}:
     * with TLS 1.3 a refused client certificate shows on the client's first read, not in its handshake.
     */
    private static boolean refusedWithin(Socket socket, Duration within) throws IOException {
        socket.setSoTimeout((int) within.toMillis());
        try {
            if (socket instanceof SSLSocket ssl) {
                ssl.startHandshake();
            }
            return socket.getInputStream().read() < 0;
        } catch (SocketTimeoutException stillOpen) {
            return false;
        } catch (IOException ended) {
            return true;
        }
    }
}
