package io.tenure.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tenure.core.election.ElectionTable;
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
 * The HTTP election API against one real member (each test uses its own election names):
 * campaign, the line of candidates, proclaim, renew and resign, their refusals, and every bad
 * input answered without a change.
 */
class HttpElectionApiTest {
    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.members(1);
    static final HttpMember member = HttpMember.of(tenure::cluster);

    private static String path(String election, String action) {
        return "/v1/elections/" + encoded(election) + "/" + action;
    }

    private static Reply campaign(String election, String owner, String value, long waitMs) {
        return member.post(path(election, "campaign"), campaignBody(owner, value, waitMs));
    }

    private static CompletableFuture<Reply> campaignAsync(String election, String owner, String value, long waitMs) {
        return member.postAsync(path(election, "campaign"), campaignBody(owner, value, waitMs));
    }

    private static String campaignBody(String owner, String value, long waitMs) {
        return body("owner_id", owner, "ttl_ms", 10_000, "wait_ms", waitMs, "value", value);
    }

    private static JsonNode elected(Reply r) {
        assertThat(r.status()).as(r.toString()).isEqualTo(200);
        return r.json();
    }

    private static Reply resign(JsonNode leadership) {
        return member.post(path(leadership.get("election").asText(), "resign"), claim(leadership));
    }

    private static Reply proclaim(JsonNode leadership, String value) {
        return member.post(path(leadership.get("election").asText(), "proclaim"), body("owner_id", leadership.get("owner_id").asText(),
                "lease_id", leadership.get("lease_id").asLong(), "fencing_token", leadership.get("fencing_token").asLong(), "value", value));
    }

    private static JsonNode state(String election) {
        return member.state("elections", election);
    }

    private static List<String> candidatesOf(String election) {
        return member.owners("elections", election, "candidates");
    }

    private static int electionCount() {
        return member.server().member().stateMachine().read(s -> s.primitive(ElectionTable.class).electionCount());
    }

    @Test
    void campaignElectsAndGetDescribesTheLeader() {
        long before = System.currentTimeMillis();
        JsonNode leader = elected(campaign("services/api", "node-1", "10.0.0.1:8080", 0));

        assertThat(leader.fieldNames()).toIterable().containsExactly(
                "election", "owner_id", "lease_id", "fencing_token", "value", "ttl_remaining_ms", "expires_at_ms");
        assertThat(leader.get("election").asText()).isEqualTo("services/api");
        assertThat(leader.get("owner_id").asText()).isEqualTo("node-1");
        assertThat(leader.get("lease_id").asLong()).isPositive();
        assertThat(leader.get("fencing_token").asLong()).isPositive();
        assertThat(leader.get("value").asText()).isEqualTo("10.0.0.1:8080");
        assertThat(leader.get("ttl_remaining_ms").asLong()).isBetween(5_000L, 10_000L);
        assertThat(leader.get("expires_at_ms").asLong()).isBetween(before + 5_000, System.currentTimeMillis() + 10_000);

        JsonNode state = state("services/api");
        assertThat(state.fieldNames()).toIterable().containsExactly("election", "owner_id", "lease_id", "fencing_token", "value",
                "value_revision", "create_revision", "version", "ttl_remaining_ms", "expires_at_ms", "candidates", "revision");
        assertThat(state.get("owner_id").asText()).isEqualTo("node-1");
        assertThat(state.get("lease_id").asLong()).isEqualTo(leader.get("lease_id").asLong());
        assertThat(state.get("fencing_token").asLong()).isEqualTo(leader.get("fencing_token").asLong());
        assertThat(state.get("value").asText()).isEqualTo("10.0.0.1:8080");
        assertThat(state.get("value_revision").asLong()).isEqualTo(leader.get("fencing_token").asLong());
        assertThat(state.get("create_revision").asLong()).isEqualTo(leader.get("fencing_token").asLong());
        assertThat(state.get("version").asLong()).isEqualTo(1);
        assertThat(state.get("ttl_remaining_ms").asLong()).isBetween(1L, 10_000L);
        assertThat(state.get("candidates").isArray()).isTrue();
        assertThat(state.get("candidates")).isEmpty();
        assertThat(state.get("revision").asLong()).isGreaterThanOrEqualTo(leader.get("fencing_token").asLong());
        // The name in the path, raw or encoded, is the same election.
        assertThat(withoutRevision(member.get("/v1/elections/services/api").json()))
                .isEqualTo(withoutRevision(member.get("/v1/elections/services%2Fapi").json()));

        Reply resigned = resign(leader);
        assertThat(resigned.status()).as(resigned.toString()).isEqualTo(200);
        assertThat(resigned.json().get("next_fencing_token").asLong()).isZero();
        Reply nobody = member.get("/v1/elections/services%2Fapi");
        assertError(nobody, 404, "not_found", null);
        assertThat(nobody.json().get("message").asText()).contains("'services/api' has no leader");
    }

    @Test
    void aSecondOwnerIsToldWhoLeadsThenWaitsAndIsElectedAfterTheResignWithAHigherToken() throws Exception {
        JsonNode first = elected(campaign("line/up", "first", "one", 0));

        Reply refused = campaign("line/up", "second", "two", 0);

        assertError(refused, 409, "held", null);
        assertThat(refused.json().fieldNames()).toIterable().containsExactly(
                "error", "message", "election", "leader", "candidates", "recommended_retry_ms");
        assertThat(refused.json().get("election").asText()).isEqualTo("line/up");
        assertThat(refused.json().get("leader").asText()).isEqualTo("first");
        assertThat(refused.json().get("candidates").asInt()).isZero();
        assertThat(refused.json().get("message").asText()).contains("led by 'first'");
        // The leader's remaining TTL, with nobody in line.
        assertThat(refused.json().get("recommended_retry_ms").asLong()).isBetween(1_000L, 10_000L);
        assertThat(member.leasesOf("second")).as("the refused campaign's lease is revoked").isEmpty();

        CompletableFuture<Reply> second = campaignAsync("line/up", "second", "two", 60_000);
        Await.until("second stands in line", Duration.ofSeconds(30), () -> candidatesOf("line/up").equals(List.of("second")));
        CompletableFuture<Reply> third = campaignAsync("line/up", "third", "three", 60_000);
        Await.until("third stands behind second", Duration.ofSeconds(30),
                () -> candidatesOf("line/up").equals(List.of("second", "third")));
        JsonNode line = state("line/up").get("candidates");
        assertThat(line.get(0).fieldNames()).toIterable().containsExactly("lease_id", "owner_id", "joined_revision");
        assertThat(line.get(0).get("joined_revision").asLong()).isLessThan(line.get(1).get("joined_revision").asLong());
        Reply behind = campaign("line/up", "fourth", "four", 0);
        assertError(behind, 409, "held", null);
        assertThat(behind.json().get("candidates").asInt()).isEqualTo(2);
        assertThat(behind.json().get("message").asText()).contains("2 candidate(s) waiting");

        Reply resigned = resign(first);
        JsonNode next = elected(await(second));

        assertThat(resigned.status()).as(resigned.toString()).isEqualTo(200);
        assertThat(resigned.json().get("resigned").asBoolean()).isTrue();
        assertThat(next.get("owner_id").asText()).isEqualTo("second");
        assertThat(next.get("value").asText()).isEqualTo("two");
        assertThat(next.get("fencing_token").asLong()).isGreaterThan(first.get("fencing_token").asLong())
                .isEqualTo(resigned.json().get("next_fencing_token").asLong());
        assertThat(third).isNotDone();
        JsonNode state = state("line/up");
        assertThat(state.get("owner_id").asText()).isEqualTo("second");
        assertThat(state.get("value").asText()).isEqualTo("two");
        assertThat(state.get("version").asLong()).isEqualTo(2);
        assertThat(candidatesOf("line/up")).containsExactly("third");
        assertThat(member.leasesOf("first")).as("the resigned leader's lease is revoked").isEmpty();

        assertThat(resign(next).status()).isEqualTo(200);
        JsonNode last = elected(await(third));
        assertThat(last.get("fencing_token").asLong()).isGreaterThan(next.get("fencing_token").asLong());
        assertThat(resign(last).status()).isEqualTo(200);
    }

    @Test
    void aCandidateThatCancelsLeavesTheLineAndItsCampaignEnds() throws Exception {
        JsonNode leader = elected(campaign("cancel/line", "leader", "one", 0));
        CompletableFuture<Reply> quitter = campaignAsync("cancel/line", "quitter", "two", 60_000);
        Await.until("quitter campaigns", Duration.ofSeconds(30), () -> candidatesOf("cancel/line").equals(List.of("quitter")));
        CompletableFuture<Reply> patient = campaignAsync("cancel/line", "patient", "three", 60_000);
        Await.until("patient campaigns", Duration.ofSeconds(30), () -> candidatesOf("cancel/line").equals(List.of("quitter", "patient")));
        long lease = member.leaseIn("elections", "cancel/line", "candidates", "quitter");
        String cancel = path("cancel/line", "cancel");

        Reply r = member.post(cancel, body("owner_id", "quitter", "lease_id", lease));

        assertThat(r.status()).as(r.toString()).isEqualTo(200);
        assertThat(r.json().fieldNames()).toIterable().containsExactly("election", "owner_id", "lease_id", "elected", "leader", "candidates");
        assertThat(r.json().get("elected").asBoolean()).isFalse();
        assertThat(r.json().get("leader").asText()).isEqualTo("leader");
        assertThat(r.json().get("candidates").asInt()).isEqualTo(1);
        assertThat(candidatesOf("cancel/line")).containsExactly("patient");
        // The campaign that stood with the lease ends as when its wait runs out, and revokes its lease.
        assertError(await(quitter), 409, "held", null);
        Await.until("the quitter's lease is revoked", Duration.ofSeconds(30), () -> member.leasesOf("quitter").isEmpty());
        // Next in line after the resignation: the candidate that stayed, not the one that cancelled.
        assertThat(resign(leader).status()).isEqualTo(200);
        JsonNode next = elected(await(patient));
        assertThat(next.get("owner_id").asText()).isEqualTo("patient");

        // A cancel after the election answers the leadership, with its token.
        CompletableFuture<Reply> heir = campaignAsync("cancel/line", "heir", "four", 60_000);
        Await.until("heir campaigns", Duration.ofSeconds(30), () -> candidatesOf("cancel/line").equals(List.of("heir")));
        long heirLease = member.leaseIn("elections", "cancel/line", "candidates", "heir");
        assertThat(resign(next).status()).isEqualTo(200);
        JsonNode heirLeads = elected(await(heir));
        JsonNode late = elected(member.post(cancel, body("owner_id", "heir", "lease_id", heirLease)));
        assertThat(late.get("elected").asBoolean()).isTrue();
        assertThat(late.get("fencing_token").asLong()).isEqualTo(heirLeads.get("fencing_token").asLong())
                .isGreaterThan(next.get("fencing_token").asLong());
        assertThat(late.get("value").asText()).isEqualTo("four");
        assertThat(resign(late).status()).isEqualTo(200);

        // Refused: a lease never granted, another owner's, a missing field.
        assertError(member.post(cancel, body("owner_id", "heir", "lease_id", 424242)), 404, "lease_not_found", "lease_id");
        JsonNode other = elected(campaign("cancel/line", "other", "five", 0));
        assertError(member.post(cancel, body("owner_id", "heir", "lease_id", other.get("lease_id").asLong())), 409, "not_holder",
                "owner_id");
        assertError(member.post(cancel, body("owner_id", "heir")), 400, "invalid_argument", "lease_id");
        assertThat(state("cancel/line").get("owner_id").asText()).isEqualTo("other");
        assertThat(resign(other).status()).isEqualTo(200);
    }

    @Test
    void proclaimChangesTheValueWithoutANewElection() {
        JsonNode leader = elected(campaign("announce", "speaker", "v1", 0));

        Reply proclaimed = proclaim(leader, "v2");

        assertThat(proclaimed.status()).as(proclaimed.toString()).isEqualTo(200);
        assertThat(proclaimed.json().fieldNames()).toIterable().containsExactly("election", "fencing_token", "revision");
        long revision = proclaimed.json().get("revision").asLong();
        assertThat(revision).isGreaterThan(leader.get("fencing_token").asLong());
        JsonNode state = state("announce");
        assertThat(state.get("value").asText()).isEqualTo("v2");
        assertThat(state.get("value_revision").asLong()).isEqualTo(revision);
        assertThat(state.get("fencing_token").asLong()).isEqualTo(leader.get("fencing_token").asLong());
        assertThat(state.get("version").asLong()).isEqualTo(2);

        Reply stale = proclaim(((ObjectNode) leader.deepCopy()).put("fencing_token", leader.get("fencing_token").asLong() - 1), "v3");
        assertError(stale, 409, "stale", null);
        assertThat(state("announce").get("value").asText()).isEqualTo("v2");
        resign(leader);
    }

    @Test
    void aRetriedCampaignOfTheLeadingOwnerGetsTheSameLeadershipAndNoSecondLease() {
        JsonNode first = elected(campaign("retry/elect", "retrier", "here", 0));

        JsonNode again = elected(campaign("retry/elect", "retrier", "here", 0));

        assertThat(again.get("lease_id").asLong()).isEqualTo(first.get("lease_id").asLong());
        assertThat(again.get("fencing_token").asLong()).isEqualTo(first.get("fencing_token").asLong());
        assertThat(again.get("value").asText()).isEqualTo("here");
        assertThat(member.leasesOf("retrier")).hasSize(1);
        assertThat(state("retry/elect").get("candidates")).isEmpty();
        resign(first);
    }

    @Test
    void renewKeepsTheLeadersLeaseAliveAndRefusesAnyoneElse() {
        JsonNode leader = elected(member.post(path("renew/elect", "campaign"),
                body("owner_id", "renewer", "ttl_ms", 3_000, "value", "x")));
        long lease = leader.get("lease_id").asLong();
        long token = leader.get("fencing_token").asLong();
        Await.until("the lease's remaining TTL drops below 2.4 s", Duration.ofSeconds(10),
                () -> member.get("/v1/leases/" + lease).json().get("ttl_remaining_ms").asLong() < 2_400);

        Reply renewed = member.post(path("renew/elect", "renew"), claim(leader));

        assertThat(renewed.status()).as(renewed.toString()).isEqualTo(200);
        assertThat(renewed.json().fieldNames()).toIterable().containsExactly(
                "election", "owner_id", "lease_id", "fencing_token", "value", "ttl_remaining_ms", "expires_at_ms");
        assertThat(renewed.json().get("ttl_remaining_ms").asLong()).isGreaterThan(2_400);
        String renew = path("renew/elect", "renew");
        assertError(member.post(renew, body("owner_id", "renewer", "lease_id", lease, "fencing_token", token + 1)),
                409, "not_holder", "fencing_token");
        assertError(member.post(renew, body("owner_id", "intruder", "lease_id", lease, "fencing_token", token)),
                409, "not_holder", "owner_id");
        assertError(member.post(renew, body("owner_id", "renewer", "lease_id", 424242, "fencing_token", token)),
                409, "expired", "lease_id");
        assertError(member.post(path("renew/nobody", "renew"), claim(leader)), 409, "not_holder", "lease_id");
        resign(leader);
    }

    @Test
    void aStaleResignIsRefusedAndChangesNothingAndARetriedResignSucceedsAgain() {
        JsonNode leader = elected(campaign("resign/guarded", "owner", "v", 0));
        long lease = leader.get("lease_id").asLong();
        long token = leader.get("fencing_token").asLong();
        String resign = path("resign/guarded", "resign");
        JsonNode before = withoutRevision(state("resign/guarded"));

        Reply staleToken = member.post(resign, body("owner_id", "owner", "lease_id", lease, "fencing_token", token - 1));
        Reply otherOwner = member.post(resign, body("owner_id", "mallory", "lease_id", lease, "fencing_token", token));
        Reply endedLease = member.post(resign, body("owner_id", "owner", "lease_id", 424242, "fencing_token", token));

        assertError(staleToken, 409, "stale", null);
        assertThat(staleToken.json().get("message").asText()).contains("is stale for election 'resign/guarded'");
        assertError(otherOwner, 409, "stale", "owner_id");
        assertThat(otherOwner.json().get("message").asText()).contains("nothing was resigned");
        assertError(endedLease, 409, "stale", "lease_id");
        assertThat(withoutRevision(state("resign/guarded"))).isEqualTo(before);
        assertThat(member.leasesOf("owner")).containsExactly(lease);

        Reply first = resign(leader);
        Reply retry = resign(leader);
        assertThat(first.status()).as(first.toString()).isEqualTo(200);
        assertThat(retry.status()).as(retry.toString()).isEqualTo(200);
        assertThat(retry.json()).isEqualTo(first.json());
        assertThat(member.leasesOf("owner")).isEmpty();
        assertError(proclaim(leader, "late"), 409, "stale", "lease_id");
    }

    @Test
    void everyBadInputIsRefusedNamingTheFieldAndChangesNothing() {
        JsonNode leader = elected(campaign("bad/elect", "leader", "v", 0));
        JsonNode lock = member.acquire("bad/lock-name", "lock-holder", 10_000, 0).json();
        JsonNode electionBefore = withoutRevision(state("bad/elect"));
        Set<Long> leasesBefore = member.leasesOf("leader", "lock-holder", "prober");
        int electionsBefore = electionCount();
        String campaign = path("bad/elect", "campaign");

        // The name: blank, not UTF-8, too long.
        String ok = body("owner_id", "prober", "ttl_ms", 5_000, "value", "v");
        Reply blank = member.post("/v1/elections//campaign", ok);
        assertError(blank, 400, "invalid_argument", "election");
        assertThat(blank.json().get("message").asText()).contains("must not be empty");
        assertError(member.get("/v1/elections/"), 400, "invalid_argument", "election");
        assertError(member.post("/v1/elections/%C3/campaign", ok), 400, "invalid_argument", "election");
        assertError(member.post("/v1/elections/" + "n".repeat(1025) + "/campaign", ok), 400, "invalid_argument", "election");
        // The value: missing, mistyped, over 64 KiB; in a proclaim too.
        assertError(member.post(campaign, body("owner_id", "prober", "ttl_ms", 5_000)), 400, "invalid_argument", "value");
        assertError(member.post(campaign, body("owner_id", "prober", "ttl_ms", 5_000, "value", 7)), 400, "invalid_argument", "value");
        Reply bigValue = member.post(campaign, body("owner_id", "prober", "ttl_ms", 5_000, "value", "v".repeat(64 * 1024 + 1)));
        assertError(bigValue, 400, "invalid_argument", "value");
        assertThat(bigValue.json().get("message").asText()).contains("65536");
        assertError(proclaim(leader, "v".repeat(64 * 1024 + 1)), 400, "invalid_argument", "value");
        assertError(member.post(path("bad/elect", "proclaim"), claim(leader)), 400, "invalid_argument", "value");
        // The owner, the TTL and the wait, as for locks.
        assertError(member.post(campaign, body("ttl_ms", 5_000, "value", "v")), 400, "invalid_argument", "owner_id");
        assertError(member.post(campaign, body("owner_id", "", "ttl_ms", 5_000, "value", "v")), 400, "invalid_argument", "owner_id");
        assertError(member.post(campaign, body("owner_id", "prober", "value", "v")), 400, "invalid_argument", "ttl_ms");
        assertError(member.post(campaign, body("owner_id", "prober", "ttl_ms", "5s", "value", "v")), 400, "invalid_argument", "ttl_ms");
        assertError(member.post(campaign, body("owner_id", "prober", "ttl_ms", 500, "value", "v")), 400, "invalid_argument", "ttl_ms");
        assertError(member.post(campaign, body("owner_id", "prober", "ttl_ms", 25L * 60 * 60 * 1000, "value", "v")),
                400, "invalid_argument", "ttl_ms");
        assertError(member.post(campaign, body("owner_id", "prober", "ttl_ms", 5_000, "wait_ms", -1, "value", "v")),
                400, "invalid_argument", "wait_ms");
        assertError(member.post(campaign, body("owner_id", "prober", "ttl_ms", 5_000, "wait_ms", LeaseRecipe.MAX_WAIT_MS + 1,
                "value", "v")), 400, "invalid_argument", "wait_ms");
        // The claim of proclaim, renew and resign.
        assertError(member.post(path("bad/elect", "renew"), body("owner_id", "leader", "lease_id", 0, "fencing_token", 1)),
                400, "invalid_argument", "lease_id");
        assertError(member.post(path("bad/elect", "resign"), body("owner_id", "leader", "lease_id", 1)),
                400, "invalid_argument", "fencing_token");
        assertError(member.post(path("bad/elect", "proclaim"), body("lease_id", 1, "fencing_token", 1, "value", "v")),
                400, "invalid_argument", "owner_id");
        // The body and the route.
        assertError(member.post(campaign, "{\"owner_id\": "), 400, "invalid_json", null);
        Reply unknown = member.post(path("bad/elect", "acquire"), ok);
        assertError(unknown, 404, "unknown_route", null);
        assertThat(unknown.json().get("message").asText()).contains("/campaign, /proclaim, /renew, /resign and /cancel");

        assertThat(withoutRevision(state("bad/elect"))).isEqualTo(electionBefore);
        assertThat(member.leasesOf("leader", "lock-holder", "prober")).as("no lease was granted for a bad input").isEqualTo(leasesBefore);
        assertThat(electionCount()).as("no election was made for a bad input").isEqualTo(electionsBefore);
        resign(leader);
        member.release(lock);
    }

    @Test
    void aNameOfAnotherKindIsAConflictNamingBothKinds() {
        JsonNode lock = member.acquire("kinds/lock", "lock-holder", 10_000, 0).json();
        JsonNode leader = elected(campaign("kinds/election", "leader", "v", 0));
        int electionsBefore = electionCount();

        Reply aLock = campaign("kinds/lock", "prober", "v", 0);
        Reply anElection = member.acquire("kinds/election", "prober", 5_000, 0);
        Reply asSemaphore = member.post("/v1/semaphores/kinds%2Felection/acquire",
                body("owner_id", "prober", "ttl_ms", 5_000, "limit", 2));

        assertError(aLock, 409, "conflict", "election");
        assertThat(aLock.json().get("message").asText()).contains("'kinds/lock' is a lock, not an election");
        assertError(anElection, 409, "conflict", "lock");
        assertThat(anElection.json().get("message").asText()).contains("'kinds/election' is an election, not a lock");
        assertError(asSemaphore, 409, "conflict", "semaphore");
        assertThat(asSemaphore.json().get("message").asText()).contains("'kinds/election' is an election, not a semaphore");
        assertThat(member.leasesOf("prober")).as("the refused acquires' leases are revoked").isEmpty();
        assertThat(electionCount()).isEqualTo(electionsBefore);
        assertThat(state("kinds/election").get("owner_id").asText()).isEqualTo("leader");
        resign(leader);
        member.release(lock);
    }

    /** The state without what later writes and time move: its read revision and the leader's expiry. */
    private static JsonNode withoutRevision(JsonNode state) {
        ObjectNode copy = state.deepCopy();
        copy.remove("revision");
        copy.remove("ttl_remaining_ms");
        copy.remove("expires_at_ms");
        return copy;
    }
}
