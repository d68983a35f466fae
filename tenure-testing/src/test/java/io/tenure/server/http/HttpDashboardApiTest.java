package io.tenure.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.tenure.client.Lease;
import io.tenure.client.LockHandle;
import io.tenure.client.TenureClient;
import io.tenure.proto.v1.PermissionLevel;
import io.tenure.server.http.HttpMember.Reply;
import io.tenure.testing.Await;
import io.tenure.testing.TenureCluster;
import io.tenure.testing.TenureExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;

import static io.tenure.server.http.HttpLockApiTest.assertError;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The dashboard's data against real members: the snapshot (holders with their fencing tokens,
 * waiters in queue order, leases with their time to live, the search by prefix), the event stream
 * that pushes an acquire and a hand-off, the page's files, bad input, and, with authentication on,
 * 401 without a token and nothing of a lock the caller may not read.
 */
class HttpDashboardApiTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final Duration TTL = Duration.ofSeconds(30);

    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.members(1);
    static final HttpMember member = HttpMember.of(tenure::cluster);

    /** An open event stream and its events so far, parsed. */
    private static final class Events implements AutoCloseable {
        final CompletableFuture<HttpResponse<Stream<String>>> response;
        private final List<String[]> events = new ArrayList<>();

        Events(URI uri, String token) {
            HttpRequest.Builder request = HttpRequest.newBuilder(uri).header("Accept", "text/event-stream").GET();
            if (token != null) {
                request.header("Authorization", "Bearer " + token);
            }
            response = HttpClient.newHttpClient().sendAsync(request.build(), HttpResponse.BodyHandlers.ofLines());
            response.thenAcceptAsync(r -> {
                String event = "message";
                try (Stream<String> lines = r.body()) {
                    for (String line : (Iterable<String>) lines::iterator) {
                        if (line.startsWith("event: ")) {
                            event = line.substring("event: ".length());
                        } else if (line.startsWith("data: ")) {
                            synchronized (events) {
                                events.add(new String[] {event, line.substring("data: ".length())});
                            }
                        }
                    }
                } catch (RuntimeException closed) {
                    // the test closed the stream
                }
            });
        }

        /** The latest event named {@code name}, parsed, or null. */
        JsonNode latest(String name) {
            synchronized (events) {
                for (int i = events.size() - 1; i >= 0; i--) {
                    if (events.get(i)[0].equals(name)) {
                        return parse(events.get(i)[1]);
                    }
                }
            }
            return null;
        }

        @Override
        public void close() {
            response.thenAccept(r -> r.body().close());
            response.cancel(true);
        }
    }

    private static JsonNode parse(String json) {
        try {
            return HttpMember.JSON.readTree(json);
        } catch (java.io.IOException e) {
            throw new AssertionError("not JSON: " + json, e);
        }
    }

    private static JsonNode lockIn(JsonNode snapshot, String name) {
        if (snapshot == null) {
            return null;
        }
        for (JsonNode lock : snapshot.get("locks").get("items")) {
            if (lock.get("name").asText().equals(name)) {
                return lock;
            }
        }
        return null;
    }

    private static List<String> owners(JsonNode people) {
        List<String> owners = new ArrayList<>();
        people.forEach(p -> owners.add(p.get("owner").asText()));
        return owners;
    }

    @Test
    void theSnapshotShowsHoldersTokensWaitersInOrderAndLeasesWithTheirTimeToLive() throws Exception {
        try (TenureClient client = tenure.cluster().newClient()) {
            Lease alpha = client.grantLease(TTL, "alpha");
            Lease beta = client.grantLease(TTL, "beta");
            Lease gamma = client.grantLease(TTL, "gamma");
            LockHandle held = client.acquire("snap/orders", alpha, Duration.ofSeconds(5), null);
            CompletableFuture<LockHandle> second = client.acquireAsync("snap/orders", beta, Duration.ofSeconds(30), null);
            Await.until("beta waits", WAIT, () -> client.describe("snap/orders").waiters().size() == 1);
            CompletableFuture<LockHandle> third = client.acquireAsync("snap/orders", gamma, Duration.ofSeconds(30), null);
            Await.until("gamma waits behind beta", WAIT, () -> client.describe("snap/orders").waiters().size() == 2);
            LockHandle elsewhere = client.acquire("elsewhere/x", gamma, Duration.ofSeconds(5), null);

            Reply reply = member.get("/v1/dashboard?prefix=snap/");
            assertThat(reply.status()).isEqualTo(200);
            JsonNode snapshot = reply.json();
            assertThat(snapshot.get("prefix").asText()).isEqualTo("snap/");
            JsonNode lock = lockIn(snapshot, "snap/orders");
            assertThat(lock).as(snapshot.toString()).isNotNull();
            assertThat(lock.get("mode").asText()).isEqualTo("write");
            assertThat(owners(lock.get("holders"))).containsExactly("alpha");
            assertThat(lock.get("holders").get(0).get("fencing_token").asLong()).isEqualTo(held.fencingToken());
            assertThat(lock.get("holders").get(0).get("lease_id").asLong()).isEqualTo(alpha.id());
            assertThat(owners(lock.get("waiters"))).containsExactly("beta", "gamma");
            assertThat(lockIn(snapshot, "elsewhere/x")).as("outside the prefix").isNull();
            assertThat(snapshot.get("locks").get("more").asBoolean()).isFalse();

            // The leases of what is shown, with their time to live on the member's clock.
            List<Long> leaseIds = new ArrayList<>();
            snapshot.get("leases").get("items").forEach(l -> leaseIds.add(l.get("lease_id").asLong()));
            assertThat(leaseIds).containsExactlyInAnyOrder(alpha.id(), beta.id(), gamma.id()).isSorted();
            JsonNode alphaLease = snapshot.get("leases").get("items").get(leaseIds.indexOf(alpha.id()));
            assertThat(alphaLease.get("owner").asText()).isEqualTo("alpha");
            assertThat(alphaLease.get("ttl_ms").asLong()).isEqualTo(TTL.toMillis());
            assertThat(alphaLease.get("ttl_remaining_ms").asLong()).isBetween(1L, TTL.toMillis());
            assertThat(alphaLease.get("holds").toString()).isEqualTo("[\"snap/orders\"]");

            JsonNode cluster = snapshot.get("cluster");
            assertThat(cluster.get("leader").asText()).isEqualTo(tenure.cluster().memberName(0));
            assertThat(cluster.get("term").asLong()).isPositive();
            assertThat(cluster.get("commit_index").asLong()).isGreaterThanOrEqualTo(cluster.get("applied_index").asLong()).isPositive();
            assertThat(cluster.get("members")).hasSize(1);
            assertThat(snapshot.get("totals").get("locks").asLong()).isGreaterThanOrEqualTo(2);

            // Without a prefix, every lock is there, in name order.
            JsonNode everything = member.get("/v1/dashboard").json();
            List<String> names = new ArrayList<>();
            everything.get("locks").get("items").forEach(l -> names.add(l.get("name").asText()));
            assertThat(names).contains("elsewhere/x", "snap/orders").isSorted();

            held.release();
            assertThat(second.get(10, java.util.concurrent.TimeUnit.SECONDS).fencingToken()).isGreaterThan(held.fencingToken());
            second.join().release();
            third.get(10, java.util.concurrent.TimeUnit.SECONDS).release();
            elsewhere.release();
        }
    }

    @Test
    void theEventStreamPushesAnAcquireAndItsHandOff() throws Exception {
        try (TenureClient client = tenure.cluster().newClient();
             Events events = new Events(member.uri("/v1/dashboard/events?prefix=pushed/"), null)) {
            Await.until("the first snapshot", WAIT, () -> events.latest("snapshot") != null);
            assertThat(events.response.join().statusCode()).isEqualTo(200);
            assertThat(events.response.join().headers().firstValue("Content-Type").orElse("")).startsWith("text/event-stream");
            assertThat(lockIn(events.latest("snapshot"), "pushed/job")).isNull();

            Lease first = client.grantLease(TTL, "first-worker");
            Lease next = client.grantLease(TTL, "next-worker");
            LockHandle held = client.acquire("pushed/job", first, Duration.ofSeconds(5), null);
            Await.until(() -> "the acquire pushed: " + events.latest("snapshot"), WAIT, () -> {
                JsonNode lock = lockIn(events.latest("snapshot"), "pushed/job");
                return lock != null && owners(lock.get("holders")).equals(List.of("first-worker"))
                        && lock.get("holders").get(0).get("fencing_token").asLong() == held.fencingToken();
            });
            CompletableFuture<LockHandle> waiting = client.acquireAsync("pushed/job", next, Duration.ofSeconds(30), null);
            Await.until(() -> "the waiter pushed: " + events.latest("snapshot"), WAIT, () -> {
                JsonNode lock = lockIn(events.latest("snapshot"), "pushed/job");
                return lock != null && owners(lock.get("waiters")).equals(List.of("next-worker"));
            });
            held.release();
            LockHandle handedOver = waiting.get(10, java.util.concurrent.TimeUnit.SECONDS);
            Await.until(() -> "the hand-off pushed: " + events.latest("snapshot"), WAIT, () -> {
                JsonNode lock = lockIn(events.latest("snapshot"), "pushed/job");
                return lock != null && owners(lock.get("holders")).equals(List.of("next-worker")) && lock.get("waiters").isEmpty()
                        && lock.get("holders").get(0).get("fencing_token").asLong() == handedOver.fencingToken();
            });
            assertThat(handedOver.fencingToken()).isGreaterThan(held.fencingToken());

            // The rates, sampled each second while a stream is open: the hand-off counted.
            Await.until(() -> "a rates sample counting the hand-off: " + events.latest("rates"), WAIT, () -> {
                Reply snapshot = member.get("/v1/dashboard?prefix=pushed/");
                for (JsonNode sample : snapshot.json().get("rates").get("samples")) {
                    if (sample.get("hand_offs_per_s").asDouble() > 0 && sample.get("grants_per_s").asDouble() > 0) {
                        return true;
                    }
                }
                return false;
            });
            assertThat(events.latest("rates")).as("a rates event").isNotNull();
            handedOver.release();
        }
        // The client went: its stream ends at its next write, and with the last stream the sampling stops.
        long[] latest = {-1, System.nanoTime()};
        Await.every(Duration.ofMillis(100)).until("no rates sample taken for 2.5 s once the stream closed", WAIT, () -> {
            JsonNode samples = member.get("/v1/dashboard").json().get("rates").get("samples");
            long at = samples.isEmpty() ? 0 : samples.get(samples.size() - 1).get("at_ms").asLong();
            if (at != latest[0]) {
                latest[0] = at;
                latest[1] = System.nanoTime();
                return false;
            }
            return System.nanoTime() - latest[1] > Duration.ofMillis(2_500).toNanos();
        });
    }

    @Test
    void badInputIsRefusedNamingTheField() {
        assertError(member.get("/v1/dashboard?prefix=" + "x".repeat(1025)), 400, "invalid_argument", "prefix");
        assertError(member.get("/v1/dashboard/events"), 400, "invalid_argument", "Accept");
        assertError(member.get("/v1/dashboard/events?prefix=" + "x".repeat(1025)), 400, "invalid_argument", "prefix");
        assertError(member.get("/ui/secrets.txt"), 404, "unknown_route", null);
    }

    @Test
    void thePageIsServedFromTheJarWithItsContentTypes() {
        Reply page = member.get("/ui");
        assertThat(page.status()).isEqualTo(200);
        assertThat(page.raw().headers().firstValue("Content-Type").orElse("")).startsWith("text/html");
        assertThat(page.raw().headers().firstValue("Content-Security-Policy").orElse("")).contains("default-src 'none'");
        assertThat(page.raw().body()).contains("<title>Tenure dashboard</title>").contains("/ui/dashboard.js");
        assertThat(member.get("/ui/").raw().body()).isEqualTo(page.raw().body());
        Reply script = member.get("/ui/dashboard.js");
        assertThat(script.raw().headers().firstValue("Content-Type").orElse("")).startsWith("text/javascript");
        assertThat(script.raw().body()).contains("/v1/dashboard/events");
        assertThat(member.get("/ui/dashboard.css").raw().headers().firstValue("Content-Type").orElse("")).startsWith("text/css");
    }

    /** With authentication on: 401 without a token; a reader of team-a/ sees team-a's lock and nothing of team-b's. */
    @Test
    void withAuthenticationOnOnlyWhatTheCallerMayReadIsShown() throws Exception {
        try (TenureCluster cluster = TenureCluster.start(1)) {
            String rootToken;
            String readerToken;
            try (TenureClient anonymous = cluster.newClient()) {
                anonymous.auth().addUser("admin", "admin password");
                anonymous.auth().grantRole("admin", "root");
                anonymous.auth().addRole("team-a-reader");
                anonymous.auth().grantPermission("team-a-reader", "lock", "team-a/", PermissionLevel.READ);
                anonymous.auth().addUser("reader", "reader password");
                anonymous.auth().grantRole("reader", "team-a-reader");
                anonymous.auth().enable();
                rootToken = anonymous.auth().authenticate("admin", "admin password", Duration.ofHours(1));
                readerToken = anonymous.auth().authenticate("reader", "reader password", Duration.ofHours(1));
            }
            try (TenureClient root = TenureClient.builder().endpoints(cluster.endpoints()).token(rootToken).build()) {
                Lease a = root.grantLease(TTL, "team-a-worker");
                Lease b = root.grantLease(TTL, "team-b-worker");
                root.acquire("team-a/job", a, Duration.ofSeconds(5), null);
                root.acquire("team-b/job", b, Duration.ofSeconds(5), null);
                String base = cluster.httpEndpoint(0);
                HttpClient http = HttpClient.newHttpClient();

                HttpResponse<String> anonymousSnapshot = http.send(HttpRequest.newBuilder(URI.create(base + "/v1/dashboard")).build(),
                        HttpResponse.BodyHandlers.ofString());
                assertThat(anonymousSnapshot.statusCode()).isEqualTo(401);
                assertThat(anonymousSnapshot.headers().firstValue("WWW-Authenticate").orElse("")).startsWith("Bearer");
                assertThat(anonymousSnapshot.body()).contains("\"error\":\"unauthenticated\"");
                HttpResponse<String> anonymousStream = http.send(HttpRequest.newBuilder(URI.create(base + "/v1/dashboard/events"))
                        .header("Accept", "text/event-stream").build(), HttpResponse.BodyHandlers.ofString());
                assertThat(anonymousStream.statusCode()).isEqualTo(401);
                assertThat(http.send(HttpRequest.newBuilder(URI.create(base + "/ui")).build(), HttpResponse.BodyHandlers.ofString())
                        .statusCode()).as("the page itself holds no data").isEqualTo(200);

                HttpResponse<String> asReader = http.send(HttpRequest.newBuilder(URI.create(base + "/v1/dashboard"))
                        .header("Authorization", "Bearer " + readerToken).build(), HttpResponse.BodyHandlers.ofString());
                assertThat(asReader.statusCode()).isEqualTo(200);
                JsonNode readerView = parse(asReader.body());
                assertThat(lockIn(readerView, "team-a/job")).isNotNull();
                assertThat(asReader.body()).doesNotContain("team-b").doesNotContain(Long.toString(b.id()));
                assertThat(readerView.has("totals")).as("totals count what the reader may not read").isFalse();
                assertThat(readerView.get("leases").get("items")).hasSize(1);
                assertThat(readerView.get("leases").get("items").get(0).get("lease_id").asLong()).isEqualTo(a.id());

                HttpResponse<String> asRoot = http.send(HttpRequest.newBuilder(URI.create(base + "/v1/dashboard"))
                        .header("Authorization", "Bearer " + rootToken).build(), HttpResponse.BodyHandlers.ofString());
                JsonNode rootView = parse(asRoot.body());
                assertThat(lockIn(rootView, "team-a/job")).isNotNull();
                assertThat(lockIn(rootView, "team-b/job")).isNotNull();
                assertThat(rootView.get("totals").get("locks").asLong()).isEqualTo(2);

                try (Events events = new Events(URI.create(base + "/v1/dashboard/events"), readerToken)) {
                    Await.until("the reader's first snapshot", WAIT, () -> events.latest("snapshot") != null);
                    assertThat(lockIn(events.latest("snapshot"), "team-a/job")).isNotNull();
                    assertThat(events.latest("snapshot").toString()).doesNotContain("team-b");
                }
            }
        }
    }
}
