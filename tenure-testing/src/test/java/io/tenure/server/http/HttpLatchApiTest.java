package io.tenure.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.tenure.core.latch.LatchTable;
import io.tenure.server.http.HttpMember.Reply;
import io.tenure.testing.Await;
import io.tenure.testing.TenureExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static io.tenure.server.http.HttpLockApiTest.assertError;
import static io.tenure.server.http.HttpMember.await;
import static io.tenure.server.http.HttpMember.body;
import static io.tenure.server.http.HttpMember.encoded;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The HTTP latch API against one real member (each test uses its own latch names): a count set
 * once, count-downs (a retried one counted once) releasing every waiter together at zero, the
 * GET, a wait that ends withdrawn with its lease revoked, and every refusal answered without a
 * change.
 */
class HttpLatchApiTest {
    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.members(1);
    static final HttpMember member = HttpMember.of(tenure::cluster);

    private static Reply setCount(String latch, Object count) {
        return member.post("/v1/latches/" + encoded(latch) + "/count", body("count", count));
    }

    private static Reply countDown(String latch, Object... fields) {
        return member.post("/v1/latches/" + encoded(latch) + "/count-down", body(fields));
    }

    private static CompletableFuture<Reply> awaitAsync(String latch, String owner, long waitMs) {
        return member.postAsync("/v1/latches/" + encoded(latch) + "/await", body("owner_id", owner, "ttl_ms", 10_000, "wait_ms", waitMs));
    }

    private static Reply awaitNow(String latch, String owner, long waitMs) throws Exception {
        return await(awaitAsync(latch, owner, waitMs));
    }

    private static JsonNode ok(Reply r) {
        assertThat(r.status()).as(r.toString()).isEqualTo(200);
        return r.json();
    }

    private static List<String> waitingAt(String latch) {
        return member.owners("latches", latch, "waiting");
    }

    private static int latchCount() {
        return member.server().member().stateMachine().read(s -> s.primitive(LatchTable.class).latchCount());
    }

    @Test
    void countDownsToZeroReleaseEveryWaiterTogetherAndTheLatchIsGone() throws Exception {
        JsonNode set = ok(setCount("done/shards", 2));
        assertThat(set.fieldNames()).toIterable().containsExactly("latch", "set", "count");
        assertThat(set.get("set").asBoolean()).isTrue();
        JsonNode again = ok(setCount("done/shards", 5));
        assertThat(again.get("set").asBoolean()).as("it exists").isFalse();
        assertThat(again.get("count").asInt()).isEqualTo(2);
        CompletableFuture<Reply> first = awaitAsync("done/shards", "w1", 60_000);
        Await.until("w1 waits", Duration.ofSeconds(30), () -> waitingAt("done/shards").equals(List.of("w1")));
        CompletableFuture<Reply> second = awaitAsync("done/shards", "w2", 60_000);
        Await.until("w2 waits behind w1", Duration.ofSeconds(30), () -> waitingAt("done/shards").equals(List.of("w1", "w2")));

        JsonNode state = member.state("latches", "done/shards");
        assertThat(state.fieldNames()).toIterable()
                .containsExactly("latch", "count", "initial_count", "waiting", "create_revision", "mod_revision", "revision");
        assertThat(state.get("count").asInt()).isEqualTo(2);
        assertThat(state.get("waiting").get(0).fieldNames()).toIterable().containsExactly("lease_id", "owner_id", "arrived_revision");

        JsonNode down = ok(countDown("done/shards", "request_id", 77));
        assertThat(down.fieldNames()).toIterable().containsExactly("latch", "count", "counted_down");
        assertThat(down.get("count").asInt()).isEqualTo(1);
        assertThat(ok(countDown("done/shards", "request_id", 77)).get("count").asInt()).as("a retry counts once").isEqualTo(1);
        assertThat(member.state("latches", "done/shards").get("count").asInt()).isEqualTo(1);
        assertThat(first).isNotDone();
        assertThat(ok(countDown("done/shards")).get("count").asInt()).isZero();

        JsonNode one = ok(await(first));
        JsonNode two = ok(await(second));
        assertThat(one.fieldNames()).toIterable().containsExactly("latch", "owner_id", "lease_id", "revision");
        assertThat(one.get("revision").asLong()).isPositive().isEqualTo(two.get("revision").asLong());
        assertError(member.get("/v1/latches/done%2Fshards"), 404, "not_found", null);
        JsonNode absent = ok(countDown("done/shards"));
        assertThat(absent.get("counted_down").asBoolean()).isFalse();
        assertThat(absent.get("count").asInt()).isZero();
        assertThat(ok(awaitNow("done/shards", "late", 0)).get("revision").asLong()).as("open at once").isZero();
        Await.until("the waiters' leases are revoked", Duration.ofSeconds(30), () -> member.leasesOf("w1", "w2", "late").isEmpty());
    }

    @Test
    void aWaitThatEndsIsWithdrawnAndItsLeaseRevoked() throws Exception {
        ok(setCount("done/slow", 3));

        Reply timedOut = awaitNow("done/slow", "impatient", 300);

        assertError(timedOut, 409, "not_released", null);
        assertThat(timedOut.json().fieldNames()).toIterable().containsExactly("error", "message", "latch", "count");
        assertThat(timedOut.json().get("count").asInt()).isEqualTo(3);
        assertThat(waitingAt("done/slow")).isEmpty();
        assertThat(member.leasesOf("impatient")).isEmpty();
        assertError(awaitNow("done/slow", "looker", 0), 409, "not_released", null);
        assertThat(member.leasesOf("looker")).isEmpty();
        for (int i = 0; i < 3; i++) {
            ok(countDown("done/slow"));
        }
    }

    @Test
    void aCancelWithdrawsAWaitingAwaitWhichEndsAndRevokesItsLease() throws Exception {
        ok(setCount("done/cancel", 2));
        CompletableFuture<Reply> quitter = awaitAsync("done/cancel", "quitter", 60_000);
        Await.until("quitter waits", Duration.ofSeconds(30), () -> waitingAt("done/cancel").equals(List.of("quitter")));
        CompletableFuture<Reply> patient = awaitAsync("done/cancel", "patient", 60_000);
        Await.until("patient waits", Duration.ofSeconds(30), () -> waitingAt("done/cancel").equals(List.of("quitter", "patient")));
        long lease = member.leaseIn("latches", "done/cancel", "waiting", "quitter");
        String cancel = "/v1/latches/done%2Fcancel/cancel";

        JsonNode withdrawn = ok(member.post(cancel, body("owner_id", "quitter", "lease_id", lease)));

        assertThat(withdrawn.fieldNames()).toIterable().containsExactly("latch", "owner_id", "lease_id", "withdrawn", "count");
        assertThat(withdrawn.get("withdrawn").asBoolean()).isTrue();
        assertThat(withdrawn.get("count").asInt()).isEqualTo(2);
        assertThat(waitingAt("done/cancel")).containsExactly("patient");
        Reply ended = await(quitter);
        assertError(ended, 409, "not_released", null);
        assertThat(ended.json().get("count").asInt()).isEqualTo(2);
        Await.until("the quitter's lease is revoked", Duration.ofSeconds(30), () -> member.leasesOf("quitter").isEmpty());
        assertError(member.post(cancel, body("owner_id", "quitter", "lease_id", lease)), 404, "lease_not_found", "lease_id");
        long patientLease = member.leaseIn("latches", "done/cancel", "waiting", "patient");
        assertError(member.post(cancel, body("owner_id", "quitter", "lease_id", patientLease)), 409, "not_holder", "owner_id");
        assertError(member.post(cancel, body("owner_id", "patient", "lease_id", "x")), 400, "invalid_argument", "lease_id");
        assertThat(waitingAt("done/cancel")).containsExactly("patient");

        ok(countDown("done/cancel"));
        ok(countDown("done/cancel"));
        ok(await(patient));
    }

    @Test
    void everyRefusalNamesTheFieldAndChangesNothing() throws Exception {
        ok(setCount("bad/latch", 2));
        JsonNode lock = member.acquire("bad/a-lock", "lock-holder", 10_000, 0).json();
        int latchesBefore = latchCount();

        for (Object count : new Object[]{0, -1, LatchTable.MAX_COUNT + 1}) {
            Reply r = setCount("bad/new", count);
            assertError(r, 400, "invalid_argument", "count");
            assertThat(r.json().get("message").asText()).contains("count must be between 1 and " + LatchTable.MAX_COUNT);
        }
        assertError(setCount("bad/new", "2"), 400, "invalid_argument", "count");
        assertError(member.post("/v1/latches/bad%2Fnew/count", body()), 400, "invalid_argument", "count");
        assertError(countDown("bad/latch", "request_id", "x"), 400, "invalid_argument", "request_id");
        // Latches have a namespace of their own: a held lock's name is free for a latch, and the reverse.
        Reply aLock = setCount("bad/a-lock", 1);
        assertThat(aLock.status()).isEqualTo(200);
        assertThat(aLock.json().get("set").asBoolean()).isTrue();
        assertThat(countDown("bad/a-lock").status()).isEqualTo(200);
        Reply aLatch = member.acquire("bad/latch", "prober", 5_000, 0);
        assertThat(aLatch.status()).as("a lock named like a counting latch").isEqualTo(200);
        // The owner, the TTL, the wait and the name, as for locks.
        String await = "/v1/latches/bad%2Flatch/await";
        assertError(member.post(await, body("ttl_ms", 5_000)), 400, "invalid_argument", "owner_id");
        assertError(member.post(await, body("owner_id", "prober")), 400, "invalid_argument", "ttl_ms");
        assertError(member.post(await, body("owner_id", "prober", "ttl_ms", 5_000, "wait_ms", -1)), 400, "invalid_argument", "wait_ms");
        assertError(member.post("/v1/latches//count", body("count", 1)), 400, "invalid_argument", "latch");
        assertError(member.get("/v1/latches/"), 400, "invalid_argument", "latch");
        assertError(member.post(await, "[]"), 400, "invalid_json", null);
        Reply unknown = member.post("/v1/latches/bad%2Flatch/reset", body());
        assertError(unknown, 404, "unknown_route", null);
        assertThat(unknown.json().get("message").asText())
                .contains("POST /v1/latches/{latch}/count, /count-down, /await and /cancel");

        assertThat(member.state("latches", "bad/latch").get("count").asInt()).isEqualTo(2);
        assertThat(latchCount()).isEqualTo(latchesBefore);
        Await.until("no lease is left by a refused await", Duration.ofSeconds(30), () -> member.leasesOf("prober").isEmpty());
        ok(countDown("bad/latch"));
        ok(countDown("bad/latch"));
        member.release(lock);
    }

    @Test
    void theMetricsCountSetsCountDownsAndAwaits() throws Exception {
        ok(setCount("metrics/latch", 1));
        ok(countDown("metrics/latch"));
        ok(awaitNow("metrics/latch", "metered", 0));

        String metrics = member.get("/metrics").body();

        assertThat(metrics).contains("latch_total{result=\"set\"}", "latch_total{result=\"reached_zero\"}",
                "latch_await_total{result=\"released\"}", "latches_counting", "latch_leases_waiting");
    }
}
