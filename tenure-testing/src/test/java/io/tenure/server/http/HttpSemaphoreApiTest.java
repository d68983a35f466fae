package io.tenure.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tenure.core.semaphore.SemaphoreTable;
import io.tenure.server.http.HttpMember.Reply;
import io.tenure.testing.Await;
import io.tenure.testing.TenureExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

import static io.tenure.server.http.HttpLockApiTest.assertError;
import static io.tenure.server.http.HttpMember.await;
import static io.tenure.server.http.HttpMember.body;
import static io.tenure.server.http.HttpMember.claim;
import static io.tenure.server.http.HttpMember.encoded;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The HTTP semaphore API against one real member (each test uses its own semaphore names): grants,
 * FIFO hand-off, refusals, renew and release, and every bad input answered without a change.
 */
class HttpSemaphoreApiTest {
    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.members(1);
    static final HttpMember member = HttpMember.of(tenure::cluster);

    private static String path(String semaphore, String action) {
        return "/v1/semaphores/" + encoded(semaphore) + "/" + action;
    }

    private static Reply acquire(String semaphore, String owner, int limit, int permits, long waitMs) {
        return member.post(path(semaphore, "acquire"), acquireBody(owner, limit, permits, waitMs));
    }

    private static CompletableFuture<Reply> acquireAsync(String semaphore, String owner, int limit, int permits, long waitMs) {
        return member.postAsync(path(semaphore, "acquire"), acquireBody(owner, limit, permits, waitMs));
    }

    private static String acquireBody(String owner, int limit, int permits, long waitMs) {
        return body("owner_id", owner, "ttl_ms", 10_000, "limit", limit, "permits", permits, "wait_ms", waitMs);
    }

    private static JsonNode granted(Reply r) {
        assertThat(r.status()).as(r.toString()).isEqualTo(200);
        return r.json();
    }

    private static Reply release(JsonNode grant) {
        return member.post(path(grant.get("semaphore").asText(), "release"), claim(grant));
    }

    private static Reply renew(JsonNode grant) {
        return member.post(path(grant.get("semaphore").asText(), "renew"), claim(grant));
    }

    private static JsonNode state(String semaphore) {
        return member.state("semaphores", semaphore);
    }

    private static List<String> waitersOf(String semaphore) {
        return member.waiters("semaphores", semaphore);
    }

    private static int semaphoreCount() {
        return member.server().member().stateMachine().read(s -> s.primitive(SemaphoreTable.class).semaphoreCount());
    }

    @Test
    void acquireAnswersTheGrantAndGetDescribesHoldersAndWaiters() {
        long before = System.currentTimeMillis();
        JsonNode grant = granted(acquire("pools/gpu", "worker-1", 3, 2, 0));

        assertThat(grant.fieldNames()).toIterable().containsExactly(
                "semaphore", "owner_id", "lease_id", "fencing_token", "permits", "ttl_remaining_ms", "expires_at_ms");
        assertThat(grant.get("semaphore").asText()).isEqualTo("pools/gpu");
        assertThat(grant.get("owner_id").asText()).isEqualTo("worker-1");
        assertThat(grant.get("lease_id").asLong()).isPositive();
        assertThat(grant.get("fencing_token").asLong()).isPositive();
        assertThat(grant.get("permits").asInt()).isEqualTo(2);
        assertThat(grant.get("ttl_remaining_ms").asLong()).isBetween(5_000L, 10_000L);
        assertThat(grant.get("expires_at_ms").asLong()).isBetween(before + 5_000, System.currentTimeMillis() + 10_000);

        JsonNode state = state("pools/gpu");
        assertThat(state.fieldNames()).toIterable().containsExactly(
                "semaphore", "limit", "available", "holders", "waiters", "create_revision", "version", "idle_since_revision", "revision");
        assertThat(state.get("semaphore").asText()).isEqualTo("pools/gpu");
        assertThat(state.get("limit").asInt()).isEqualTo(3);
        assertThat(state.get("available").asInt()).isEqualTo(1);
        assertThat(state.get("holders")).hasSize(1);
        JsonNode holder = state.get("holders").get(0);
        assertThat(holder.fieldNames()).toIterable().containsExactly("lease_id", "owner_id", "permits", "fencing_token");
        assertThat(holder.get("lease_id").asLong()).isEqualTo(grant.get("lease_id").asLong());
        assertThat(holder.get("owner_id").asText()).isEqualTo("worker-1");
        assertThat(holder.get("permits").asInt()).isEqualTo(2);
        assertThat(holder.get("fencing_token").asLong()).isEqualTo(grant.get("fencing_token").asLong());
        assertThat(state.get("waiters").isArray()).isTrue();
        assertThat(state.get("waiters")).isEmpty();
        assertThat(state.get("create_revision").asLong()).isEqualTo(grant.get("fencing_token").asLong());
        assertThat(state.get("version").asLong()).isEqualTo(1);
        assertThat(state.get("revision").asLong()).isGreaterThanOrEqualTo(grant.get("fencing_token").asLong());
        // The name in the path, raw or encoded, is the same semaphore.
        assertThat(member.get("/v1/semaphores/pools/gpu").json()).isEqualTo(member.get("/v1/semaphores/pools%2Fgpu").json());

        assertThat(state.get("idle_since_revision").asLong()).as("in use").isZero();
        assertThat(release(grant).status()).isEqualTo(200);
        JsonNode idle = member.get("/v1/semaphores/pools%2Fgpu").json();
        assertThat(idle.get("idle_since_revision").asLong()).as("idle, keeping its limit").isPositive();
        assertThat(idle.get("limit").asInt()).isEqualTo(state.get("limit").asInt());
        assertThat(idle.get("holders")).isEmpty();
        assertError(member.get("/v1/semaphores/pools%2Fnever-used"), 404, "not_found", null);
    }

    @Test
    void permitsDefaultToOneAndASemaphoreThatNobodyHoldsIsNotFound() {
        JsonNode grant = granted(member.post(path("default/one", "acquire"), body("owner_id", "single", "ttl_ms", 10_000, "limit", 2)));

        assertThat(grant.get("permits").asInt()).isEqualTo(1);
        assertThat(state("default/one").get("available").asInt()).isEqualTo(1);
        Reply never = member.get("/v1/semaphores/never-held");
        assertError(never, 404, "not_found", null);
        assertThat(never.json().get("message").asText()).contains("never-held");
        release(grant);
    }

    @Test
    void aWaiterGetsThePermitsWhenTheHolderReleasesInFifoOrder() throws Exception {
        JsonNode a = granted(acquire("fifo/pool", "a", 3, 2, 0));
        CompletableFuture<Reply> b = acquireAsync("fifo/pool", "b", 3, 2, 30_000);
        Await.until("b waits", Duration.ofSeconds(30), () -> waitersOf("fifo/pool").equals(List.of("b")));
        // One permit is free, and still c, behind b, waits: the queue is strictly FIFO.
        CompletableFuture<Reply> c = acquireAsync("fifo/pool", "c", 3, 1, 30_000);
        Await.until("c waits behind b", Duration.ofSeconds(30), () -> waitersOf("fifo/pool").equals(List.of("b", "c")));
        JsonNode queued = state("fifo/pool");
        assertThat(queued.get("available").asInt()).isEqualTo(1);
        JsonNode waiters = queued.get("waiters");
        assertThat(waiters.get(0).fieldNames()).toIterable().containsExactly("lease_id", "owner_id", "permits", "joined_revision");
        assertThat(waiters.get(0).get("permits").asInt()).isEqualTo(2);
        assertThat(waiters.get(1).get("permits").asInt()).isEqualTo(1);
        assertThat(waiters.get(0).get("joined_revision").asLong()).isLessThan(waiters.get(1).get("joined_revision").asLong());
        assertThat(b).isNotDone();
        assertThat(c).isNotDone();

        Reply releasedA = release(a);
        JsonNode grantB = granted(await(b));
        JsonNode grantC = granted(await(c));

        assertThat(releasedA.status()).as(releasedA.toString()).isEqualTo(200);
        assertThat(releasedA.json().fieldNames()).toIterable().containsExactly("semaphore", "released", "handed_to");
        assertThat(releasedA.json().get("released").asBoolean()).isTrue();
        assertThat(releasedA.json().get("handed_to").asInt()).as("b's two permits and c's one fit in the three").isEqualTo(2);
        assertThat(grantB.get("owner_id").asText()).isEqualTo("b");
        assertThat(grantB.get("permits").asInt()).isEqualTo(2);
        assertThat(grantC.get("permits").asInt()).isEqualTo(1);
        assertThat(grantB.get("fencing_token").asLong()).isGreaterThan(a.get("fencing_token").asLong());
        assertThat(grantC.get("fencing_token").asLong()).isGreaterThan(grantB.get("fencing_token").asLong());
        assertThat(grantB.get("lease_id").asLong()).isEqualTo(waiters.get(0).get("lease_id").asLong());
        JsonNode after = state("fifo/pool");
        assertThat(after.get("available").asInt()).isZero();
        assertThat(after.get("waiters")).isEmpty();
        assertThat(after.get("holders")).extracting(h -> h.get("owner_id").asText()).containsExactly("b", "c");

        assertThat(release(grantB).json().get("handed_to").asInt()).isZero();
        assertThat(release(grantC).status()).isEqualTo(200);
        assertThat(state("fifo/pool").get("idle_since_revision").asLong()).isPositive();
    }

    @Test
    void tooFewPermitsWhenTheWaitEndsIsHeldWithThePermitsFreeAndTheWaitersAndLeavesNoLease() throws Exception {
        JsonNode holder = granted(acquire("busy/pool", "holder", 3, 3, 0));

        Reply timedOut = acquire("busy/pool", "impatient", 3, 1, 300);

        assertError(timedOut, 409, "held", null);
        JsonNode refusal = timedOut.json();
        assertThat(refusal.fieldNames()).toIterable().containsExactly(
                "error", "message", "semaphore", "limit", "available", "waiters", "recommended_retry_ms");
        assertThat(refusal.get("semaphore").asText()).isEqualTo("busy/pool");
        assertThat(refusal.get("available").asInt()).isZero();
        assertThat(refusal.get("waiters").asInt()).isZero();
        assertThat(refusal.get("message").asText()).contains("0 of 3 permits free");
        // The holder's remaining TTL, with nobody queued.
        assertThat(refusal.get("recommended_retry_ms").asLong()).isBetween(1_000L, 10_000L);
        assertThat(waitersOf("busy/pool")).isEmpty();
        assertThat(member.leasesOf("impatient")).as("the refused acquire's lease is revoked").isEmpty();

        CompletableFuture<Reply> queued = acquireAsync("busy/pool", "queued", 3, 2, 60_000);
        Await.until("queued waits", Duration.ofSeconds(30), () -> waitersOf("busy/pool").equals(List.of("queued")));
        Reply tried = acquire("busy/pool", "impatient", 3, 1, 0);

        assertError(tried, 409, "held", null);
        assertThat(tried.json().get("waiters").asInt()).isEqualTo(1);
        assertThat(tried.json().get("message").asText()).contains("1 waiting");
        assertThat(tried.json().get("recommended_retry_ms").asLong()).isGreaterThan(refusal.get("recommended_retry_ms").asLong());
        assertThat(member.leasesOf("impatient")).isEmpty();

        release(holder);
        JsonNode next = granted(await(queued));
        assertThat(release(next).status()).isEqualTo(200);
    }

    @Test
    void renewExtendsTheLeaseOfTheGrant() {
        JsonNode grant = granted(member.post(path("renew/pool", "acquire"),
                body("owner_id", "renewer", "ttl_ms", 3_000, "limit", 4, "permits", 3)));
        long lease = grant.get("lease_id").asLong();
        Await.until("the lease's remaining TTL drops below 2.4 s", Duration.ofSeconds(10),
                () -> member.get("/v1/leases/" + lease).json().get("ttl_remaining_ms").asLong() < 2_400);

        Reply renewed = renew(grant);

        assertThat(renewed.status()).as(renewed.toString()).isEqualTo(200);
        JsonNode r = renewed.json();
        assertThat(r.fieldNames()).toIterable().containsExactly(
                "semaphore", "owner_id", "lease_id", "fencing_token", "permits", "ttl_remaining_ms", "expires_at_ms");
        assertThat(r.get("semaphore").asText()).isEqualTo("renew/pool");
        assertThat(r.get("lease_id").asLong()).isEqualTo(lease);
        assertThat(r.get("fencing_token").asLong()).isEqualTo(grant.get("fencing_token").asLong());
        assertThat(r.get("permits").asInt()).isEqualTo(3);
        assertThat(r.get("ttl_remaining_ms").asLong()).isGreaterThan(2_400);
        release(grant);
    }

    @Test
    void renewByAnythingButTheHolderIsRefusedAndChangesNothing() {
        JsonNode grant = granted(acquire("renew/guarded", "owner", 2, 1, 0));
        JsonNode other = granted(acquire("renew/other", "owner-2", 2, 1, 0));
        long lease = grant.get("lease_id").asLong();
        long token = grant.get("fencing_token").asLong();
        String renew = path("renew/guarded", "renew");
        JsonNode before = withoutRevision(state("renew/guarded"));

        Reply staleToken = member.post(renew, body("owner_id", "owner", "lease_id", lease, "fencing_token", token + 1));
        Reply otherOwner = member.post(renew, body("owner_id", "intruder", "lease_id", lease, "fencing_token", token));
        Reply unknownLease = member.post(renew, body("owner_id", "owner", "lease_id", 12345, "fencing_token", token));
        Reply otherSemaphore = member.post(path("renew/other", "renew"), body("owner_id", "owner", "lease_id", lease, "fencing_token", token));
        Reply notASemaphore = member.post(path("renew/nothing", "renew"), body("owner_id", "owner", "lease_id", lease, "fencing_token", token));

        assertError(staleToken, 409, "not_holder", "fencing_token");
        assertThat(staleToken.json().get("message").asText()).contains("holds it with token " + token);
        assertError(otherOwner, 409, "not_holder", "owner_id");
        assertError(unknownLease, 409, "expired", "lease_id");
        assertError(otherSemaphore, 409, "not_holder", "lease_id");
        assertError(notASemaphore, 409, "not_holder", "lease_id");
        assertThat(withoutRevision(state("renew/guarded"))).isEqualTo(before);
        release(grant);
        release(other);
    }

    @Test
    void releaseEndsTheAcquiresLeaseAndARetriedReleaseSucceedsAgain() {
        JsonNode grant = granted(acquire("release/twice", "releaser", 5, 2, 0));
        long lease = grant.get("lease_id").asLong();

        Reply first = release(grant);
        Reply retry = release(grant);

        assertThat(first.status()).as(first.toString()).isEqualTo(200);
        assertThat(first.json().get("semaphore").asText()).isEqualTo("release/twice");
        assertThat(first.json().get("released").asBoolean()).isTrue();
        assertThat(first.json().get("handed_to").asInt()).isZero();
        assertThat(retry.status()).as(retry.toString()).isEqualTo(200);
        assertThat(retry.json()).isEqualTo(first.json());
        assertError(member.get("/v1/leases/" + lease), 404, "lease_not_found", "lease_id");
        assertThat(member.leasesOf("releaser")).isEmpty();
    }

    @Test
    void releaseByAnotherOwnerOrWithAStaleTokenIsRefusedAndChangesNothing() {
        JsonNode grant = granted(acquire("release/guarded", "owner", 2, 1, 0));
        long lease = grant.get("lease_id").asLong();
        long token = grant.get("fencing_token").asLong();
        JsonNode before = withoutRevision(state("release/guarded"));

        Reply otherOwner = member.post(path("release/guarded", "release"), body("owner_id", "mallory", "lease_id", lease,
                "fencing_token", token));
        Reply staleToken = member.post(path("release/guarded", "release"), body("owner_id", "owner", "lease_id", lease,
                "fencing_token", token - 1));
        Reply endedLease = member.post(path("release/guarded", "release"), body("owner_id", "owner", "lease_id", 424242,
                "fencing_token", token));

        assertError(otherOwner, 409, "stale", "owner_id");
        assertError(staleToken, 409, "stale", null);
        assertThat(staleToken.json().get("message").asText()).contains("is stale for semaphore 'release/guarded'");
        assertError(endedLease, 409, "stale", "lease_id");
        assertThat(withoutRevision(state("release/guarded"))).isEqualTo(before);
        assertThat(member.leasesOf("owner")).containsExactly(lease);
        release(grant);
    }

    @Test
    void aRetriedAcquireOfTheHoldingOwnerGetsTheSameGrantAndNoSecondLease() {
        JsonNode first = granted(acquire("retry/pool", "retrier", 4, 2, 0));

        Reply again = acquire("retry/pool", "retrier", 4, 2, 0);
        Reply otherPermits = acquire("retry/pool", "retrier", 4, 3, 0);

        assertThat(granted(again).get("lease_id").asLong()).isEqualTo(first.get("lease_id").asLong());
        assertThat(again.json().get("fencing_token").asLong()).isEqualTo(first.get("fencing_token").asLong());
        assertError(otherPermits, 409, "conflict", "permits");
        assertThat(otherPermits.json().get("message").asText()).contains("already holds 2 permits", "not 3");
        assertThat(member.leasesOf("retrier")).hasSize(1);
        JsonNode state = state("retry/pool");
        assertThat(state.get("holders")).hasSize(1);
        assertThat(state.get("available").asInt()).isEqualTo(2);
        release(first);
    }

    @Test
    void everyBadInputIsRefusedNamingTheFieldAndChangesNothing() {
        JsonNode holder = granted(acquire("bad/pool", "holder", 3, 1, 0));
        JsonNode lock = member.acquire("bad/lock", "lock-holder", 10_000, 0).json();
        JsonNode semaphoreBefore = withoutRevision(state("bad/pool"));
        JsonNode lockBefore = member.get("/v1/locks/bad%2Flock").json();
        Set<Long> leasesBefore = member.leasesOf("holder", "lock-holder", "prober");
        int semaphoresBefore = semaphoreCount();
        String acquire = path("bad/pool", "acquire");

        // The limit: missing, mistyped, out of range (also beyond 32 bits), or not the live semaphore's.
        assertError(member.post(acquire, body("owner_id", "prober", "ttl_ms", 5_000)), 400, "invalid_argument", "limit");
        assertError(member.post(acquire, body("owner_id", "prober", "ttl_ms", 5_000, "limit", "3")), 400, "invalid_argument", "limit");
        assertError(member.post(acquire, body("owner_id", "prober", "ttl_ms", 5_000, "limit", 2.5)), 400, "invalid_argument", "limit");
        assertError(member.post(acquire, body("owner_id", "prober", "ttl_ms", 5_000, "limit", 0)), 400, "invalid_argument", "limit");
        assertError(member.post(acquire, body("owner_id", "prober", "ttl_ms", 5_000, "limit", -3)), 400, "invalid_argument", "limit");
        Reply overLimit = member.post(acquire, body("owner_id", "prober", "ttl_ms", 5_000, "limit", 1_000_001));
        assertError(overLimit, 400, "invalid_argument", "limit");
        assertThat(overLimit.json().get("message").asText()).contains("limit must be between 1 and 1000000, got 1000001");
        assertError(member.post(acquire, body("owner_id", "prober", "ttl_ms", 5_000, "limit", 1L << 32)), 400, "invalid_argument", "limit");
        Reply otherLimit = member.post(acquire, body("owner_id", "prober", "ttl_ms", 5_000, "limit", 5));
        assertError(otherLimit, 409, "conflict", "limit");
        assertThat(otherLimit.json().get("message").asText()).contains("has limit 3", "not 5");
        // The permits: not positive, over the limit, mistyped.
        assertError(member.post(acquire, body("owner_id", "prober", "ttl_ms", 5_000, "limit", 3, "permits", 0)),
                400, "invalid_argument", "permits");
        assertError(member.post(acquire, body("owner_id", "prober", "ttl_ms", 5_000, "limit", 3, "permits", -1)),
                400, "invalid_argument", "permits");
        Reply overPermits = member.post(acquire, body("owner_id", "prober", "ttl_ms", 5_000, "limit", 3, "permits", 4));
        assertError(overPermits, 400, "invalid_argument", "permits");
        assertThat(overPermits.json().get("message").asText()).contains("permits must not exceed the limit");
        assertError(member.post(acquire, body("owner_id", "prober", "ttl_ms", 5_000, "limit", 3, "permits", "1")),
                400, "invalid_argument", "permits");
        // The owner, the TTL and the wait, as for locks.
        assertError(member.post(acquire, body("ttl_ms", 5_000, "limit", 3)), 400, "invalid_argument", "owner_id");
        assertError(member.post(acquire, body("owner_id", "", "ttl_ms", 5_000, "limit", 3)), 400, "invalid_argument", "owner_id");
        assertError(member.post(acquire, body("owner_id", 7, "ttl_ms", 5_000, "limit", 3)), 400, "invalid_argument", "owner_id");
        assertError(member.post(acquire, body("owner_id", "prober", "limit", 3)), 400, "invalid_argument", "ttl_ms");
        assertError(member.post(acquire, body("owner_id", "prober", "ttl_ms", 0, "limit", 3)), 400, "invalid_argument", "ttl_ms");
        Reply shortTtl = member.post(acquire, body("owner_id", "prober", "ttl_ms", 500, "limit", 3));
        assertError(shortTtl, 400, "invalid_argument", "ttl_ms");
        assertThat(shortTtl.json().get("message").asText()).contains("1000");
        assertError(member.post(acquire, body("owner_id", "prober", "ttl_ms", 5_000, "limit", 3, "wait_ms", -1)),
                400, "invalid_argument", "wait_ms");
        assertError(member.post(acquire, body("owner_id", "prober", "ttl_ms", 5_000, "limit", 3, "wait_ms", LeaseRecipe.MAX_WAIT_MS + 1)),
                400, "invalid_argument", "wait_ms");
        // The name: a lock's, not UTF-8, too long.
        Reply aLock = member.post(path("bad/lock", "acquire"), body("owner_id", "prober", "ttl_ms", 5_000, "limit", 3));
        assertError(aLock, 409, "conflict", "semaphore");
        assertThat(aLock.json().get("message").asText()).contains("'bad/lock' is a lock, not a semaphore");
        // And the reverse: the lock routes on a semaphore's name.
        Reply aSemaphore = member.post("/v1/locks/bad%2Fpool/acquire", body("owner_id", "prober", "ttl_ms", 5_000));
        assertError(aSemaphore, 409, "conflict", "lock");
        assertThat(aSemaphore.json().get("message").asText()).contains("'bad/pool' is a semaphore, not a lock");
        String ok = body("owner_id", "prober", "ttl_ms", 5_000, "limit", 3);
        assertError(member.post("/v1/semaphores/%C3/acquire", ok), 400, "invalid_argument", "semaphore");
        assertError(member.post("/v1/semaphores/" + "n".repeat(1025) + "/acquire", ok), 400, "invalid_argument", "semaphore");
        assertError(member.get("/v1/semaphores/%FF"), 400, "invalid_argument", "semaphore");
        // The body and the route.
        assertError(member.post(acquire, "{\"owner_id\": "), 400, "invalid_json", null);
        assertError(member.post(path("bad/pool", "frobnicate"), ok), 404, "unknown_route", null);
        // Renew and release: the claim's fields.
        assertError(member.post(path("bad/pool", "renew"), body("owner_id", "holder", "lease_id", 0, "fencing_token", 1)),
                400, "invalid_argument", "lease_id");
        assertError(member.post(path("bad/pool", "release"), body("owner_id", "holder", "lease_id", 1)),
                400, "invalid_argument", "fencing_token");
        assertError(member.post(path("bad/pool", "release"), body("lease_id", 1, "fencing_token", 1)),
                400, "invalid_argument", "owner_id");

        assertThat(withoutRevision(state("bad/pool"))).isEqualTo(semaphoreBefore);
        JsonNode lockAfter = member.get("/v1/locks/bad%2Flock").json();
        assertThat(lockAfter.get("lease_id")).isEqualTo(lockBefore.get("lease_id"));
        assertThat(lockAfter.get("fencing_token")).isEqualTo(lockBefore.get("fencing_token"));
        assertThat(lockAfter.get("version")).isEqualTo(lockBefore.get("version"));
        assertThat(member.leasesOf("holder", "lock-holder", "prober")).as("no lease was granted for a bad input").isEqualTo(leasesBefore);
        assertThat(semaphoreCount()).as("no semaphore was made for a bad input").isEqualTo(semaphoresBefore);
        assertThat(member.server().member().semaphores().describe("bad/lock")).isNull();
        release(holder);
        member.release(lock);
    }

    /** The state without its read revision, which any later write moves. */
    private static JsonNode withoutRevision(JsonNode state) {
        ObjectNode copy = state.deepCopy();
        copy.remove("revision");
        return copy;
    }
}
