package io.tenure.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.tenure.core.barrier.DoubleBarrierTable;
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
 * The HTTP double barrier API against one real member (each test uses its own names): parties let
 * in together and let go together, the GET in each phase, an enter whose wait ends withdrawing its
 * entry, a leave whose wait ends having left all the same (its lease kept alive by the leave
 * while it waits, past its TTL) and waiting again, and every refusal answered without a change.
 */
class HttpDoubleBarrierApiTest {
    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.members(1);
    static final HttpMember member = HttpMember.of(tenure::cluster);

    private static String path(String name, String action) {
        return "/v1/double-barriers/" + encoded(name) + "/" + action;
    }

    private static String enterBody(String owner, long ttlMs, int parties, long waitMs) {
        return body("owner_id", owner, "ttl_ms", ttlMs, "parties", parties, "wait_ms", waitMs);
    }

    private static Reply enter(String name, String owner, int parties, long waitMs) {
        return member.post(path(name, "enter"), enterBody(owner, 10_000, parties, waitMs));
    }

    private static CompletableFuture<Reply> enterAsync(String name, String owner, int parties, long waitMs) {
        return member.postAsync(path(name, "enter"), enterBody(owner, 10_000, parties, waitMs));
    }

    private static String leaveBody(JsonNode party, long waitMs) {
        return body("owner_id", party.get("owner_id").asText(), "lease_id", party.get("lease_id").asLong(), "wait_ms", waitMs);
    }

    private static Reply leave(String name, JsonNode party, long waitMs) {
        return member.post(path(name, "leave"), leaveBody(party, waitMs));
    }

    private static CompletableFuture<Reply> leaveAsync(String name, JsonNode party, long waitMs) {
        return member.postAsync(path(name, "leave"), leaveBody(party, waitMs));
    }

    private static JsonNode ok(Reply r) {
        assertThat(r.status()).as(r.toString()).isEqualTo(200);
        return r.json();
    }

    private static List<String> owners(String name, String list) {
        return member.owners("double-barriers", name, list);
    }

    private static JsonNode state(String name) {
        return member.state("double-barriers", name);
    }

    private static int doubleBarrierCount() {
        return member.server().member().stateMachine().read(s -> s.primitive(DoubleBarrierTable.class).barrierCount());
    }

    @Test
    void threeOwnersEnterTogetherAndLeaveTogetherAndTheGetShowsEachPhase() throws Exception {
        String name = "rounds/reindex";
        CompletableFuture<Reply> first = enterAsync(name, "w1", 3, 60_000);
        Await.until("w1 waits to enter", Duration.ofSeconds(30), () -> owners(name, "entering").equals(List.of("w1")));
        CompletableFuture<Reply> second = enterAsync(name, "w2", 3, 60_000);
        Await.until("w2 waits behind w1", Duration.ofSeconds(30), () -> owners(name, "entering").equals(List.of("w1", "w2")));

        JsonNode entering = state(name);
        assertThat(entering.fieldNames()).toIterable().containsExactly("double_barrier", "parties", "entered_revision", "entering",
                "inside", "leaving", "left", "create_revision", "revision");
        assertThat(entering.get("double_barrier").asText()).isEqualTo(name);
        assertThat(entering.get("parties").asInt()).isEqualTo(3);
        assertThat(entering.get("entered_revision").asLong()).isZero();
        assertThat(entering.get("inside")).isEmpty();
        assertThat(entering.get("leaving")).isEmpty();
        assertThat(entering.get("left")).isEmpty();
        JsonNode waiting = entering.get("entering");
        assertThat(waiting.get(0).fieldNames()).toIterable().containsExactly("lease_id", "owner_id", "arrived_revision");
        assertThat(waiting.get(0).get("arrived_revision").asLong()).isLessThan(waiting.get(1).get("arrived_revision").asLong());
        assertThat(member.get("/v1/double-barriers/rounds%2Freindex").json().get("entering"))
                .isEqualTo(member.get("/v1/double-barriers/rounds/reindex").json().get("entering"));
        assertThat(first).isNotDone();
        assertThat(second).isNotDone();

        JsonNode three = ok(enter(name, "w3", 3, 60_000));
        JsonNode one = ok(await(first));
        JsonNode two = ok(await(second));

        assertThat(three.fieldNames()).toIterable().containsExactly("double_barrier", "owner_id", "lease_id", "parties", "revision",
                "ttl_remaining_ms", "expires_at_ms");
        assertThat(three.get("double_barrier").asText()).isEqualTo(name);
        assertThat(three.get("owner_id").asText()).isEqualTo("w3");
        assertThat(three.get("ttl_remaining_ms").asLong()).isBetween(1L, 10_000L);
        assertThat(one.get("lease_id").asLong()).isEqualTo(waiting.get(0).get("lease_id").asLong());
        assertThat(two.get("lease_id").asLong()).isEqualTo(waiting.get(1).get("lease_id").asLong());
        long entered = three.get("revision").asLong();
        for (JsonNode party : List.of(one, two, three)) {
            assertThat(party.get("parties").asInt()).isEqualTo(3);
            assertThat(party.get("revision").asLong()).isEqualTo(entered);
        }
        assertThat(member.leasesOf("w1", "w2", "w3")).as("a party let in keeps its lease")
                .containsExactlyInAnyOrder(one.get("lease_id").asLong(), two.get("lease_id").asLong(), three.get("lease_id").asLong());

        JsonNode inside = state(name);
        assertThat(inside.get("entered_revision").asLong()).isEqualTo(entered);
        assertThat(inside.get("entering")).isEmpty();
        assertThat(owners(name, "inside")).containsExactlyInAnyOrder("w1", "w2", "w3");
        assertThat(inside.get("inside").get(0).fieldNames()).toIterable().containsExactly("lease_id", "owner_id", "entered_revision");
        inside.get("inside").forEach(p -> assertThat(p.get("entered_revision").asLong()).isEqualTo(entered));

        CompletableFuture<Reply> leftFirst = leaveAsync(name, one, 60_000);
        Await.until("w1 has left and waits", Duration.ofSeconds(30), () -> owners(name, "leaving").equals(List.of("w1")));
        JsonNode leaving = state(name);
        assertThat(owners(name, "inside")).containsExactlyInAnyOrder("w2", "w3");
        assertThat(leaving.get("leaving").get(0).fieldNames()).toIterable().containsExactly("lease_id", "owner_id", "left_revision");
        assertThat(leaving.get("leaving").get(0).get("left_revision").asLong()).isGreaterThan(entered);
        assertThat(leaving.get("left")).isEmpty();
        CompletableFuture<Reply> leftSecond = leaveAsync(name, two, 60_000);
        Await.until("w2 has left and waits", Duration.ofSeconds(30), () -> owners(name, "leaving").equals(List.of("w1", "w2")));
        assertThat(owners(name, "inside")).containsExactly("w3");
        assertThat(leftFirst).isNotDone();
        assertThat(leftSecond).isNotDone();

        JsonNode last = ok(leave(name, three, 60_000));
        assertThat(last.fieldNames()).toIterable().containsExactly("double_barrier", "left", "revision");
        assertThat(last.get("double_barrier").asText()).isEqualTo(name);
        assertThat(last.get("left").asBoolean()).isTrue();
        assertThat(last.get("revision").asLong()).isGreaterThan(entered);
        assertThat(ok(await(leftFirst)).get("revision").asLong()).isEqualTo(last.get("revision").asLong());
        assertThat(ok(await(leftSecond)).get("revision").asLong()).isEqualTo(last.get("revision").asLong());
        Reply gone = member.get("/v1/double-barriers/rounds%2Freindex");
        assertError(gone, 404, "not_found", null);
        assertThat(gone.json().get("message").asText()).contains("double barrier 'rounds/reindex' does not exist");
        Await.until("the parties' leases are revoked once all left", Duration.ofSeconds(30),
                () -> member.leasesOf("w1", "w2", "w3").isEmpty());
    }

    @Test
    void anEnterWhoseWaitEndsWithdrawsItsEntryAndRevokesItsLease() throws Exception {
        String name = "enter/timeout";
        CompletableFuture<Reply> stayer = enterAsync(name, "stayer", 3, 60_000);
        Await.until("stayer waits to enter", Duration.ofSeconds(30), () -> owners(name, "entering").equals(List.of("stayer")));
        JsonNode lock = ok(member.acquire(name, "a-lock-holder", 10_000, 0));

        Reply refused = enter(name, "late", 3, 300);
        assertError(refused, 409, "not_entered", null);
        assertThat(refused.json().fieldNames()).toIterable().containsExactly("error", "message", "double_barrier", "parties", "entering",
                "inside");
        assertThat(refused.json().get("double_barrier").asText()).isEqualTo(name);
        assertThat(refused.json().get("parties").asInt()).isEqualTo(3);
        assertThat(refused.json().get("entering").asInt()).isEqualTo(1);
        assertThat(refused.json().get("inside").asInt()).isZero();
        assertThat(refused.json().get("message").asText()).contains("1 of 3 leases wait to enter now", "entry was withdrawn");
        assertThat(owners(name, "entering")).containsExactly("stayer");
        assertThat(member.leasesOf("late")).as("the lease of an enter not let in is revoked").isEmpty();
        // Nor does a try (wait_ms 0) of a party short of the count change anything.
        Reply tried = enter(name, "trier", 3, 0);
        assertError(tried, 409, "not_entered", null);
        assertThat(tried.json().get("entering").asInt()).isEqualTo(1);
        assertThat(owners(name, "entering")).containsExactly("stayer");
        assertThat(member.leasesOf("trier")).isEmpty();
        // Alone, the entry withdrawn takes the double barrier with it.
        assertError(enter("enter/alone", "lonely", 2, 200), 409, "not_entered", null);
        assertError(member.get("/v1/double-barriers/enter%2Falone"), 404, "not_found", null);

        CompletableFuture<Reply> second = enterAsync(name, "second", 3, 60_000);
        Await.until("second waits to enter", Duration.ofSeconds(30), () -> owners(name, "entering").equals(List.of("stayer", "second")));
        JsonNode third = ok(enter(name, "third", 3, 0));
        List<JsonNode> parties = List.of(ok(await(stayer)), ok(await(second)), third);
        parties.forEach(p -> assertThat(p.get("revision").asLong()).isEqualTo(third.get("revision").asLong()));
        List<CompletableFuture<Reply>> leaving = parties.stream().map(p -> leaveAsync(name, p, 60_000)).toList();
        Set<Long> revisions = new java.util.HashSet<>();
        for (CompletableFuture<Reply> l : leaving) {
            revisions.add(ok(await(l)).get("revision").asLong());
        }
        assertThat(revisions).hasSize(1);
        member.release(lock);
        Await.until("the parties' leases are revoked", Duration.ofSeconds(30),
                () -> member.leasesOf("stayer", "second", "third").isEmpty());
    }

    @Test
    void aCancelWithdrawsAWaitingEntryAndAfterTheEntryAnswersItEntered() throws Exception {
        String name = "cancel/round";
        CompletableFuture<Reply> quitter = enterAsync(name, "quitter", 2, 60_000);
        Await.until("quitter waits to enter", Duration.ofSeconds(30), () -> owners(name, "entering").equals(List.of("quitter")));
        long lease = member.leaseIn("double-barriers", name, "entering", "quitter");
        String cancel = path(name, "cancel");

        JsonNode withdrawn = ok(member.post(cancel, body("owner_id", "quitter", "lease_id", lease)));

        assertThat(withdrawn.fieldNames()).toIterable().containsExactly("double_barrier", "owner_id", "lease_id", "entered", "parties",
                "entering");
        assertThat(withdrawn.get("entered").asBoolean()).isFalse();
        assertThat(withdrawn.get("entering").asInt()).isZero();
        // The enter that waited ends as when its wait runs out, and revokes its lease; alone, it took the double barrier with it.
        assertError(await(quitter), 409, "not_entered", null);
        Await.until("the quitter's lease is revoked", Duration.ofSeconds(30), () -> member.leasesOf("quitter").isEmpty());
        assertError(member.get("/v1/double-barriers/cancel%2Fround"), 404, "not_found", null);
        assertError(member.post(cancel, body("owner_id", "quitter", "lease_id", lease)), 404, "lease_not_found", "lease_id");

        // Let in before the cancel: the answer says entered, and the party is inside until it leaves.
        CompletableFuture<Reply> first = enterAsync(name, "first", 2, 60_000);
        Await.until("first waits to enter", Duration.ofSeconds(30), () -> owners(name, "entering").equals(List.of("first")));
        long firstLease = member.leaseIn("double-barriers", name, "entering", "first");
        JsonNode second = ok(enter(name, "second", 2, 60_000));
        JsonNode one = ok(await(first));
        JsonNode late = ok(member.post(cancel, body("owner_id", "first", "lease_id", firstLease)));
        assertThat(late.get("entered").asBoolean()).isTrue();
        assertThat(late.get("revision").asLong()).isEqualTo(one.get("revision").asLong()).isEqualTo(second.get("revision").asLong());
        assertThat(owners(name, "inside")).containsExactlyInAnyOrder("first", "second");
        // Refused: another owner's lease, a missing field.
        assertError(member.post(cancel, body("owner_id", "second", "lease_id", firstLease)), 409, "not_holder", "owner_id");
        assertError(member.post(cancel, body("lease_id", firstLease)), 400, "invalid_argument", "owner_id");
        CompletableFuture<Reply> leaving = leaveAsync(name, one, 60_000);
        ok(leave(name, second, 60_000));
        ok(await(leaving));
    }

    @Test
    void aLeaveWhoseWaitEndsHasLeftAllTheSameAndItsLeaseLivesOnWhileItWaitsAndUntilItLeavesAgain() throws Exception {
        String name = "leave/timeout";
        CompletableFuture<Reply> entering = member.postAsync(path(name, "enter"), enterBody("slow", 5_000, 2, 60_000));
        Await.until("slow waits to enter", Duration.ofSeconds(30), () -> owners(name, "entering").equals(List.of("slow")));
        JsonNode fast = ok(enter(name, "fast", 2, 60_000));
        JsonNode slow = ok(await(entering));

        // The leave waits longer than the lease's 5 s TTL: the waiting call keeps the lease alive.
        Reply notLeft = leave(name, slow, 7_000);
        assertError(notLeft, 409, "not_left", null);
        assertThat(notLeft.json().fieldNames()).toIterable().containsExactly("error", "message", "double_barrier", "lease_id", "parties",
                "inside");
        assertThat(notLeft.json().get("lease_id").asLong()).isEqualTo(slow.get("lease_id").asLong());
        assertThat(notLeft.json().get("parties").asInt()).isEqualTo(2);
        assertThat(notLeft.json().get("inside").asInt()).isEqualTo(1);
        assertThat(notLeft.json().get("message").asText()).contains("this party has left all the same");
        assertThat(member.leasesOf("slow")).as("the lease outlived its TTL while its leave waited")
                .containsExactly(slow.get("lease_id").asLong());
        JsonNode half = state(name);
        assertThat(owners(name, "inside")).containsExactly("fast");
        assertThat(owners(name, "leaving")).isEmpty();
        assertThat(owners(name, "left")).containsExactly("slow");
        assertThat(half.get("left").get(0).fieldNames()).toIterable().containsExactly("lease_id", "owner_id", "left_revision");

        CompletableFuture<Reply> again = leaveAsync(name, slow, 60_000);
        Await.until("slow waits again", Duration.ofSeconds(30), () -> owners(name, "leaving").equals(List.of("slow")));
        assertThat(owners(name, "left")).isEmpty();
        JsonNode last = ok(leave(name, fast, 60_000));
        assertThat(ok(await(again)).get("revision").asLong()).isEqualTo(last.get("revision").asLong());
        Await.until("both leases are revoked", Duration.ofSeconds(30), () -> member.leasesOf("slow", "fast").isEmpty());
        assertError(member.get("/v1/double-barriers/leave%2Ftimeout"), 404, "not_found", null);

        // A single party is let in and let go at once, even without waiting.
        JsonNode a = ok(enter("leave/alone", "a", 1, 0));
        assertThat(ok(leave("leave/alone", a, 0)).get("revision").asLong()).as("the last party lets itself go").isPositive();
        // A party that stopped waiting while the others finished: its next leave answers at once (revision 0, no party now).
        CompletableFuture<Reply> bEnters = enterAsync("leave/late", "b", 2, 60_000);
        Await.until("b waits to enter", Duration.ofSeconds(30), () -> owners("leave/late", "entering").equals(List.of("b")));
        JsonNode c = ok(enter("leave/late", "c", 2, 0));
        JsonNode b = ok(await(bEnters));
        assertError(leave("leave/late", b, 0), 409, "not_left", null);
        JsonNode cLeft = ok(leave("leave/late", c, 0));
        assertThat(cLeft.get("revision").asLong()).isPositive();
        JsonNode bAgain = ok(leave("leave/late", b, 60_000));
        assertThat(bAgain.get("left").asBoolean()).isTrue();
        assertThat(bAgain.get("revision").asLong()).as("no party any more: nothing to wait for").isZero();
        Await.until("b's lease is revoked", Duration.ofSeconds(30), () -> member.leasesOf("a", "b", "c").isEmpty());
    }

    @Test
    void everyRefusalNamesTheFieldAndChangesNothing() throws Exception {
        String name = "bad/double";
        CompletableFuture<Reply> waiter = enterAsync(name, "waiter", 2, 60_000);
        Await.until("waiter waits to enter", Duration.ofSeconds(30), () -> owners(name, "entering").equals(List.of("waiter")));
        CompletableFuture<Reply> atBarrier = member.postAsync("/v1/barriers/bad%2Fa-barrier/await",
                body("owner_id", "barrier-party", "ttl_ms", 10_000, "parties", 2, "wait_ms", 60_000));
        Await.until("a party waits at the barrier", Duration.ofSeconds(30),
                () -> member.owners("barriers", "bad/a-barrier", "waiting").equals(List.of("barrier-party")));
        JsonNode before = withoutRevision(state(name));
        int before2 = doubleBarrierCount();
        String enter = path(name, "enter");
        String leave = path(name, "leave");

        // parties: zero, negative, over the limit, missing, mistyped.
        for (Object parties : new Object[]{0, -1, DoubleBarrierTable.MAX_PARTIES + 1}) {
            Reply r = member.post(enter, body("owner_id", "prober", "ttl_ms", 5_000, "parties", parties));
            assertError(r, 400, "invalid_argument", "parties");
            assertThat(r.json().get("message").asText()).contains("parties must be between 1 and " + DoubleBarrierTable.MAX_PARTIES);
        }
        assertError(member.post(enter, body("owner_id", "prober", "ttl_ms", 5_000)), 400, "invalid_argument", "parties");
        assertError(member.post(enter, body("owner_id", "prober", "ttl_ms", 5_000, "parties", "2")), 400, "invalid_argument", "parties");
        // Another number of parties than the live double barrier's.
        Reply otherParties = enter(name, "prober", 3, 0);
        assertError(otherParties, 409, "conflict", "parties");
        assertThat(otherParties.json().get("message").asText()).contains("'bad/double' has 2 parties, not 3");
        // An owner waiting to enter is one party, not two.
        Reply twice = enter(name, "waiter", 2, 0);
        assertError(twice, 409, "conflict", "owner_id");
        assertThat(twice.json().get("message").asText()).contains("owner 'waiter' waits to enter double barrier 'bad/double'");
        // Barriers and double barriers share a namespace: a barrier's name is refused, and the reverse.
        Reply aBarrier = enter("bad/a-barrier", "prober", 2, 0);
        assertError(aBarrier, 409, "conflict", "double_barrier");
        assertThat(aBarrier.json().get("message").asText()).contains("'bad/a-barrier' is a barrier, not a double barrier");
        Reply aDoubleBarrier = member.post("/v1/barriers/bad%2Fdouble/await", body("owner_id", "prober", "ttl_ms", 5_000, "parties", 2));
        assertError(aDoubleBarrier, 409, "conflict", "barrier");
        assertThat(aDoubleBarrier.json().get("message").asText()).contains("'bad/double' is a double barrier, not a barrier");
        // Leave: another owner's lease, an unknown lease, a barrier's name, missing fields.
        long waiterLease = state(name).get("entering").get(0).get("lease_id").asLong();
        Reply notMine = member.post(leave, body("owner_id", "prober", "lease_id", waiterLease));
        assertError(notMine, 409, "not_holder", "owner_id");
        assertThat(notMine.json().get("message").asText()).contains("is not owner 'prober''s");
        Reply leaveABarrier = member.post(path("bad/a-barrier", "leave"), body("owner_id", "waiter", "lease_id", waiterLease));
        assertError(leaveABarrier, 409, "conflict", "double_barrier");
        assertThat(leaveABarrier.json().get("message").asText()).contains("'bad/a-barrier' is a barrier, not a double barrier");
        Reply unknownLease = member.post(leave, body("owner_id", "prober", "lease_id", 4242));
        assertError(unknownLease, 404, "lease_not_found", "lease_id");
        assertError(member.post(leave, body("owner_id", "prober")), 400, "invalid_argument", "lease_id");
        assertError(member.post(leave, body("lease_id", waiterLease)), 400, "invalid_argument", "owner_id");
        Reply tooLong = member.post(leave, body("owner_id", "waiter", "lease_id", waiterLease, "wait_ms", 60_001));
        assertError(tooLong, 400, "invalid_argument", "wait_ms");
        assertThat(tooLong.json().get("message").asText()).contains("between 0 (leave without waiting for the others) and 60000");
        // The owner, the TTL, the wait and the name, as for locks.
        assertError(member.post(enter, body("ttl_ms", 5_000, "parties", 2)), 400, "invalid_argument", "owner_id");
        assertError(member.post(enter, body("owner_id", "prober", "parties", 2)), 400, "invalid_argument", "ttl_ms");
        assertError(member.post(enter, body("owner_id", "prober", "ttl_ms", 5_000, "parties", 2, "wait_ms", -1)),
                400, "invalid_argument", "wait_ms");
        assertError(member.post("/v1/double-barriers//enter", body("owner_id", "prober", "ttl_ms", 5_000, "parties", 2)),
                400, "invalid_argument", "double_barrier");
        assertError(member.get("/v1/double-barriers/"), 400, "invalid_argument", "double_barrier");
        assertError(member.post(enter, "[]"), 400, "invalid_json", null);
        Reply unknown = member.post(path(name, "await"), body("owner_id", "prober"));
        assertError(unknown, 404, "unknown_route", null);
        assertThat(unknown.json().get("message").asText())
                .contains("the double_barrier endpoints are POST /v1/double-barriers/{double_barrier}/enter, /leave and /cancel");

        assertThat(withoutRevision(state(name))).isEqualTo(before);
        assertThat(doubleBarrierCount()).isEqualTo(before2);
        assertThat(owners(name, "entering")).containsExactly("waiter");
        Await.until("no lease is left by a refused enter", Duration.ofSeconds(30), () -> member.leasesOf("prober").isEmpty());
        assertThat(waiter).isNotDone();
        JsonNode closer = ok(enter(name, "closer", 2, 0));
        JsonNode waited = ok(await(waiter));
        assertError(leave(name, waited, 0), 409, "not_left", null);
        ok(leave(name, closer, 0));
        ok(member.post("/v1/barriers/bad%2Fa-barrier/await", body("owner_id", "barrier-closer", "ttl_ms", 5_000, "parties", 2)));
        ok(await(atBarrier));
    }

    private static JsonNode withoutRevision(JsonNode state) {
        com.fasterxml.jackson.databind.node.ObjectNode copy = state.deepCopy();
        copy.remove("revision");
        return copy;
    }
}
