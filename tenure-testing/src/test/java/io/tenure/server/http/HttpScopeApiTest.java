package io.tenure.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.tenure.core.scope.ScopeTable;
import io.tenure.proto.v1.LeaseGrantRequest;
import io.tenure.proto.v1.LeaseRevokeRequest;
import io.tenure.proto.v1.LockServiceGrpc;
import io.tenure.server.http.HttpMember.Reply;
import io.tenure.testing.Await;
import io.tenure.testing.TenureExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import static io.tenure.server.http.HttpLockApiTest.assertError;
import static io.tenure.server.http.HttpMember.await;
import static io.tenure.server.http.HttpMember.body;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The HTTP lock scope API against one real member (each test uses its own inodes and paths):
 * grants with a lease of the caller's ({@code lease_id}) and with the lease recipe
 * ({@code owner_id}, {@code ttl_ms}), waits granted in turn, shared parts, tries and timeouts,
 * deadlocks, every bad input answered 400 naming the field without a change, the lease's end,
 * describe, retries and cancels.
 */
class HttpScopeApiTest {
    private static final Duration LIMIT = Duration.ofSeconds(10);

    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.members(1);
    static final HttpMember member = HttpMember.of(tenure::cluster);

    private static long lease(String client) {
        return locks().leaseGrant(LeaseGrantRequest.newBuilder().setClientId(client).setTtlMs(30_000).build()).getId();
    }

    private static void revoke(long... leases) {
        for (long lease : leases) {
            locks().leaseRevoke(LeaseRevokeRequest.newBuilder().setId(lease).build());
        }
    }

    private static LockServiceGrpc.LockServiceBlockingStub locks() {
        return LockServiceGrpc.newBlockingStub(tenure.cluster().channel(0));
    }

    private static Map<String, Object> range(long inode, long start, long end) {
        return Map.of("range", Map.of("inode", inode, "start", start, "end", end));
    }

    private static Map<String, Object> shared(Map<String, Object> part) {
        Map<String, Object> withMode = new java.util.LinkedHashMap<>(part);
        withMode.put("mode", "shared");
        return withMode;
    }

    @SafeVarargs
    private static List<Map<String, Object>> set(Map<String, Object>... parts) {
        return List.of(parts);
    }

    private static Reply acquire(Object... fields) {
        return member.post("/v1/scopes/acquire", body(fields));
    }

    private static CompletableFuture<Reply> acquireAsync(Object... fields) {
        return member.postAsync("/v1/scopes/acquire", body(fields));
    }

    private static JsonNode granted(Reply r) {
        assertThat(r.status()).as(r.toString()).isEqualTo(200);
        return r.json();
    }

    private static JsonNode describe(String query) {
        Reply r = member.get("/v1/scopes/describe?" + query);
        assertThat(r.status()).as(r.toString()).isEqualTo(200);
        return r.json();
    }

    private static List<Long> leasesIn(JsonNode list) {
        List<Long> leases = new ArrayList<>();
        list.forEach(entry -> leases.add(entry.get("lease_id").asLong()));
        return leases;
    }

    private static void awaitWaiters(String query, int waiters) {
        Await.until(() -> "waiters of " + query + ": " + describe(query).get("waiters"), LIMIT,
                () -> describe(query).get("waiters").size() == waiters);
    }

    private static int holdCount() {
        return member.server().member().stateMachine().read(s -> s.primitive(ScopeTable.class).holdCount());
    }

    private static int waiterCount() {
        return member.server().member().stateMachine().read(s -> s.primitive(ScopeTable.class).waiterCount());
    }

    @Test
    void aRecipeGrantIsDescribedRenewedAndReleasedWithItsLease() {
        JsonNode grant = granted(acquire("owner_id", "worker-1", "ttl_ms", 10_000, "scopes", set(range(1042, 0, 4096))));
        assertThat(grant.fieldNames()).toIterable().containsExactly(
                "owner_id", "lease_id", "fencing_token", "scopes", "ttl_remaining_ms", "expires_at_ms");
        assertThat(grant.get("scopes")).hasSize(1);
        assertThat(grant.get("scopes").get(0).get("range").get("end").asLong()).isEqualTo(4096);
        assertThat(grant.get("scopes").get(0).get("mode").asText()).isEqualTo("exclusive");
        long lease = grant.get("lease_id").asLong();
        long token = grant.get("fencing_token").asLong();

        JsonNode state = describe("inode=1042&start=0&end=100");
        assertThat(state.get("holders")).hasSize(1);
        JsonNode holder = state.get("holders").get(0);
        assertThat(holder.get("lease_id").asLong()).isEqualTo(lease);
        assertThat(holder.get("owner_id").asText()).isEqualTo("worker-1");
        assertThat(holder.get("fencing_token").asLong()).isEqualTo(token);
        assertThat(state.get("waiters")).isEmpty();
        assertThat(state.get("revision").asLong()).isGreaterThanOrEqualTo(token);

        // A retried acquire whose answer was lost: the owner's grant of the same set again.
        JsonNode again = granted(acquire("owner_id", "worker-1", "ttl_ms", 10_000, "scopes", set(range(1042, 0, 4096))));
        assertThat(again.get("lease_id").asLong()).isEqualTo(lease);
        assertThat(again.get("fencing_token").asLong()).isEqualTo(token);

        Reply renewed = member.post("/v1/scopes/renew", body("owner_id", "worker-1", "lease_id", lease, "fencing_token", token));
        assertThat(renewed.status()).as(renewed.toString()).isEqualTo(200);
        assertError(member.post("/v1/scopes/renew", body("owner_id", "worker-1", "lease_id", lease, "fencing_token", token + 1)),
                409, "not_holder", "fencing_token");

        Reply released = member.post("/v1/scopes/release", body("owner_id", "worker-1", "lease_id", lease, "fencing_token", token));
        assertThat(released.status()).as(released.toString()).isEqualTo(200);
        assertThat(released.json().get("released").asBoolean()).isTrue();
        assertThat(released.json().get("granted").asInt()).isZero();
        assertThat(describe("inode=1042").get("holders")).isEmpty();
        assertThat(member.leasesOf("worker-1")).as("the recipe's lease is revoked with its last grant").isEmpty();
    }

    @Test
    void aConflictingWaitIsGrantedOnReleaseWithAHigherToken() throws Exception {
        long a = lease("a");
        JsonNode first = granted(acquire("lease_id", a, "scopes", set(range(1043, 0, 100))));
        CompletableFuture<Reply> waiting = acquireAsync("owner_id", "waiter", "ttl_ms", 10_000, "wait_ms", 30_000,
                "scopes", set(range(1043, 50, 150)));
        awaitWaiters("inode=1043", 1);
        assertThat(describe("inode=1043").get("waiters").get(0).get("owner_id").asText()).isEqualTo("waiter");

        Reply released = member.post("/v1/scopes/release", body("lease_id", a, "fencing_token", first.get("fencing_token").asLong()));
        assertThat(released.json().get("granted").asInt()).isEqualTo(1);
        JsonNode second = granted(await(waiting));
        assertThat(second.get("fencing_token").asLong()).isGreaterThan(first.get("fencing_token").asLong());
        assertThat(second.get("owner_id").asText()).isEqualTo("waiter");
        member.post("/v1/scopes/release", body("owner_id", "waiter", "lease_id", second.get("lease_id").asLong(),
                "fencing_token", second.get("fencing_token").asLong()));
        revoke(a);
    }

    @Test
    void sharedRangesCoexistAndATryIsHeldNamingTheBlockers() {
        long a = lease("reader-a");
        long b = lease("reader-b");
        long c = lease("writer-c");
        granted(acquire("lease_id", a, "scopes", set(shared(range(1044, 0, 100)))));
        granted(acquire("lease_id", b, "scopes", set(shared(range(1044, 50, 150)))));
        assertThat(leasesIn(describe("inode=1044").get("holders"))).containsExactly(a, b);

        Reply tried = acquire("lease_id", c, "scopes", set(range(1044, 60, 70)));
        assertError(tried, 409, "held", null);
        JsonNode blockers = tried.json().get("blockers");
        assertThat(leasesIn(blockers)).containsExactly(a, b);
        assertThat(blockers.get(0).get("owner_id").asText()).isEqualTo("reader-a");
        assertThat(blockers.get(0).get("holding").asBoolean()).isTrue();
        assertThat(blockers.get(0).get("part").get("mode").asText()).isEqualTo("shared");
        assertThat(tried.json().get("message").asText()).contains("reader-a").contains("reader-b");
        assertThat(describe("inode=1044").get("waiters")).as("a try never queues").isEmpty();
        revoke(a, b, c);
    }

    @Test
    void aWaitThatTimesOutIsHeldAndLeavesNothingQueued() {
        long a = lease("a");
        long b = lease("b");
        granted(acquire("lease_id", a, "scopes", set(Map.of("path", "/http/timeout"))));
        Reply timedOut = acquire("lease_id", b, "wait_ms", 200, "scopes", set(Map.of("path", "/http/timeout/file")));
        assertError(timedOut, 409, "held", null);
        assertThat(timedOut.json().get("lease_id").asLong()).isEqualTo(b);
        assertThat(leasesIn(timedOut.json().get("blockers"))).containsExactly(a);
        assertThat(describe("path=/http/timeout").get("waiters")).as("withdrawn through the log").isEmpty();

        // The recipe revokes its lease when nothing is acquired.
        assertError(acquire("owner_id", "late", "ttl_ms", 10_000, "wait_ms", 200, "scopes", set(Map.of("path", "/http/timeout"))),
                409, "held", null);
        assertThat(member.leasesOf("late")).isEmpty();
        revoke(a, b);
    }

    @Test
    void aDeadlockIsAConflictNamingBothLeasesAndQueuesNothing() throws Exception {
        long a = lease("a");
        long b = lease("b");
        granted(acquire("lease_id", a, "scopes", set(Map.of("inode", 1100))));
        granted(acquire("lease_id", b, "scopes", set(Map.of("inode", 1200))));
        CompletableFuture<Reply> aWaits = acquireAsync("lease_id", a, "wait_ms", 30_000, "scopes", set(Map.of("inode", 1200)));
        awaitWaiters("inode=1200", 1);

        Reply deadlock = acquire("lease_id", b, "wait_ms", 30_000, "scopes", set(Map.of("inode", 1100)));
        assertError(deadlock, 409, "conflict", "scopes");
        assertThat(deadlock.json().get("message").asText()).contains("deadlock").contains("lease " + a).contains("lease " + b);
        assertThat(describe("inode=1100").get("waiters")).isEmpty();

        revoke(b);
        assertThat(await(aWaits).status()).isEqualTo(200);
        revoke(a);
    }

    @Test
    void badInputIsRefusedNamingTheFieldAndChangesNothing() {
        long a = lease("a");
        int holds = holdCount();
        int waiters = waiterCount();
        assertError(acquire("lease_id", a, "scopes", set(range(1300, 10, 10))), 400, "invalid_argument", "scopes[0].range.end");
        assertError(acquire("lease_id", a, "scopes", set(Map.of("inode", 1300), range(1301, -1, 10))), 400, "invalid_argument",
                "scopes[1].range.start");
        assertError(acquire("lease_id", a, "scopes", set(Map.of("path", "/nul/a\u0000b"))), 400, "invalid_argument", "scopes[0].path");
        assertError(acquire("lease_id", a, "scopes", set(Map.of("path", "relative"))), 400, "invalid_argument", "scopes[0].path");
        assertError(acquire("lease_id", a, "scopes", set(Map.of("inode", 1300), Map.of("inode", 1300))), 400, "invalid_argument", "scopes[1]");
        assertError(acquire("lease_id", a, "scopes", set(range(1300, 0, 100), shared(range(1300, 50, 60)))), 400, "invalid_argument",
                "scopes[1]");
        assertError(acquire("lease_id", a, "scopes", set()), 400, "invalid_argument", "scopes");
        assertError(acquire("lease_id", a), 400, "invalid_argument", "scopes");
        assertError(acquire("lease_id", a, "scopes", set(Map.of("name", "jobs/a"))), 400, "invalid_argument", "scopes[0]");
        assertError(acquire("lease_id", a, "scopes", set(Map.of("inode", 1300, "path", "/x"))), 400, "invalid_argument", "scopes[0]");
        assertError(acquire("lease_id", a, "scopes", set(Map.of("inode", 1300, "mode", "both"))), 400, "invalid_argument", "scopes[0].mode");
        assertError(acquire("lease_id", a, "scopes", set(Map.of("range", Map.of("inode", 1300, "start", 0)))), 400, "invalid_argument",
                "scopes[0].range.end");
        assertError(acquire("lease_id", a, "scopes", set(Map.of("inode", "one"))), 400, "invalid_argument", "scopes[0].inode");
        assertError(acquire("lease_id", a, "scopes", "not a list"), 400, "invalid_argument", "scopes");
        assertError(acquire("lease_id", a, "wait_ms", -1, "scopes", set(Map.of("inode", 1300))), 400, "invalid_argument", "wait_ms");
        assertError(acquire("lease_id", a, "owner_id", "x", "scopes", set(Map.of("inode", 1300))), 400, "invalid_argument", "lease_id");
        assertError(acquire("scopes", set(Map.of("inode", 1300))), 400, "invalid_argument", "owner_id");
        assertError(acquire("lease_id", 987_654_321L, "scopes", set(Map.of("inode", 1300))), 404, "lease_not_found", "lease_id");
        assertError(member.post("/v1/scopes/release", body("lease_id", 987_654_321L, "fencing_token", 5)), 404, "lease_not_found", "lease_id");
        assertError(member.post("/v1/scopes/release", body("lease_id", a, "fencing_token", 5)), 409, "stale", "fencing_token");
        assertError(member.post("/v1/scopes/cancel", body("lease_id", 987_654_321L, "request_id", 5)), 404, "lease_not_found", "lease_id");
        assertError(member.get("/v1/scopes/describe?inode=1300&start=5&end=1"), 400, "invalid_argument", "end");
        assertError(member.get("/v1/scopes/describe"), 400, "invalid_argument", "scope");
        assertError(member.get("/v1/scopes/describe?path=rel"), 400, "invalid_argument", "path");

        assertThat(holdCount()).isEqualTo(holds);
        assertThat(waiterCount()).isEqualTo(waiters);
        assertThat(member.leasesOf("owner-less", "x")).isEmpty();
        granted(acquire("lease_id", a, "scopes", set(Map.of("inode", 1300), Map.of("path", "/nul"))));
        revoke(a);
    }

    @Test
    void theLeasesEndReleasesItsSetAndGrantsTheWaiter() throws Exception {
        long a = lease("a");
        JsonNode held = granted(acquire("lease_id", a, "scopes", set(Map.of("inode", 1400), Map.of("path", "/http/end"))));
        CompletableFuture<Reply> waiting = acquireAsync("owner_id", "next", "ttl_ms", 10_000, "wait_ms", 30_000,
                "scopes", set(Map.of("path", "/http/end/x")));
        awaitWaiters("path=/http/end", 1);

        revoke(a);
        JsonNode next = granted(await(waiting));
        assertThat(next.get("fencing_token").asLong()).isGreaterThan(held.get("fencing_token").asLong());
        assertThat(describe("inode=1400").get("holders")).isEmpty();
        member.post("/v1/scopes/release", body("owner_id", "next", "lease_id", next.get("lease_id").asLong(),
                "fencing_token", next.get("fencing_token").asLong()));
    }

    @Test
    void describeByPostNamesWhoWouldBlockAndAnsweredRetriesKeepTheGrant() {
        long a = lease("a");
        JsonNode first = granted(acquire("lease_id", a, "request_id", 42, "metadata", "job 9",
                "scopes", set(range(1500, 0, 100), Map.of("path", "/http/describe"))));
        JsonNode again = granted(acquire("lease_id", a, "request_id", 42, "metadata", "job 9",
                "scopes", set(range(1500, 0, 100), Map.of("path", "/http/describe"))));
        assertThat(again.get("fencing_token").asLong()).as("a retry with the same request_id").isEqualTo(first.get("fencing_token").asLong());

        Reply d = member.post("/v1/scopes/describe", body("scope", Map.of("path", "/http"), "blocked", set(shared(range(1500, 99, 200)))));
        assertThat(d.status()).as(d.toString()).isEqualTo(200);
        JsonNode state = d.json();
        assertThat(state.get("scope").get("path").asText()).isEqualTo("/http");
        assertThat(leasesIn(state.get("holders"))).containsExactly(a);
        assertThat(state.get("holders").get(0).get("metadata").asText()).isEqualTo("job 9");
        assertThat(state.get("holders").get(0).get("scopes")).hasSize(2);
        assertThat(leasesIn(state.get("blockers"))).containsExactly(a);
        assertThat(state.get("blockers").get(0).get("part").get("range").get("start").asLong()).isZero();
        revoke(a);
    }

    @Test
    void aCancelWithdrawsAWaitOfTheCallersLease() throws Exception {
        long a = lease("a");
        long b = lease("b");
        granted(acquire("lease_id", a, "scopes", set(Map.of("inode", 1600))));
        CompletableFuture<Reply> waiting = acquireAsync("lease_id", b, "request_id", 7, "wait_ms", 30_000, "scopes", set(Map.of("inode", 1600)));
        awaitWaiters("inode=1600", 1);

        Reply cancelled = member.post("/v1/scopes/cancel", body("lease_id", b, "request_id", 7));
        assertThat(cancelled.status()).as(cancelled.toString()).isEqualTo(200);
        assertThat(cancelled.json().get("acquired").asBoolean()).isFalse();
        Reply answered = await(waiting);
        assertError(answered, 409, "held", null);
        assertThat(describe("inode=1600").get("waiters")).isEmpty();
        revoke(a, b);
    }
}
