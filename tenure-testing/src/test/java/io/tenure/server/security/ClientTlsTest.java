package io.tenure.server.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenure.client.Lease;
import io.tenure.client.LockHandle;
import io.tenure.client.TenureAuth;
import io.tenure.client.TenureClient;
import io.tenure.server.PeerTls;
import io.tenure.testing.Await;
import io.tenure.testing.TenureCluster;
import io.tenure.testing.TestCertificates;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.math.BigInteger;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * TLS on a member's client ports (gRPC, HTTP, text) with client certificates required, against
 * certificates the test makes: a client whose certificate the trusted CA signed is served on each
 * port; one without a certificate, with one from another CA, or with an expired one is refused on
 * each; a client refuses a member whose certificate names another host; a plaintext client is
 * refused; and a rotated certificate is served without a restart while requests keep succeeding.
 */
class ClientTlsTest {
    private static final char[] PASSWORD = "test".toCharArray();

    @TempDir
    Path dir;
    TestCertificates ca;
    TestCertificates otherCa;
    /** The files the member serves from; a rotation replaces them. */
    Path servedCert;
    Path servedKey;
    PeerTls client;
    TenureCluster cluster;

    @BeforeEach
    void start() throws IOException {
        ca = new TestCertificates(dir.resolve("ca"), "tenure-ca");
        otherCa = new TestCertificates(dir.resolve("other"), "other-ca");
        PeerTls member = ca.member("member-1");
        servedCert = dir.resolve("served.pem");
        servedKey = dir.resolve("served.key");
        Files.copy(member.certFile(), servedCert);
        Files.copy(member.keyFile(), servedKey);
        client = ca.member("worker");
        ClientTls tls = ClientTls.of(servedCert, servedKey).withClientCertAuth(ca.caFile());
        cluster = TenureCluster.builder().members(1).config(c -> c.withTls(tls)).start();
    }

    @AfterEach
    void stop() {
        cluster.close();
    }

    @Test
    void aClientWhoseCertificateTheCaSignedIsServedOnEveryPort() throws Exception {
        try (TenureClient sdk = sdk(client)) {
            Lease lease = sdk.grantLease(Duration.ofSeconds(10), "worker");
            try (LockHandle lock = sdk.acquire("tls/jobs", lease, Duration.ZERO, null)) {
                assertThat(lock.fencingToken()).isPositive();
            }
        }
        HttpResponse<String> health = https(jdk(client, ca.caFile()), "/healthz");
        assertThat(health.statusCode()).isEqualTo(200);
        HttpResponse<String> describe = https(jdk(client, ca.caFile()), "/v1/locks/tls%2Fjobs");
        assertThat(describe.statusCode()).as(describe.body()).isIn(200, 404);
        assertThat(textPing(jdk(client, ca.caFile()))).isEqualTo("ok");
    }

    @Test
    void aClientWithoutACertificateOrWithAForeignOrExpiredOneIsRefusedOnEveryPort() throws Exception {
        Map<String, PeerTls> refused = Map.of(
                "no certificate", new PeerTls(client.certFile(), client.keyFile(), ca.caFile()),
                "a certificate another CA signed", otherCa.member("intruder"),
                "an expired certificate", ca.member("late", Duration.ofMinutes(30)));
        for (Map.Entry<String, PeerTls> bad : refused.entrySet()) {
            boolean none = bad.getKey().equals("no certificate");
            PeerTls identity = bad.getValue();
            try (TenureClient sdk = none
                    ? TenureClient.builder().endpoints(List.of(cluster.endpoint(0))).requestTimeout(Duration.ofSeconds(2))
                            .tls(ca.caFile()).build()
                    : sdk(identity)) {
                // The TLS alert says why: CERTIFICATE_REQUIRED (none, or none the member's CAs signed), CERTIFICATE_EXPIRED.
                assertThatThrownBy(() -> sdk.grantLease(Duration.ofSeconds(10), "worker")).as("gRPC, " + bad.getKey())
                        .isInstanceOf(io.tenure.client.UnavailableException.class).hasMessageContaining("CERTIFICATE_");
            }
            SSLContext context = none ? jdk(null, ca.caFile()) : jdk(identity, ca.caFile());
            assertThatThrownBy(() -> https(context, "/healthz")).as("HTTP, " + bad.getKey())
                    .isInstanceOf(javax.net.ssl.SSLHandshakeException.class).hasMessageContaining("certificate");
            assertThat(textPingOrFailure(context)).as("text, " + bad.getKey()).contains("SSLHandshakeException").contains("certificate_");
        }
        // And the member goes on serving the clients it should.
        assertThat(textPing(jdk(client, ca.caFile()))).isEqualTo("ok");
    }

    @Test
    void aPlaintextClientIsRefusedOnEveryTlsPort() throws Exception {
        try (TenureClient plain = TenureClient.builder().endpoints(List.of(cluster.endpoint(0)))
                .requestTimeout(Duration.ofSeconds(2)).build()) {
            assertThatThrownBy(() -> plain.grantLease(Duration.ofSeconds(10), "worker")).isInstanceOf(RuntimeException.class);
        }
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + cluster.httpPort(0) + "/healthz"))
                .timeout(Duration.ofSeconds(5)).build();
        String outcome;
        try {
            outcome = "status " + http.send(request, HttpResponse.BodyHandlers.ofString()).statusCode();
        } catch (IOException e) {
            outcome = e.toString(); // the TLS port closed on a request that was not a handshake
        }
        assertThat(outcome).as("plain HTTP on the HTTPS port").isNotEqualTo("status 200");
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", cluster.textPort(0)), 5_000);
            socket.setSoTimeout(5_000);
            assertThat(ping(socket)).as("plain text on the TLS text port").isNotEqualTo("ok");
        } catch (IOException e) {
            // refused outright: as good
        }
    }

    @Test
    void aClientRefusesAMemberWhoseCertificateNamesAnotherHost() throws Exception {
        PeerTls elsewhere = ca.member("member-elsewhere", Duration.ofDays(1), "elsewhere.example");
        BigInteger serial = rotateTo(elsewhere);

        try (TenureClient sdk = sdk(client)) {
            assertThatThrownBy(() -> sdk.grantLease(Duration.ofSeconds(10), "worker")).isInstanceOf(RuntimeException.class);
        }
        assertThatThrownBy(() -> https(jdk(client, ca.caFile()), "/healthz")).isInstanceOf(IOException.class);
        assertThat(textPingOrFailure(jdk(client, ca.caFile()))).isNotEqualTo("ok");
        assertThat(servedSerial(cluster.textPort(0))).isEqualTo(serial);
    }

    @Test
    void aRotatedCertificateIsServedWithoutARestartWhileRequestsKeepSucceeding() throws Exception {
        BigInteger before = servedSerial(cluster.clientPort(0));
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger done = new AtomicInteger();
        ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
        List<Thread> workers = new ArrayList<>();
        try (TenureClient sdk = sdk(client)) {
            Lease lease = sdk.grantLease(Duration.ofSeconds(20), "worker");
            for (int w = 0; w < 4; w++) {
                String name = "rotation/" + w;
                Thread worker = new Thread(() -> {
                    while (!stop.get()) {
                        try (LockHandle lock = sdk.acquire(name, lease, Duration.ofSeconds(5), null)) {
                            done.incrementAndGet();
                        } catch (RuntimeException e) {
                            failures.add(e);
                        }
                    }
                });
                worker.start();
                workers.add(worker);
            }
            Await.until("requests served before the rotation", Duration.ofSeconds(20), () -> done.get() >= 100);
            int beforeRotation = done.get();

            BigInteger after = rotateTo(ca.member("member-1-next"));
            assertThat(after).isNotEqualTo(before);
            // Every port serves the new certificate to new connections, without a restart.
            assertThat(servedSerial(cluster.httpPort(0))).isEqualTo(after);
            assertThat(servedSerial(cluster.textPort(0))).isEqualTo(after);
            try (TenureClient fresh = sdk(client)) {
                Lease other = fresh.grantLease(Duration.ofSeconds(10), "fresh");
                fresh.acquire("rotation/fresh", other, Duration.ZERO, null).release();
            }
            assertThat(https(jdk(client, ca.caFile()), "/healthz").statusCode()).isEqualTo(200);
            assertThat(textPing(jdk(client, ca.caFile()))).isEqualTo("ok");
            Await.until("requests served after the rotation", Duration.ofSeconds(20), () -> done.get() >= beforeRotation + 100);
            stop.set(true);
            for (Thread worker : workers) {
                worker.join(20_000);
            }
        } finally {
            stop.set(true);
        }
        assertThat(failures).as("requests that failed across the rotation").isEmpty();
    }

    /** With authentication on, a client certificate's CN names its user on the gRPC, HTTP and text ports alike. */
    @Test
    void aClientCertificateNamesItsUserOnEveryPortOnceAuthenticationIsOn() throws Exception {
        try (TenureClient sdk = sdk(client)) {
            sdk.auth().addUser("worker", "worker password");
            sdk.auth().grantRole("worker", "root");
            sdk.auth().enable();
            TenureAuth.Status status = sdk.auth().status();
            assertThat(status.user()).isEqualTo("worker");
            assertThat(status.credential()).isEqualTo("certificate");
            sdk.grantLease(Duration.ofSeconds(10), "worker").revoke();
        }
        assertThat(https(jdk(client, ca.caFile()), "/v1/auth/status").body()).contains("\"user\":\"worker\"");
        try (SSLSocket socket = textTls(jdk(client, ca.caFile()))) {
            assertThat(TextLines.call(socket, "ping", "_", "_")).as("no auth needed: the certificate is the credential").isEqualTo("ok");
            assertThat(TextLines.call(socket, "incr", "tls/counter", "1")).isEqualTo("ok 1");
        }
        // A certificate the CA signed, naming no user: the TLS handshake passes, authentication does not.
        PeerTls stranger = ca.member("stranger");
        try (TenureClient sdk = sdk(stranger)) {
            assertThatThrownBy(() -> sdk.grantLease(Duration.ofSeconds(10), "x")).isInstanceOf(io.tenure.client.UnauthenticatedException.class)
                    .hasMessageContaining("names user 'stranger', who does not exist");
        }
        try (SSLSocket socket = textTls(jdk(stranger, ca.caFile()))) {
            assertThat(TextLines.call(socket, "ping", "_", "_")).isEqualTo("error_auth");
        }
    }

    private SSLSocket textTls(SSLContext context) throws IOException {
        SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket();
        socket.connect(new InetSocketAddress("127.0.0.1", cluster.textPort(0)), 5_000);
        socket.setSoTimeout(5_000);
        socket.startHandshake();
        return socket;
    }

    /** Replaces the served files with {@code next}'s (key, then certificate, each moved in whole) and waits until new handshakes get it. */
    private BigInteger rotateTo(PeerTls next) throws Exception {
        X509Certificate cert = io.tenure.server.security.PemFiles.certificates(next.certFile(), "test").get(0);
        Path key = Files.copy(next.keyFile(), dir.resolve("incoming.key"), StandardCopyOption.REPLACE_EXISTING);
        Files.move(key, servedKey, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        Path pem = Files.copy(next.certFile(), dir.resolve("incoming.pem"), StandardCopyOption.REPLACE_EXISTING);
        Files.move(pem, servedCert, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        Await.until("the member serves the certificate with serial " + cert.getSerialNumber(), Duration.ofSeconds(15),
                () -> cert.getSerialNumber().equals(servedSerialOrNull(cluster.clientPort(0))));
        return cert.getSerialNumber();
    }

    private BigInteger servedSerialOrNull(int port) {
        try {
            return servedSerial(port);
        } catch (Exception e) {
            return null;
        }
    }

    /** The serial of the certificate a new TLS connection to {@code port} is shown (any host name accepted: this looks, not checks). */
    private BigInteger servedSerial(int port) throws Exception {
        try (SSLSocket socket = (SSLSocket) jdk(client, ca.caFile()).getSocketFactory().createSocket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
            socket.setSoTimeout(5_000);
            socket.startHandshake();
            return ((X509Certificate) socket.getSession().getPeerCertificates()[0]).getSerialNumber();
        }
    }

    private TenureClient sdk(PeerTls identity) {
        return TenureClient.builder().endpoints(List.of(cluster.endpoint(0))).requestTimeout(Duration.ofSeconds(3))
                .tls(ca.caFile(), identity.certFile(), identity.keyFile()).build();
    }

    /** A JDK context presenting {@code identity} (none when null) and trusting {@code trustedCa}. */
    private static SSLContext jdk(PeerTls identity, Path trustedCa) throws Exception {
        KeyManagerFactory keys = null;
        if (identity != null) {
            KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(new java.io.ByteArrayInputStream(identity.keyStore(PASSWORD)), PASSWORD);
            keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            keys.init(store, PASSWORD);
        }
        KeyStore trusted = KeyStore.getInstance("PKCS12");
        trusted.load(null, null);
        int i = 0;
        for (X509Certificate caCert : io.tenure.server.security.PemFiles.certificates(trustedCa, "test")) {
            trusted.setCertificateEntry("ca-" + i++, caCert);
        }
        TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trust.init(trusted);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(keys == null ? null : keys.getKeyManagers(), trust.getTrustManagers(), null);
        return context;
    }

    private HttpResponse<String> https(SSLContext context, String path) throws IOException, InterruptedException {
        HttpClient http = HttpClient.newBuilder().sslContext(context).connectTimeout(Duration.ofSeconds(5)).build();
        HttpRequest request = HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + cluster.httpPort(0) + path))
                .timeout(Duration.ofSeconds(5)).build();
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }

    /** A text-protocol {@code ping} over TLS, checking the member's host name as HTTPS does; its answer. */
    private String textPing(SSLContext context) throws IOException {
        try (SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", cluster.textPort(0)), 5_000);
            socket.setSoTimeout(5_000);
            SSLParameters parameters = socket.getSSLParameters();
            parameters.setEndpointIdentificationAlgorithm("HTTPS");
            socket.setSSLParameters(parameters);
            socket.startHandshake();
            return ping(socket);
        }
    }

    /** The answer to a text ping, or the failure's description. */
    private String textPingOrFailure(SSLContext context) {
        try {
            String answer = textPing(context);
            return answer == null ? "closed" : answer;
        } catch (IOException e) {
            return e.toString();
        }
    }

    private static String ping(Socket socket) throws IOException {
        OutputStream out = socket.getOutputStream();
        out.write("ping\n_\n_\n".getBytes(StandardCharsets.UTF_8));
        out.flush();
        return new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8)).readLine();
    }
}
