package io.tenure.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.tenure.core.barrier.BarrierTable;
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
import static io.tenure.server.http.HttpMember.encoded;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The HTTP barrier API against one real member (each test uses its own barrier names): parties
 * released together, the parties waiting, a wait that ends leaving the barrier, and every refusal
 * answered without a change.
 */
class HttpBarrierApiTest {
    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.members(1);
    static final HttpMember member = HttpMember.of(tenure::cluster);

    private static String path(String barrier) {
        return "/v1/barriers/" + encoded(barrier) + "/await";
    }

    private static Reply arrive(String barrier, String owner, int parties, long waitMs) {
        return member.post(path(barrier), awaitBody(owner, parties, waitMs));
    }

    private static CompletableFuture<Reply> arriveAsync(String barrier, String owner, int parties, long waitMs) {
        return member.postAsync(path(barrier), awaitBody(owner, parties, waitMs));
    }

    private static String awaitBody(String owner, int parties, long waitMs) {
        return body("owner_id", owner, "ttl_ms", 10_000, "parties", parties, "wait_ms", waitMs);
    }

    private static JsonNode released(Reply r) {
        assertThat(r.status()).as(r.toString()).isEqualTo(200);
        return r.json();
    }

    private static List<String> waitingAt(String barrier) {
        return member.owners("barriers", barrier, "waiting");
    }

    private static int barrierCount() {
        return member.server().member().stateMachine().read(s -> s.primitive(BarrierTable.class).barrierCount());
    }

    @Test
    void threeOwnersAreReleasedTogetherAtOneRevisionAndTheGetShowsWhoWaitsInArrivalOrder() throws Exception {
        CompletableFuture<Reply> first = arriveAsync("start/line", "w1", 3, 60_000);
        Await.until("w1 waits", Duration.ofSeconds(30), () -> waitingAt("start/line").equals(List.of("w1")));
        CompletableFuture<Reply> second = arriveAsync("start/line", "w2", 3, 60_000);
        Await.until("w2 waits behind w1", Duration.ofSeconds(30), () -> waitingAt("start/line").equals(List.of("w1", "w2")));

        JsonNode state = member.state("barriers", "start/line");
        assertThat(state.fieldNames()).toIterable().containsExactly("barrier", "parties", "waiting", "create_revision", "revision");
        assertThat(state.get("barrier").asText()).isEqualTo("start/line");
        assertThat(state.get("parties").asInt()).isEqualTo(3);
        JsonNode waiting = state.get("waiting");
        assertThat(waiting.get(0).fieldNames()).toIterable().containsExactly("lease_id", "owner_id", "arrived_revision");
        assertThat(waiting.get(0).get("arrived_revision").asLong()).isLessThan(waiting.get(1).get("arrived_revision").asLong());
        assertThat(state.get("create_revision").asLong()).isEqualTo(waiting.get(0).get("arrived_revision").asLong());
        assertThat(state.get("revision").asLong()).isGreaterThanOrEqualTo(waiting.get(1).get("arrived_revision").asLong());
        assertThat(member.get("/v1/barriers/start%2Fline").json().get("waiting"))
                .isEqualTo(member.get("/v1/barriers/start/line").json().get("waiting"));
        assertThat(first).isNotDone();
        assertThat(second).isNotDone();

        JsonNode third = released(arrive("start/line", "w3", 3, 60_000));
        JsonNode one = released(await(first));
        JsonNode two = released(await(second));

        assertThat(third.fieldNames()).toIterable().containsExactly("barrier", "owner_id", "lease_id", "parties", "revision");
        assertThat(third.get("barrier").asText()).isEqualTo("start/line");
        assertThat(third.get("owner_id").asText()).isEqualTo("w3");
        assertThat(one.get("owner_id").asText()).isEqualTo("w1");
        assertThat(two.get("owner_id").asText()).isEqualTo("w2");
        assertThat(one.get("lease_id").asLong()).isEqualTo(waiting.get(0).get("lease_id").asLong());
        assertThat(two.get("lease_id").asLong()).isEqualTo(waiting.get(1).get("lease_id").asLong());
        assertThat(Set.of(one.get("lease_id").asLong(), two.get("lease_id").asLong(), third.get("lease_id").asLong())).hasSize(3);
        for (JsonNode party : List.of(one, two, third)) {
            assertThat(party.get("parties").asInt()).isEqualTo(3);
            assertThat(party.get("revision").asLong()).isEqualTo(third.get("revision").asLong());
        }
        assertThat(third.get("revision").asLong()).isGreaterThan(state.get("revision").asLong());
        Reply gone = member.get("/v1/barriers/start%2Fline");
        assertError(gone, 404, "not_found", null);
        assertThat(gone.json().get("message").asText()).contains("'start/line' has nobody waiting");
        Await.until("the released parties' leases are revoked", Duration.ofSeconds(30),
                () -> member.leasesOf("w1", "w2", "w3").isEmpty());
    }

    @Test
    void aSinglePartyIsReleasedAtOnceEvenWithoutWaiting() {
        JsonNode alone = released(arrive("solo", "only", 1, 0));

        assertThat(alone.get("parties").asInt()).isEqualTo(1);
        assertThat(alone.get("revision").asLong()).isPositive();
        assertError(member.get("/v1/barriers/solo"), 404, "not_found", null);
    }

    @Test
    void aWaitThatEndsLeavesTheBarrierAndRevokesItsLease() throws Exception {
        CompletableFuture<Reply> stayer = arriveAsync("timeout/line", "stayer", 3, 60_000);
        Await.until("stayer waits", Duration.ofSeconds(30), () -> waitingAt("timeout/line").equals(List.of("stayer")));

        Reply left = arrive("timeout/line", "leaver", 3, 300);

        assertError(left, 409, "not_released", null);
        assertThat(left.json().fieldNames()).toIterable().containsExactly("error", "message", "barrier", "parties", "waiting");
        assertThat(left.json().get("barrier").asText()).isEqualTo("timeout/line");
        assertThat(left.json().get("parties").asInt()).isEqualTo(3);
        assertThat(left.json().get("waiting").asInt()).isEqualTo(1);
        assertThat(left.json().get("message").asText()).contains("1 of 3 parties wait", "this party left it");
        assertThat(waitingAt("timeout/line")).containsExactly("stayer");
        assertThat(member.leasesOf("leaver")).as("the party that left has its lease revoked").isEmpty();
        // Not even a try (wait_ms 0) of a party short of the count changes anything.
        assertError(arrive("timeout/line", "trier", 3, 0), 409, "not_released", null);
        assertThat(waitingAt("timeout/line")).containsExactly("stayer");
        assertThat(member.leasesOf("trier")).isEmpty();

        CompletableFuture<Reply> second = arriveAsync("timeout/line", "second", 3, 60_000);
        Await.until("second waits", Duration.ofSeconds(30), () -> waitingAt("timeout/line").equals(List.of("stayer", "second")));
        JsonNode last = released(arrive("timeout/line", "last", 3, 60_000));
        assertThat(released(await(stayer)).get("revision").asLong()).isEqualTo(last.get("revision").asLong());
        assertThat(released(await(second)).get("revision").asLong()).isEqualTo(last.get("revision").asLong());

        // Alone, the party that leaves takes the barrier with it.
        assertError(arrive("timeout/alone", "lonely", 2, 200), 409, "not_released", null);
        assertError(member.get("/v1/barriers/timeout%2Falone"), 404, "not_found", null);
    }

    @Test
    void aPartyThatLeavesIsNoLongerCountedAndItsAwaitEnds() throws Exception {
        CompletableFuture<Reply> goer = arriveAsync("leave/line", "goer", 3, 60_000);
        Await.until("goer waits", Duration.ofSeconds(30), () -> waitingAt("leave/line").equals(List.of("goer")));
        CompletableFuture<Reply> stayer = arriveAsync("leave/line", "stayer", 3, 60_000);
        Await.until("stayer waits", Duration.ofSeconds(30), () -> waitingAt("leave/line").equals(List.of("goer", "stayer")));
        long lease = member.leaseIn("barriers", "leave/line", "waiting", "goer");
        String leave = "/v1/barriers/leave%2Fline/leave";

        Reply left = member.post(leave, body("owner_id", "goer", "lease_id", lease));

        JsonNode answer = released(left);
        assertThat(answer.fieldNames()).toIterable().containsExactly("barrier", "owner_id", "lease_id", "left", "parties", "waiting");
        assertThat(answer.get("left").asBoolean()).isTrue();
        assertThat(answer.get("parties").asInt()).isEqualTo(3);
        assertThat(answer.get("waiting").asInt()).isEqualTo(1);
        assertThat(waitingAt("leave/line")).containsExactly("stayer");
        // The await of the party that left ends as when its wait runs out, and revokes its lease.
        Reply ended = await(goer);
        assertError(ended, 409, "not_released", null);
        assertThat(ended.json().get("waiting").asInt()).isEqualTo(1);
        Await.until("the lease of the party that left is revoked", Duration.ofSeconds(30), () -> member.leasesOf("goer").isEmpty());
        assertError(member.post(leave, body("owner_id", "goer", "lease_id", lease)), 404, "lease_not_found", "lease_id");

        // One arrival no longer releases the barrier: it takes two more.
        CompletableFuture<Reply> second = arriveAsync("leave/line", "second", 3, 60_000);
        Await.until("second waits", Duration.ofSeconds(30), () -> waitingAt("leave/line").equals(List.of("stayer", "second")));
        assertThat(stayer).isNotDone();
        JsonNode last = released(arrive("leave/line", "last", 3, 60_000));
        assertThat(released(await(stayer)).get("revision").asLong()).isEqualTo(last.get("revision").asLong());
        assertThat(released(await(second)).get("revision").asLong()).isEqualTo(last.get("revision").asLong());
    }

    @Test
    void everyRefusalNamesTheFieldAndChangesNothing() throws Exception {
        CompletableFuture<Reply> waiter = arriveAsync("bad/barrier", "waiter", 2, 60_000);
        Await.until("waiter waits", Duration.ofSeconds(30), () -> waitingAt("bad/barrier").equals(List.of("waiter")));
        JsonNode lock = member.acquire("bad/a-lock", "lock-holder", 10_000, 0).json();
        JsonNode before = withoutRevision(member.state("barriers", "bad/barrier"));
        int barriersBefore = barrierCount();
        String await = path("bad/barrier");

        // parties: zero, negative, over the limit, missing, mistyped.
        for (Object parties : new Object[]{0, -1, BarrierTable.MAX_PARTIES + 1}) {
            Reply r = member.post(await, body("owner_id", "prober", "ttl_ms", 5_000, "parties", parties));
            assertError(r, 400, "invalid_argument", "parties");
            assertThat(r.json().get("message").asText()).contains("parties must be between 1 and " + BarrierTable.MAX_PARTIES);
        }
        assertError(member.post(await, body("owner_id", "prober", "ttl_ms", 5_000)), 400, "invalid_argument", "parties");
        assertError(member.post(await, body("owner_id", "prober", "ttl_ms", 5_000, "parties", "2")), 400, "invalid_argument", "parties");
        // Another number of parties than the live barrier's.
        Reply otherParties = arrive("bad/barrier", "prober", 3, 0);
        assertError(otherParties, 409, "conflict", "parties");
        assertThat(otherParties.json().get("message").asText()).contains("'bad/barrier' has 2 parties, not 3");
        // An owner already waiting is one party, not two.
        Reply twice = arrive("bad/barrier", "waiter", 2, 0);
        assertError(twice, 409, "conflict", "owner_id");
        assertThat(twice.json().get("message").asText()).contains("owner 'waiter' already waits at barrier 'bad/barrier'");
        // Barriers have a namespace of their own (seed 004): a lock's name is free for a barrier, and the reverse.
        Reply aLock = arrive("bad/a-lock", "prober", 2, 0);
        assertThat(aLock.status()).as("a party at a barrier named like a held lock waits there").isEqualTo(409);
        assertThat(aLock.json().get("error").asText()).isEqualTo("not_released");
        Reply aBarrier = member.acquire("bad/barrier", "prober", 5_000, 0);
        assertThat(aBarrier.status()).as("a lock named like a barrier with a party waiting").isEqualTo(200);
        // The owner, the TTL, the wait and the name, as for locks.
        assertError(member.post(await, body("ttl_ms", 5_000, "parties", 2)), 400, "invalid_argument", "owner_id");
        assertError(member.post(await, body("owner_id", "prober", "parties", 2)), 400, "invalid_argument", "ttl_ms");
        assertError(member.post(await, body("owner_id", "prober", "ttl_ms", 5_000, "parties", 2, "wait_ms", -1)),
                400, "invalid_argument", "wait_ms");
        assertError(member.post("/v1/barriers//await", body("owner_id", "prober", "ttl_ms", 5_000, "parties", 2)),
                400, "invalid_argument", "barrier");
        assertError(member.get("/v1/barriers/"), 400, "invalid_argument", "barrier");
        assertError(member.post(await, "[]"), 400, "invalid_json", null);
        Reply unknown = member.post("/v1/barriers/bad%2Fbarrier/depart", body("owner_id", "prober"));
        assertError(unknown, 404, "unknown_route", null);
        assertThat(unknown.json().get("message").asText()).contains("the barrier endpoints are POST /v1/barriers/{barrier}/await and /leave");
        // leave: its fields, a lease never granted, another owner's.
        String leave = "/v1/barriers/bad%2Fbarrier/leave";
        long waiterLease = member.leaseIn("barriers", "bad/barrier", "waiting", "waiter");
        assertError(member.post(leave, body("owner_id", "waiter")), 400, "invalid_argument", "lease_id");
        assertError(member.post(leave, body("owner_id", "waiter", "lease_id", -3)), 400, "invalid_argument", "lease_id");
        assertError(member.post(leave, body("lease_id", waiterLease)), 400, "invalid_argument", "owner_id");
        assertError(member.post("/v1/barriers//leave", body("owner_id", "waiter", "lease_id", waiterLease)), 400, "invalid_argument",
                "barrier");
        assertError(member.post(leave, body("owner_id", "waiter", "lease_id", 424242)), 404, "lease_not_found", "lease_id");
        assertError(member.post(leave, body("owner_id", "prober", "lease_id", waiterLease)), 409, "not_holder", "owner_id");

        assertThat(withoutRevision(member.state("barriers", "bad/barrier"))).isEqualTo(before);
        assertThat(barrierCount()).isEqualTo(barriersBefore);
        Await.until("no lease is left by a refused await", Duration.ofSeconds(30), () -> member.leasesOf("prober").isEmpty());
        assertThat(waiter).isNotDone();
        released(arrive("bad/barrier", "closer", 2, 0));
        released(await(waiter));
        member.release(lock);
    }

    private static JsonNode withoutRevision(JsonNode state) {
        com.fasterxml.jackson.databind.node.ObjectNode copy = state.deepCopy();
        copy.remove("revision");
        return copy;
    }
}
