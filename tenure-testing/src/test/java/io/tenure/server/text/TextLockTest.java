package io.tenure.server.text;

import io.tenure.server.PeerTls;
import io.tenure.testing.Await;
import io.tenure.testing.TenureCluster;
import io.tenure.testing.TestCertificates;
import org.junit.jupiter.api.Test;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The text protocol's framing, session and lock-like commands, against a real member over raw
 * sockets: grant lines, statuses, two-phase acquires, semaphores, read/write locks, renewals,
 * auto-release, tokens across connections, limits, authentication, TLS, timeouts and bad input.
 */
class TextLockTest extends TextMemberTest {
    private static final String GRANT = "ok [0-9a-f]{32} \\d+ \\d+";


    private static String[] fields(String line) {
        return line.split(" ");
    }

    @Test
    void aLockIsGrantedWithATokenItsLeaseAndAFenceAndReleasedOnlyWithItsToken() throws Exception {
        start(t -> t);
        TextWire a = connect();
        TextWire b = connect();

        String grant = a.call("l", "job", "10");
        assertThat(grant).matches(GRANT);
        assertThat(fields(grant)[2]).isEqualTo("33");
        assertThat(b.call("l", "job", "0")).isEqualTo("timeout");
        assertThat(b.call("r", "job", "0123456789abcdef0123456789abcdef")).isEqualTo("error");
        assertThat(b.call("r", "other", fields(grant)[1])).isEqualTo("error");

        assertThat(a.call("r", "job", fields(grant)[1])).isEqualTo("ok");
        assertThat(a.call("r", "job", fields(grant)[1])).as("a second release of the same hold").isEqualTo("error");
        String next = b.call("l", "job", "0 60");
        assertThat(next).matches(GRANT);
        assertThat(fields(next)[2]).isEqualTo("60");
        assertThat(Long.parseLong(fields(next)[3])).isGreaterThan(Long.parseLong(fields(grant)[3]));
        assertThat(fields(next)[1]).isNotEqualTo(fields(grant)[1]);
    }

    @Test
    void aWaiterIsGrantedWhenTheHolderReleasesAndWaitersAreServedInOrder() throws Exception {
        start(t -> t);
        TextWire holder = connect();
        TextWire first = connect();
        TextWire second = connect();
        String held = holder.call("l", "q", "0");
        first.send("l", "q", "20");
        Await.until("the first waiter queued", Duration.ofSeconds(10),
                () -> cluster.server(0).member().locks().describe("q").waiters().size() == 1);
        second.send("l", "q", "20");
        Await.until("the second waiter queued", Duration.ofSeconds(10),
                () -> cluster.server(0).member().locks().describe("q").waiters().size() == 2);

        assertThat(holder.call("r", "q", fields(held)[1])).isEqualTo("ok");
        String firstGrant = first.answer();
        assertThat(firstGrant).matches(GRANT);
        assertThat(first.call("r", "q", fields(firstGrant)[1])).isEqualTo("ok");
        String secondGrant = second.answer();
        assertThat(secondGrant).matches(GRANT);
        assertThat(Long.parseLong(fields(secondGrant)[3])).isGreaterThan(Long.parseLong(fields(firstGrant)[3]));
    }

    @Test
    void aRenewalAnswersTheRemainingTimeAndTheFenceAndAnEndedLeaseIsReported() throws Exception {
        start(t -> t);
        TextWire a = connect();
        String grant = a.call("l", "renewed", "0 1");
        String token = fields(grant)[1];

        assertThat(a.call("n", "renewed", token)).as("n without a TTL renews to the default").isEqualTo("ok 33 " + fields(grant)[3]);
        assertThat(a.call("n", "renewed", token + "")).isEqualTo("ok 33 " + fields(grant)[3]);
        assertThat(a.call("n", "renewed", token + " 7")).isEqualTo("ok 7 " + fields(grant)[3]);
        assertThat(cluster.server(0).member().leases().view(cluster.server(0).member().locks().describe("renewed").leaseId()).ttlMillis())
                .isEqualTo(7_000);
        assertThat(a.call("n", "renewed", token + " 0")).isEqualTo("error");
        assertThat(a.call("n", "renewed", token + " 1")).isEqualTo("ok 1 " + fields(grant)[3]);
        assertThat(a.call("n", "renewed", "ffffffffffffffffffffffffffffffff")).isEqualTo("error");
        Await.until("the 1 s hold ended", Duration.ofSeconds(10),
                () -> cluster.server(0).member().locks().describe("renewed") == null);
        assertThat(a.call("n", "renewed", token)).isIn("error_lease_expired", "error");
        assertThat(a.call("r", "renewed", token)).isEqualTo("error");
    }

    @Test
    void aTwoPhaseAcquireKeepsItsPlaceOnItsConnection() throws Exception {
        start(t -> t);
        TextWire holder = connect();
        TextWire queued = connect();
        String held = holder.call("l", "tp", "0");

        assertThat(queued.call("w", "tp", "1")).isEqualTo("error_not_enqueued");
        assertThat(queued.call("e", "tp", "")).isEqualTo("queued");
        assertThat(queued.call("e", "tp", "")).isEqualTo("error_already_enqueued");
        assertThat(connect().call("w", "tp", "0")).as("the place belongs to its connection").isEqualTo("error_not_enqueued");
        assertThat(queued.call("w", "tp", "0")).isEqualTo("timeout");

        assertThat(queued.call("e", "tp", "40")).isEqualTo("queued");
        queued.send("w", "tp", "20");
        assertThat(holder.call("r", "tp", fields(held)[1])).isEqualTo("ok");
        String granted = queued.answer();
        assertThat(granted).matches(GRANT);
        assertThat(fields(granted)[2]).isEqualTo("40");

        TextWire free = connect();
        String at = free.call("e", "tp2", "");
        assertThat(at).matches("acquired [0-9a-f]{32} 33 \\d+");
        assertThat(free.call("w", "tp2", "5")).isEqualTo("ok" + at.substring("acquired".length()));
    }

    @Test
    void semaphoresGrantUpToTheirLimitAndRefuseAnotherLimit() throws Exception {
        start(t -> t);
        TextWire a = connect();
        TextWire b = connect();
        TextWire c = connect();
        String one = a.call("sl", "pool", "0 2");
        String two = b.call("sl", "pool", "0 2 5");
        assertThat(one).matches(GRANT);
        assertThat(two).matches(GRANT);
        assertThat(fields(two)[2]).isEqualTo("5");
        assertThat(c.call("sl", "pool", "0 2")).isEqualTo("timeout");
        assertThat(c.call("sl", "pool", "0 3")).isEqualTo("error_limit_mismatch");
        assertThat(c.call("sl", "pool", "0 0")).isEqualTo("error");
        assertThat(a.call("r", "pool", fields(one)[1])).as("a semaphore's token is not a lock's").isEqualTo("error");
        assertThat(a.call("sn", "pool", fields(one)[1])).matches("ok 33 " + fields(one)[3]);
        assertThat(c.call("se", "pool", "2")).isEqualTo("queued");
        c.send("sw", "pool", "20");
        assertThat(a.call("sr", "pool", fields(one)[1])).isEqualTo("ok");
        assertThat(c.answer()).matches(GRANT);
        assertThat(connect().call("l", "pool", "0")).isEqualTo("error_type_mismatch");
    }

    @Test
    void readersShareAndAWriterWaitsForThem() throws Exception {
        start(t -> t);
        TextWire r1 = connect();
        TextWire r2 = connect();
        TextWire w = connect();
        String read1 = r1.call("rl", "doc", "0");
        String read2 = r2.call("rl", "doc", "0");
        assertThat(read1).matches(GRANT);
        assertThat(read2).matches(GRANT);
        assertThat(w.call("wl", "doc", "0")).isEqualTo("timeout");
        assertThat(r1.call("rn", "doc", fields(read1)[1])).startsWith("ok 33 ");
        assertThat(r1.call("wr", "doc", fields(read1)[1])).as("a read hold is not released as a write hold").isEqualTo("error");
        w.send("wl", "doc", "20");
        assertThat(r1.call("rr", "doc", fields(read1)[1])).isEqualTo("ok");
        assertThat(r2.call("rr", "doc", fields(read2)[1])).isEqualTo("ok");
        String write = w.answer();
        assertThat(write).matches(GRANT);
        assertThat(r1.call("rl", "doc", "0")).isEqualTo("timeout");
        assertThat(w.call("wr", "doc", fields(write)[1])).isEqualTo("ok");
    }

    @Test
    void anElectionWinnerGetsTheGrantThenAPushAndResignsWithItsToken() throws Exception {
        start(t -> t);
        TextWire a = connect();
        TextWire b = connect();
        String won = a.call("elect", "boss", "0");
        assertThat(won).matches(GRANT);
        assertThat(a.push(Duration.ofSeconds(5))).isEqualTo("leader elected boss");
        assertThat(b.call("elect", "boss", "0")).isEqualTo("timeout");
        assertThat(a.call("n", "boss", fields(won)[1])).startsWith("ok 33 " + fields(won)[3]);
        b.send("elect", "boss", "20");
        assertThat(a.call("resign", "boss", fields(won)[1])).isEqualTo("ok");
        assertThat(b.answer()).matches(GRANT);
        assertThat(b.push(Duration.ofSeconds(5))).isEqualTo("leader elected boss");
    }

    @Test
    void aClosedConnectionReleasesItsHoldsAndEndsItsWaits() throws Exception {
        start(t -> t);
        TextWire holder = connect();
        TextWire waiter = connect();
        holder.call("l", "ar", "0");
        waiter.send("l", "ar", "30");
        Await.until("the waiter queued", Duration.ofSeconds(10),
                () -> cluster.server(0).member().locks().describe("ar").waiters().size() == 1);
        waiter.close();
        Await.until("the closed waiter's wait ended", Duration.ofSeconds(10),
                () -> cluster.server(0).member().locks().describe("ar").waiters().isEmpty());
        holder.close();
        Await.until("the closed holder's lock released", Duration.ofSeconds(10),
                () -> cluster.server(0).member().locks().describe("ar") == null);
        assertThat(connect().call("l", "ar", "0")).matches(GRANT);
    }

    @Test
    void withoutAutoReleaseAHoldOutlivesItsConnectionAndItsTokenWorksOnAnother() throws Exception {
        start(t -> t.withAutoReleaseOnDisconnect(false));
        TextWire first = connect();
        String grant = first.call("l", "kept", "0 30");
        first.close();
        TextWire second = connect();
        assertThat(second.call("l", "kept", "0")).isEqualTo("timeout");
        assertThat(second.call("n", "kept", fields(grant)[1] + " 30")).isEqualTo("ok 30 " + fields(grant)[3]);
        assertThat(second.call("r", "kept", fields(grant)[1])).isEqualTo("ok");
        assertThat(second.call("l", "kept", "0")).matches(GRANT);
    }

    @Test
    void statsShowsHoldersByTheirTokensHashAndTheRaftView() throws Exception {
        start(t -> t);
        TextWire a = connect();
        String grant = a.call("l", "shown", "0");
        a.call("sl", "pool", "0 3");
        String stats = a.call("stats", "_", "_");
        assertThat(stats).startsWith("ok {");
        com.fasterxml.jackson.databind.JsonNode json = new com.fasterxml.jackson.databind.ObjectMapper().readTree(stats.substring(3));
        assertThat(json.get("connections").asInt()).isEqualTo(1);
        com.fasterxml.jackson.databind.JsonNode lock = json.get("locks").get(0);
        assertThat(lock.get("key").asText()).isEqualTo("shown");
        assertThat(lock.get("owner_conn_id").asText()).startsWith("text:").doesNotContain(fields(grant)[1].substring(0, 16));
        assertThat(lock.get("lease_expires_in_s").asLong()).isBetween(30L, 33L);
        assertThat(lock.get("waiters").asInt()).isZero();
        assertThat(json.get("semaphores").get(0).get("limit").asInt()).isEqualTo(3);
        assertThat(json.get("cluster").get("role").asText()).isEqualTo("leader");
        assertThat(json.get("cluster").get("commit_index").asLong()).isPositive();
        assertThat(stats).doesNotContain(fields(grant)[1]);
    }

    @Test
    void badInputIsAnsweredErrorAndTheConnectionStaysUsable() throws Exception {
        start(t -> t);
        TextWire a = connect();
        assertThat(a.call("nope", "k", "")).isEqualTo("error");
        assertThat(a.call("l", "k", "soon")).isEqualTo("error");
        assertThat(a.call("l", "k", "-1")).isEqualTo("error");
        assertThat(a.call("l", "k", "1 0")).as("a lease of 0 s").isEqualTo("error");
        assertThat(a.call("l", "k", "1 2 3")).isEqualTo("error");
        assertThat(a.call("l", "", "1")).isEqualTo("error");
        assertThat(a.call("l", "a key", "1")).isEqualTo("error");
        assertThat(a.call("l", "k", "9223372036854775807")).as("seconds beyond 64-bit nanoseconds").isEqualTo("error");
        assertThat(a.call("r", "k", "")).isEqualTo("error");
        assertThat(a.call("auth", "_", "secret")).as("auth without a configured token").isEqualTo("error");
        assertThat(a.call("ping", "_", "_")).isEqualTo("ok");
        a.sendRaw("l\r\nwith-cr\r\n0\r\n");
        assertThat(a.answer()).as("CRs are removed").matches(GRANT);
        assertThat(cluster.server(0).member().locks().describe("with-cr")).isNotNull();
    }

    @Test
    void requestsSentAheadAreAnsweredInOrder() throws Exception {
        start(t -> t);
        TextWire a = connect();
        StringBuilder batch = new StringBuilder();
        for (int i = 0; i < 100; i++) {
            batch.append("l\np").append(i).append("\n0\n");
        }
        a.sendRaw(batch.toString());
        for (int i = 0; i < 100; i++) {
            assertThat(a.answer()).matches(GRANT);
            assertThat(cluster.server(0).member().locks().describe("p" + i)).isNotNull();
        }
    }

    @Test
    void anOversizedLineIsAnsweredErrorAndTheConnectionClosedWithNothingLost() throws Exception {
        start(t -> t);
        TextWire holder = connect();
        holder.call("l", "safe", "0");
        TextWire a = connect();
        a.sendRaw("l\n" + "k".repeat(300) + "\n0\n");
        assertThat(a.answer()).isEqualTo("error");
        assertThat(a.closedWithin(Duration.ofSeconds(5))).isTrue();

        TextWire blob = connect();
        byte[] binary = new byte[100_000];
        new java.util.Random(7).nextBytes(binary);
        blob.sendBytes(binary);
        assertThat(blob.closedWithin(Duration.ofSeconds(10))).isTrue();
        assertThat(cluster.server(0).member().locks().describe("safe")).as("the other connection's hold").isNotNull();
        assertThat(holder.call("ping", "_", "_")).isEqualTo("ok");
    }

    @Test
    void dflockdLimitsApplyToTextRequests() throws Exception {
        start(t -> t.withMaxLocks(2).withMaxWaiters(1));
        TextWire a = connect();
        assertThat(a.call("l", "m1", "0")).matches(GRANT);
        assertThat(a.call("sl", "m2", "0 1")).matches(GRANT);
        assertThat(a.call("l", "m3", "0")).isEqualTo("error_max_locks");
        TextWire b = connect();
        b.send("l", "m1", "30");
        Await.until("one waiter", Duration.ofSeconds(10), () -> cluster.server(0).member().locks().describe("m1").waiters().size() == 1);
        assertThat(connect().call("l", "m1", "5")).isEqualTo("error_max_waiters");
    }

    @Test
    void aFloodOfConnectionsPastMaxConnectionsIsRefusedAndTheOthersServed() throws Exception {
        cluster = TenureCluster.builder().members(1).dataDir(dir.resolve("member"))
                .config(c -> c.withLimits(c.limits().withMaxConnections(3))).start();
        List<TextWire> open = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            open.add(connect());
            assertThat(open.get(i).call("ping", "_", "_")).isEqualTo("ok");
        }
        for (int i = 0; i < 20; i++) {
            TextWire refused = connect();
            refused.sendRaw("ping\n_\n_\n");
            assertThat(refused.closedWithin(Duration.ofSeconds(5))).isTrue();
        }
        assertThat(open.get(0).call("l", "still", "0")).matches(GRANT);
        open.get(1).close();
        Await.until("the closed connection's slot free", Duration.ofSeconds(10), () -> {
            try (TextWire again = TextWire.open(cluster.textPort(0))) {
                return again.call("ping", "_", "_").equals("ok");
            } catch (IOException closed) {
                return false;
            }
        });
    }

    @Test
    void aClientThatNeverReadsItsAnswersIsDroppedAfterTheWriteTimeoutAndCostsNoMemory() throws Exception {
        start(t -> t.withWriteTimeout(Duration.ofSeconds(1)));
        TextWire other = connect();
        for (int i = 0; i < 200; i++) {
            assertThat(other.call("l", "big/" + "x".repeat(100) + "/" + i, "0")).matches(GRANT);
        }
        java.net.Socket deaf = new java.net.Socket();
        deaf.setReceiveBufferSize(4096);
        deaf.connect(new java.net.InetSocketAddress("127.0.0.1", cluster.textPort(0)), 5_000);
        try {
            // Each stats answer is tens of KiB; the client never reads one.
            byte[] request = "stats\n_\n_\n".getBytes(StandardCharsets.UTF_8);
            for (int i = 0; i < 500; i++) {
                deaf.getOutputStream().write(request);
            }
            deaf.getOutputStream().flush();
            Await.until("the deaf connection dropped", Duration.ofSeconds(20),
                    () -> cluster.server(0).metrics().scrape().contains("text_connections 1.0"));
            assertThat(other.call("ping", "_", "_")).isEqualTo("ok");
        } finally {
            deaf.close();
        }
    }

    @Test
    void aSilentConnectionIsClosedAfterTheReadTimeoutButNotWhileItsRequestWaits() throws Exception {
        // Without auto-release, so that the holder's own silence (it is closed too) leaves its hold.
        start(t -> t.withReadTimeout(Duration.ofSeconds(1)).withAutoReleaseOnDisconnect(false));
        TextWire idle = connect();
        assertThat(idle.closedWithin(Duration.ofSeconds(10))).isTrue();

        TextWire half = connect();
        half.sendRaw("l\nhalf\n");
        assertThat(half.closedWithin(Duration.ofSeconds(10))).as("a half-sent request").isTrue();

        TextWire holder = connect();
        String held = holder.call("l", "slow", "0");
        TextWire waiter = connect();
        waiter.send("l", "slow", "3");
        assertThat(waiter.answer()).as("a 3 s wait outlives the 1 s read timeout").isEqualTo("timeout");
        assertThat(fields(held)).hasSize(4);
    }

    @Test
    void withAnAuthTokenTheFirstRequestMustGiveIt() throws Exception {
        start(t -> t.withAuthToken("s3cret"));
        TextWire none = connect();
        assertThat(none.call("l", "k", "0")).isEqualTo("error_auth");
        assertThat(none.closedWithin(Duration.ofSeconds(5))).isTrue();

        TextWire wrong = connect();
        assertThat(wrong.call("auth", "_", "s3cre")).isEqualTo("error_auth");
        assertThat(wrong.closedWithin(Duration.ofSeconds(5))).isTrue();

        TextWire right = connect();
        assertThat(right.call("auth", "_", "s3cret")).isEqualTo("ok");
        assertThat(right.call("l", "k", "0")).matches(GRANT);
        assertThat(cluster.server(0).metrics().scrape()).containsPattern("text_auth_failures_total(\\{[^}]*\\})? 1\\.0");
    }

    @Test
    void theTextPortSpeaksTls() throws Exception {
        PeerTls tls = new TestCertificates(dir.resolve("certs"), "text-ca").member("n1");
        start(t -> t.withTls(tls.certFile(), tls.keyFile()));
        KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
        trust.load(null, null);
        try (InputStream ca = new FileInputStream(tls.trustedCaFile().toFile())) {
            trust.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(ca));
        }
        TrustManagerFactory trustManagers = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trustManagers.init(trust);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, trustManagers.getTrustManagers(), null);
        SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket("127.0.0.1", cluster.textPort(0));
        socket.setEnabledProtocols(new String[] {"TLSv1.2"});
        try (TextWire wire = new TextWire(socket)) {
            assertThat(wire.call("l", "tls", "0")).matches(GRANT);
            assertThat(socket.getSession().getProtocol()).isEqualTo("TLSv1.2");
        }
        TextWire plain = connect();
        plain.sendRaw("ping\n_\n_\n");
        assertThat(plain.closedWithin(Duration.ofSeconds(10))).as("plain text on the TLS port").isTrue();
    }

    @Test
    void ncAcquiresFromAShell() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.isExecutable(Path.of("/usr/bin/nc")) || Files.isExecutable(Path.of("/bin/nc")),
                "nc is not installed (run-tests installs netcat-openbsd)");
        start(t -> t);
        int port = cluster.textPort(0);
        // As dflockd's users do: nc keeps the connection open until interrupted, and prints the grant.
        Process nc = new ProcessBuilder("bash", "-c", "printf 'l\\njob\\n10\\n' | exec nc 127.0.0.1 " + port).redirectErrorStream(true).start();
        try {
            java.io.BufferedReader out = new java.io.BufferedReader(new java.io.InputStreamReader(nc.getInputStream(), StandardCharsets.UTF_8));
            CompletableFuture<String> first = CompletableFuture.supplyAsync(() -> {
                try {
                    return out.readLine();
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            assertThat(first.get(20, java.util.concurrent.TimeUnit.SECONDS)).matches(GRANT);
            assertThat(cluster.server(0).member().locks().describe("job")).isNotNull();
        } finally {
            nc.destroy();
        }
        assertThat(nc.waitFor(20, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        // nc ended: so did the connection, and with it (auto-release) the hold.
        Await.until("the hold released when nc ended", Duration.ofSeconds(10),
                () -> cluster.server(0).member().locks().describe("job") == null);

        // A client that closes its sending side after a wait (nc -N) is gone, as in dflockd: its wait ends.
        TextWire holder = connect();
        holder.call("l", "busy", "0");
        Process oneShot = new ProcessBuilder("bash", "-c", "printf 'l\\nbusy\\n30\\n' | exec nc -N 127.0.0.1 " + port)
                .redirectErrorStream(true).start();
        assertThat(oneShot.waitFor(20, java.util.concurrent.TimeUnit.SECONDS)).as("nc -N ends without waiting 30 s").isTrue();
        assertThat(cluster.server(0).member().locks().describe("busy").waiters()).isEmpty();
    }
}
