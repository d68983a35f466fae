package io.tenure.server.http;

import io.tenure.testing.Await;

import com.fasterxml.jackson.databind.JsonNode;
import io.tenure.core.kernel.LeaseView;
import io.tenure.server.http.HttpMember.Reply;
import io.tenure.testing.TenureExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static io.tenure.server.http.HttpMember.await;
import static io.tenure.server.http.HttpMember.body;
import static io.tenure.server.http.HttpMember.encoded;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The HTTP lock API's success paths and its lock-specific refusals, against one real member
 * (each test uses its own lock names).
 */
class HttpLockApiTest {
    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.members(1);
    static final HttpMember member = HttpMember.of(tenure::cluster);

    private static long leasesOf(String owner) {
        return member.server().member().stateMachine().read(s -> s.leases()).stream()
                .map(LeaseView::clientId).filter(owner::equals).count();
    }

    private static JsonNode lockState(String lock) {
        return member.state("locks", lock);
    }

    private static List<String> waitersOf(String lock) {
        return member.waiters("locks", lock);
    }

    @Test
    void acquireAnswersTheGrantAndGetDescribesTheHolder() {
        long before = System.currentTimeMillis();
        Reply r = member.post("/v1/locks/reports%2Fdaily/acquire",
                body("owner_id", "worker-1", "ttl_ms", 10_000, "metadata", "build 42"));

        assertThat(r.status()).as(r.toString()).isEqualTo(200);
        assertThat(r.header("Content-Type")).startsWith("application/json");
        JsonNode grant = r.json();
        assertThat(grant.fieldNames()).toIterable().containsExactly(
                "lock", "owner_id", "lease_id", "fencing_token", "mode", "ttl_remaining_ms", "expires_at_ms");
        assertThat(grant.get("mode").asText()).isEqualTo("write");
        assertThat(grant.get("lock").asText()).isEqualTo("reports/daily");
        assertThat(grant.get("owner_id").asText()).isEqualTo("worker-1");
        assertThat(grant.get("lease_id").asLong()).isPositive();
        assertThat(grant.get("fencing_token").asLong()).isPositive();
        assertThat(grant.get("ttl_remaining_ms").asLong()).isBetween(5_000L, 10_000L);
        assertThat(grant.get("expires_at_ms").asLong()).isBetween(before + 5_000, System.currentTimeMillis() + 10_000);

        JsonNode state = lockState("reports/daily");
        assertThat(state.get("lock").asText()).isEqualTo("reports/daily");
        assertThat(state.get("owner_id").asText()).isEqualTo("worker-1");
        assertThat(state.get("lease_id").asLong()).isEqualTo(grant.get("lease_id").asLong());
        assertThat(state.get("fencing_token").asLong()).isEqualTo(grant.get("fencing_token").asLong());
        assertThat(state.get("metadata").asText()).isEqualTo("build 42");
        assertThat(state.get("create_revision").asLong()).isEqualTo(grant.get("fencing_token").asLong());
        assertThat(state.get("version").asLong()).isEqualTo(1);
        assertThat(state.get("ttl_remaining_ms").asLong()).isBetween(1L, 10_000L);
        assertThat(state.get("expires_at_ms").asLong()).isPositive();
        assertThat(state.get("waiters").isArray()).isTrue();
        assertThat(state.get("waiters")).isEmpty();
        assertThat(state.get("revision").asLong()).isGreaterThanOrEqualTo(grant.get("fencing_token").asLong());

        assertThat(member.release(grant).status()).isEqualTo(200);
    }

    @Test
    void aFreeLockIsNotFound() {
        Reply r = member.get("/v1/locks/never-held");

        assertThat(r.status()).isEqualTo(404);
        assertThat(r.json().get("error").asText()).isEqualTo("not_found");
        assertThat(r.json().get("message").asText()).contains("never-held");
    }

    @Test
    void aRetriedAcquireOfTheHoldingOwnerGetsTheSameGrantAndNoSecondLease() {
        JsonNode first = member.acquire("retry/me", "retrier", 10_000, 0).json();

        Reply again = member.acquire("retry/me", "retrier", 10_000, 0);

        assertThat(again.status()).as(again.toString()).isEqualTo(200);
        assertThat(again.json().get("lease_id").asLong()).isEqualTo(first.get("lease_id").asLong());
        assertThat(again.json().get("fencing_token").asLong()).isEqualTo(first.get("fencing_token").asLong());
        assertThat(leasesOf("retrier")).isEqualTo(1);
        assertThat(lockState("retry/me").get("waiters")).isEmpty();
        member.release(first);
    }

    @Test
    void aHeldLockAnswers409WithTheHolderAndARetryHintThatGrowsWithTheQueue() throws Exception {
        JsonNode holder = member.acquire("hint", "holder", 10_000, 0).json();

        Reply alone = member.acquire("hint", "prober", 5_000, 0);

        assertThat(alone.status()).as(alone.toString()).isEqualTo(409);
        JsonNode refusal = alone.json();
        assertThat(refusal.get("error").asText()).isEqualTo("held");
        assertThat(refusal.get("holder").asText()).isEqualTo("holder");
        assertThat(refusal.get("message").asText()).contains("holder");
        long h0 = refusal.get("recommended_retry_ms").asLong();
        // The holder's remaining TTL, with nobody queued.
        assertThat(h0).isBetween(1_000L, 10_000L);
        assertThat(leasesOf("prober")).as("the refused acquire's lease is revoked").isZero();

        CompletableFuture<Reply> first = member.acquireAsync("hint", "queued-1", 10_000, 60_000);
        Await.until("queued-1 waits", Duration.ofSeconds(30), () -> waitersOf("hint").equals(List.of("queued-1")));
        long h1 = member.acquire("hint", "prober", 5_000, 0).json().get("recommended_retry_ms").asLong();
        CompletableFuture<Reply> second = member.acquireAsync("hint", "queued-2", 10_000, 60_000);
        Await.until("queued-2 waits", Duration.ofSeconds(30), () -> waitersOf("hint").size() == 2);
        JsonNode refusal2 = member.acquire("hint", "prober", 5_000, 0).json();
        long h2 = refusal2.get("recommended_retry_ms").asLong();

        // Each waiter ahead adds about one of the holder's TTLs (10 s), bounded by the 60 s ceiling.
        assertThat(h1).isGreaterThan(h0 + 8_000);
        assertThat(h2).isGreaterThan(h1 + 8_000).isLessThanOrEqualTo(RetryHint.MAX_MS);
        assertThat(refusal2.get("waiters").asInt()).isEqualTo(2);
        assertThat(leasesOf("prober")).isZero();

        JsonNode next = await(member.releaseAnd(holder, first)).json();
        JsonNode last = await(member.releaseAnd(next, second)).json();
        assertThat(member.release(last).status()).isEqualTo(200);
    }

    @Test
    void waitingAcquiresAreGrantedInFifoOrderWithIncreasingTokens() throws Exception {
        JsonNode a = member.acquire("fifo/job", "a", 10_000, 0).json();
        CompletableFuture<Reply> b = member.acquireAsync("fifo/job", "b", 10_000, 30_000);
        Await.until("b waits", Duration.ofSeconds(30), () -> waitersOf("fifo/job").equals(List.of("b")));
        CompletableFuture<Reply> c = member.acquireAsync("fifo/job", "c", 10_000, 30_000);
        Await.until("c waits behind b", Duration.ofSeconds(30), () -> waitersOf("fifo/job").equals(List.of("b", "c")));
        JsonNode queue = lockState("fifo/job").get("waiters");
        assertThat(queue.get(0).get("joined_revision").asLong()).isLessThan(queue.get(1).get("joined_revision").asLong());
        assertThat(queue.get(0).get("lease_id").asLong()).isPositive();

        Reply releasedA = member.release(a);
        JsonNode grantB = await(b).json();

        assertThat(releasedA.status()).isEqualTo(200);
        assertThat(releasedA.json().get("released").asBoolean()).isTrue();
        assertThat(grantB.get("owner_id").asText()).isEqualTo("b");
        assertThat(grantB.get("fencing_token").asLong()).isGreaterThan(a.get("fencing_token").asLong())
                .isEqualTo(releasedA.json().get("next_fencing_token").asLong());
        assertThat(c).isNotDone();
        assertThat(lockState("fifo/job").get("version").asLong()).isEqualTo(2);

        Reply releasedB = member.release(grantB);
        JsonNode grantC = await(c).json();
        assertThat(grantC.get("owner_id").asText()).isEqualTo("c");
        assertThat(grantC.get("fencing_token").asLong()).isGreaterThan(grantB.get("fencing_token").asLong())
                .isEqualTo(releasedB.json().get("next_fencing_token").asLong());

        Reply releasedC = member.release(grantC);
        assertThat(releasedC.json().get("next_fencing_token").asLong()).isZero();
        assertThat(member.get("/v1/locks/fifo%2Fjob").status()).isEqualTo(404);
    }

    @Test
    void aWaitThatEndsWhileHeldIsRefusedAndLeavesNoWaiterAndNoLease() {
        JsonNode holder = member.acquire("short-wait", "holder", 10_000, 0).json();

        Reply r = member.acquire("short-wait", "impatient", 10_000, 300);

        assertThat(r.status()).as(r.toString()).isEqualTo(409);
        assertThat(r.json().get("error").asText()).isEqualTo("held");
        assertThat(waitersOf("short-wait")).isEmpty();
        assertThat(leasesOf("impatient")).isZero();
        member.release(holder);
    }

    @Test
    void aWaitLongerThanTheTtlKeepsItsLeaseAliveUntilGranted() throws Exception {
        JsonNode holder = member.acquire("long-wait", "holder", 10_000, 0).json();
        CompletableFuture<Reply> waiter = member.acquireAsync("long-wait", "patient", 1_000, 30_000);
        Await.until("patient waits", Duration.ofSeconds(30), () -> waitersOf("long-wait").equals(List.of("patient")));
        long lease = lockState("long-wait").get("waiters").get(0).get("lease_id").asLong();
        // The front end renews the waiting lease every TTL/3: four renewals span more than its 1 s TTL.
        java.util.Set<Long> renewals = new java.util.HashSet<>();
        Await.until("four renewals of the waiting lease", Duration.ofSeconds(30), () -> {
            long at = member.server().member().stateMachine().read(s -> s.renewedAt(lease));
            assertThat(at).as("the waiting lease is alive").isPositive();
            renewals.add(at);
            return renewals.size() >= 5;
        });

        member.release(holder);
        Reply granted = await(waiter);

        assertThat(granted.status()).as(granted.toString()).isEqualTo(200);
        assertThat(granted.json().get("lease_id").asLong()).isEqualTo(lease);
        member.release(granted.json());
    }

    @Test
    void aGrantAfterAWaitIsRenewedSoTheCallerStartsWithItsWholeTtl() throws Exception {
        JsonNode holder = member.acquire("fresh-grant", "holder", 10_000, 0).json();
        // A 30 s lease is renewed every 10 s while it waits; 2 s into the wait it has about 28 s left.
        CompletableFuture<Reply> waiter = member.acquireAsync("fresh-grant", "waiter", 30_000, 30_000);
        Await.until("waiter waits", Duration.ofSeconds(30), () -> waitersOf("fresh-grant").equals(List.of("waiter")));
        long lease = lockState("fresh-grant").get("waiters").get(0).get("lease_id").asLong();
        Await.until("the waiting lease has under 28 s left", Duration.ofSeconds(10),
                () -> member.get("/v1/leases/" + lease).json().get("ttl_remaining_ms").asLong() < 28_000);

        member.release(holder);
        Reply granted = await(waiter);

        assertThat(granted.status()).as(granted.toString()).isEqualTo(200);
        assertThat(granted.json().get("ttl_remaining_ms").asLong()).isGreaterThan(28_500);
        member.release(granted.json());
    }

    @Test
    void renewExtendsTheRemainingTtl() {
        JsonNode grant = member.acquire("renew/me", "renewer", 3_000, 0).json();
        long lease = grant.get("lease_id").asLong();
        Await.until("the lease's remaining TTL drops below 2.4 s", Duration.ofSeconds(10),
                () -> member.get("/v1/leases/" + lease).json().get("ttl_remaining_ms").asLong() < 2_400);

        Reply renewed = member.renew(grant);

        assertThat(renewed.status()).as(renewed.toString()).isEqualTo(200);
        JsonNode r = renewed.json();
        assertThat(r.fieldNames()).toIterable().containsExactly(
                "lock", "owner_id", "lease_id", "fencing_token", "mode", "ttl_remaining_ms", "expires_at_ms");
        assertThat(r.get("lock").asText()).isEqualTo("renew/me");
        assertThat(r.get("lease_id").asLong()).isEqualTo(lease);
        assertThat(r.get("fencing_token").asLong()).isEqualTo(grant.get("fencing_token").asLong());
        assertThat(r.get("ttl_remaining_ms").asLong()).isGreaterThan(2_400);
        assertThat(member.get("/v1/leases/" + lease).json().get("ttl_remaining_ms").asLong()).isGreaterThan(2_000);
        member.release(grant);
    }

    @Test
    void renewByAnythingButTheHolderIsRefused() {
        JsonNode grant = member.acquire("renew/guarded", "owner", 10_000, 0).json();
        long lease = grant.get("lease_id").asLong();
        long token = grant.get("fencing_token").asLong();
        String path = "/v1/locks/renew%2Fguarded/renew";

        Reply staleToken = member.post(path, body("owner_id", "owner", "lease_id", lease, "fencing_token", token + 1));
        Reply otherOwner = member.post(path, body("owner_id", "intruder", "lease_id", lease, "fencing_token", token));
        Reply unknownLease = member.post(path, body("owner_id", "owner", "lease_id", 12345, "fencing_token", token));
        Reply otherLock = member.post("/v1/locks/renew%2Fother/renew", body("owner_id", "owner", "lease_id", lease, "fencing_token", token));

        assertError(staleToken, 409, "not_holder", "fencing_token");
        assertError(otherOwner, 409, "not_holder", "owner_id");
        assertError(unknownLease, 409, "expired", "lease_id");
        assertError(otherLock, 409, "not_holder", "lease_id");
        assertThat(lockState("renew/guarded").get("fencing_token").asLong()).isEqualTo(token);
        member.release(grant);
    }

    @Test
    void releaseRevokesTheLeaseAndARetriedReleaseSucceedsAgain() {
        JsonNode grant = member.acquire("release/twice", "releaser", 10_000, 0).json();
        long lease = grant.get("lease_id").asLong();

        Reply first = member.release(grant);
        Reply retry = member.release(grant);

        assertThat(first.status()).as(first.toString()).isEqualTo(200);
        assertThat(first.json().fieldNames()).toIterable().containsExactly("lock", "released", "next_fencing_token");
        assertThat(first.json().get("lock").asText()).isEqualTo("release/twice");
        assertThat(first.json().get("released").asBoolean()).isTrue();
        assertThat(first.json().get("next_fencing_token").asLong()).isZero();
        assertThat(retry.status()).as(retry.toString()).isEqualTo(200);
        assertThat(retry.json()).isEqualTo(first.json());
        assertError(member.get("/v1/leases/" + lease), 404, "lease_not_found", "lease_id");
        assertThat(leasesOf("releaser")).isZero();
    }

    @Test
    void aStaleReleaseAfterExpiryAndReacquisitionIsRefused() throws Exception {
        JsonNode a = member.acquire("stale/job", "a", 1_000, 0).json();
        // a stops renewing; b waits and gets the lock once a's lease expires.
        Reply b = member.acquire("stale/job", "b", 10_000, 20_000);
        assertThat(b.status()).as(b.toString()).isEqualTo(200);
        assertThat(b.json().get("fencing_token").asLong()).isGreaterThan(a.get("fencing_token").asLong());

        Reply lateRelease = member.release(a);
        Reply lateRenew = member.renew(a);
        long bToken = b.json().get("fencing_token").asLong();
        Reply staleToken = member.post("/v1/locks/stale%2Fjob/release",
                body("owner_id", "b", "lease_id", b.json().get("lease_id").asLong(), "fencing_token", bToken - 1));

        assertError(lateRelease, 409, "stale", "lease_id");
        assertError(lateRenew, 409, "expired", "lease_id");
        assertError(staleToken, 409, "stale", null);
        JsonNode state = lockState("stale/job");
        assertThat(state.get("owner_id").asText()).isEqualTo("b");
        assertThat(state.get("fencing_token").asLong()).isEqualTo(bToken);
        member.release(b.json());
    }

    @Test
    void releaseByAnotherOwnerIsRefusedAndChangesNothing() {
        JsonNode grant = member.acquire("release/guarded", "owner", 10_000, 0).json();

        Reply r = member.post("/v1/locks/release%2Fguarded/release", body("owner_id", "mallory",
                "lease_id", grant.get("lease_id").asLong(), "fencing_token", grant.get("fencing_token").asLong()));

        assertError(r, 409, "stale", "owner_id");
        assertThat(lockState("release/guarded").get("owner_id").asText()).isEqualTo("owner");
        assertThat(leasesOf("owner")).isEqualTo(1);
        member.release(grant);
    }

    @Test
    void namesWithSlashesAreTheSameLockRawOrEncoded() {
        Reply raw = member.post("/v1/locks/jobs/nightly/acquire", HttpMember.acquireBody("slash", 10_000, 0));

        assertThat(raw.status()).as(raw.toString()).isEqualTo(200);
        assertThat(raw.json().get("lock").asText()).isEqualTo("jobs/nightly");
        JsonNode viaEncoded = member.get("/v1/locks/jobs%2Fnightly").json();
        JsonNode viaRaw = member.get("/v1/locks/jobs/nightly").json();
        assertThat(viaEncoded.get("lease_id")).isEqualTo(raw.json().get("lease_id"));
        assertThat(viaRaw.get("lease_id")).isEqualTo(raw.json().get("lease_id"));
        assertThat(viaRaw.get("lock").asText()).isEqualTo("jobs/nightly");
        // An encoded '/' is part of the name, never a separator: the retry through it is the same grant.
        Reply again = member.post("/v1/locks/jobs%2Fnightly/acquire", HttpMember.acquireBody("slash", 10_000, 0));
        assertThat(again.json().get("fencing_token")).isEqualTo(raw.json().get("fencing_token"));

        Reply released = member.post("/v1/locks/jobs/nightly/release", HttpMember.claim(raw.json()));
        assertThat(released.status()).as(released.toString()).isEqualTo(200);
        assertThat(member.get("/v1/locks/jobs%2Fnightly").status()).isEqualTo(404);
    }

    @Test
    void unicodeAndPercentNamesRoundTrip() {
        String name = "équipe/日本/🔒 50%";
        Reply grant = member.acquire(name, "ünïcode-owner", 10_000, 0);

        assertThat(grant.status()).as(grant.toString()).isEqualTo(200);
        assertThat(grant.json().get("lock").asText()).isEqualTo(name);
        assertThat(grant.json().get("owner_id").asText()).isEqualTo("ünïcode-owner");
        assertThat(lockState(name).get("lock").asText()).isEqualTo(name);
        assertThat(member.server().member().locks().describe(name)).isNotNull();
        JsonNode listed = member.get("/v1/locks?prefix=" + encoded("équipe/")).json().get("locks");
        assertThat(listed).hasSize(1);
        assertThat(listed.get(0).get("lock").asText()).isEqualTo(name);
        assertThat(member.release(grant.json()).status()).isEqualTo(200);
    }

    @Test
    void listsHeldLocksByPrefixInNameOrderWithALimit() {
        List<JsonNode> grants = new ArrayList<>();
        for (String name : List.of("list/c", "list/a", "list/b", "listx")) {
            grants.add(member.acquire(name, "lister", 10_000, 0).json());
        }

        Reply page = member.get("/v1/locks?prefix=list%2F&limit=2");
        Reply all = member.get("/v1/locks?prefix=list/");

        assertThat(page.status()).as(page.toString()).isEqualTo(200);
        assertThat(page.json().fieldNames()).toIterable().containsExactly("locks", "more", "revision");
        assertThat(names(page.json())).containsExactly("list/a", "list/b");
        assertThat(page.json().get("more").asBoolean()).isTrue();
        assertThat(page.json().get("revision").asLong()).isPositive();
        assertThat(page.json().get("locks").get(0).get("owner_id").asText()).isEqualTo("lister");
        assertThat(page.json().get("locks").get(0).has("waiters")).isTrue();
        assertThat(names(all.json())).containsExactly("list/a", "list/b", "list/c");
        assertThat(all.json().get("more").asBoolean()).isFalse();
        grants.forEach(member::release);
    }

    private static List<String> names(JsonNode list) {
        List<String> names = new ArrayList<>();
        list.get("locks").forEach(l -> names.add(l.get("lock").asText()));
        return names;
    }

    @Test
    void aLeaseShowsItsOwnerTtlAndTheLocksItHoldsAndWaitsFor() throws Exception {
        JsonNode holder = member.acquire("lease/view", "viewer", 10_000, 0).json();
        CompletableFuture<Reply> waiting = member.acquireAsync("lease/view", "queued", 7_000, 30_000);
        Await.until("queued waits", Duration.ofSeconds(30), () -> waitersOf("lease/view").equals(List.of("queued")));
        long waitingLease = lockState("lease/view").get("waiters").get(0).get("lease_id").asLong();

        Reply held = member.get("/v1/leases/" + holder.get("lease_id").asLong());
        Reply queued = member.get("/v1/leases/" + waitingLease);

        assertThat(held.status()).as(held.toString()).isEqualTo(200);
        assertThat(held.json().fieldNames()).toIterable().containsExactly(
                "lease_id", "owner_id", "ttl_ms", "ttl_remaining_ms", "expires_at_ms", "held", "waiting");
        assertThat(held.json().get("lease_id").asLong()).isEqualTo(holder.get("lease_id").asLong());
        assertThat(held.json().get("owner_id").asText()).isEqualTo("viewer");
        assertThat(held.json().get("ttl_ms").asLong()).isEqualTo(10_000);
        assertThat(held.json().get("ttl_remaining_ms").asLong()).isBetween(1L, 10_000L);
        assertThat(held.json().get("held").toString()).isEqualTo("[\"lease/view\"]");
        assertThat(held.json().get("waiting")).isEmpty();
        assertThat(queued.json().get("owner_id").asText()).isEqualTo("queued");
        assertThat(queued.json().get("ttl_ms").asLong()).isEqualTo(7_000);
        assertThat(queued.json().get("held")).isEmpty();
        assertThat(queued.json().get("waiting").toString()).isEqualTo("[\"lease/view\"]");

        JsonNode next = await(member.releaseAnd(holder, waiting)).json();
        member.release(next);
    }

    @Test
    void statusNamesTheLeaderTermAndIndexes() {
        member.acquire("status/probe", "prober", 10_000, 0);

        Reply r = member.get("/v1/status");

        assertThat(r.status()).as(r.toString()).isEqualTo(200);
        JsonNode s = r.json();
        assertThat(s.get("leader").asText()).isEqualTo("n1");
        assertThat(s.get("member_name").asText()).isEqualTo("n1");
        assertThat(s.get("term").asLong()).isPositive();
        assertThat(s.get("revision").asLong()).isPositive();
        assertThat(s.get("applied_index").asLong()).isPositive();
        assertThat(s.get("commit_index").asLong()).isGreaterThanOrEqualTo(s.get("applied_index").asLong());
        assertThat(s.get("members")).hasSize(1);
        assertThat(s.get("members").get(0).get("name").asText()).isEqualTo("n1");
        assertThat(s.get("members").get(0).get("leader").asBoolean()).isTrue();
        assertThat(s.get("members").get(0).get("client_endpoint").asText()).endsWith(":" + member.server().clientPort());
    }

    /** The error body: exactly error, message and (when given) field, plus extras for held. */
    static void assertError(Reply r, int status, String error, String field) {
        assertThat(r.status()).as(r.toString()).isEqualTo(status);
        assertThat(r.header("Content-Type")).startsWith("application/json");
        JsonNode body = r.json();
        assertThat(body.get("error").asText()).as(r.toString()).isEqualTo(error);
        assertThat(body.get("message").asText()).isNotBlank();
        if (field == null) {
            assertThat(body.has("field")).as(r.toString()).isFalse();
        } else {
            assertThat(body.get("field").asText()).as(r.toString()).isEqualTo(field);
        }
    }
}
