package io.tenure.it.safety;

import static io.tenure.it.safety.RunFixture.position;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tenure.core.election.ElectionCampaign;
import io.tenure.core.election.ElectionProclaim;
import io.tenure.core.election.ElectionResign;
import io.tenure.core.election.ElectionResult;
import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.Effect;
import io.tenure.core.kernel.LeaseGrant;
import io.tenure.it.safety.CheckOutcome.Status;
import io.tenure.it.safety.Op.Kind;
import io.tenure.it.safety.Op.Outcome;
import io.tenure.it.safety.PermitDecision.Event;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The election side of the safety suite: the fenced resource's leader fence over its line
 * protocol, the replay of its decisions (one leadership at a time), the harness's check of the
 * clients' LEAD_WRITE outcomes, and the checker over a hand-made run of one election, clean and
 * with one planted violation each.
 */
class ElectionChecksTest {
    private static final List<String> ELECTION = List.of("e");

    @TempDir
    Path tmp;

    // ---- the resource ---------------------------------------------------------------------------

    @Test
    void aNewerLeadersWriteDisplacesTheOlderLeaderWhoseLaterWriteIsRefused() throws IOException {
        try (FencedResource resource = new FencedResource(tmp.resolve("resource.jsonl"), FencedResource.Fence.AT_LEAST,
                tmp.resolve("permits.jsonl"), Map.of(), tmp.resolve("leaders.jsonl"), ELECTION);
             ResourceClient client = new ResourceClient(resource.endpoint())) {
            assertThat(client.leaderWrite("e", 10, "c1/1")).as("the first leader's write").isNull();
            assertThat(client.leaderWrite("e", 10, "c1/2")).as("its second write").isNull();
            assertThat(client.leaderWrite("e", 20, "c2/1")).as("a newer leader's write").isNull();
            assertThat(client.leaderWrite("e", 10, "c1/3")).as("the deposed leader's write").startsWith("REFUSE");
            assertThat(client.leaderWrite("e", 15, "c3/1")).as("a leadership older than the one that wrote").startsWith("REFUSE");
            assertThat(client.leaderEnd("e", 10, "c1/4")).as("the deposed leader's end").startsWith("NOTHELD");
            assertThat(client.leaderEnd("e", 20, "c2/2")).as("the leader's end").isNull();
            assertThat(client.leaderWrite("e", 20, "c2/3")).as("a write after the end").startsWith("REFUSE");
            assertThat(client.leaderWrite("x", 30, "c4/1")).as("a name that is no election of the run").startsWith("REFUSE");
        }
        List<PermitDecision> log = JsonLines.read(tmp.resolve("leaders.jsonl"), PermitDecision.class);
        assertThat(log).extracting(PermitDecision::event).containsOnlyOnce(Event.DISPLACE);
        assertThat(log).allSatisfy(d -> assertThat(d.permits()).isEqualTo(1));
        assertThat(PermitFence.leaderBreaches(log, ELECTION)).isEmpty();
        assertThat(Files.readString(tmp.resolve("permits.jsonl"))).as("semaphores' log").isEmpty();
    }

    @Test
    void twoLeadershipsHeldAtOnceByTheResourcesViewAreABreach() {
        List<PermitDecision> overlap = List.of(write(10, "c1/1", 1), write(20, "c2/1", 2));
        assertThat(PermitFence.leaderBreaches(overlap, ELECTION)).singleElement().satisfies(b -> {
            assertThat(b.description()).contains("two leaders: election 'e' has 2 leaderships held", "c2/1");
            assertThat(b.writers()).containsExactly("c1/1", "c2/1");
        });

        List<PermitDecision> stale = List.of(write(20, "c2/1", 1), new PermitDecision("e", Event.END, 20, 1, "c2/2", 2, true, null),
                write(10, "c1/1", 3));
        assertThat(PermitFence.leaderBreaches(stale, ELECTION)).singleElement().extracting(PermitFence.Breach::description).asString()
                .contains("stale write accepted: election 'e' accepted leadership 10", "after a newer leader's, leadership 20");

        List<PermitDecision> handedOver = List.of(write(10, "c1/1", 1), new PermitDecision("e", Event.END, 10, 1, "c1/2", 2, true, null),
                write(20, "c2/1", 3), write(20, "c2/2", 4));
        assertThat(PermitFence.leaderBreaches(handedOver, ELECTION)).isEmpty();
    }

    @Test
    void aLeadWriteRecordedOkThatTheResourceRefusedIsAHarnessViolation() {
        List<PermitDecision> log = List.of(new PermitDecision("e", Event.WRITE, 10, 1, "c1/7", 1, false, "stale"), write(11, "c2/3", 2));
        List<Op> ops = List.of(leadWrite("c1", 7, 10, Outcome.OK), leadWrite("c2", 3, 11, Outcome.OK), leadWrite("c3", 4, 12, Outcome.INFO));
        List<String> violations = new ArrayList<>();

        HarnessChecks.checkLeaders(ops, log, ELECTION, violations);

        assertThat(violations).singleElement().asString().contains("c1 recorded LEAD_WRITE 7 OK", "refused token 10");
    }

    private static PermitDecision write(long token, String writer, long at) {
        return new PermitDecision("e", Event.WRITE, token, 1, writer, at, true, null);
    }

    private static Op leadWrite(String process, long id, long token, Outcome outcome) {
        return new Op(id, process, Kind.LEAD_WRITE, "e", 1, token, 0, 0, 1, 2, outcome, 0, null, null, null);
    }

    // ---- the checker over a hand-made run ----------------------------------------------------------

    /** What to plant in the election run. */
    enum Plant { NOTHING, TWO_LEADERS, PASSED_A_CANDIDATE, RESOURCE_OVERLAP, LOST_CAMPAIGN }

    /**
     * Election e: c1 is elected; c2 and c3 stand in line; c1 proclaims and resigns, which hands
     * the leadership to c2; c4 stands behind c3; c2 resigns (c3 leads), c3 resigns (c4 leads), c4
     * resigns (nobody leads). Each leader writes the fenced resource once and ends its holding
     * there before resigning.
     */
    private Path electionRun(Plant plant) throws IOException {
        RunFixture run = new RunFixture(Files.createDirectories(tmp.resolve(plant.name())), "n1", "n2");
        run.elections.add("e");
        BiConsumer<String, ObjectNode> untouched = (member, line) -> { };
        run.noop(0);                                                                                // 0
        run.apply(10, new LeaseGrant(201, 5000, "c1"));                                             // 1
        run.apply(11, new LeaseGrant(202, 5000, "c2"));                                             // 2
        run.apply(12, new LeaseGrant(203, 5000, "c3"));                                             // 3
        long t1 = ((ElectionResult.Elected) run.apply(20, campaign(201, "c1/1")).result()).fencingToken(); // 4
        run.apply(30, campaign(202, "c2/1"), plant == Plant.TWO_LEADERS                             // 5: a candidate
                ? (member, line) -> line.set("result", elected(202, position(5)))
                : untouched);
        run.apply(40, campaign(203, "c3/1"));                                                       // 6: a candidate
        long r1 = ((ElectionResult.Proclaimed) run.apply(300, new ElectionProclaim("e", 201, t1, bytes("c1/2"))).result()).revision(); // 7
        long t2 = handedTo(run.apply(600, new ElectionResign("e", 201, t1)));                        // 8: c2 leads
        run.apply(650, new LeaseGrant(204, 5000, "c4"));                                            // 9
        run.apply(660, campaign(204, "c4/1"), plant == Plant.PASSED_A_CANDIDATE                     // 10: behind c3
                ? (member, line) -> line.set("result", elected(204, position(10)))
                : untouched);
        long t3 = handedTo(run.apply(1000, new ElectionResign("e", 202, t2)));                       // 11: c3 leads
        long t4 = handedTo(run.apply(1400, new ElectionResign("e", 203, t3)));                       // 12: c4 leads
        run.apply(1800, new ElectionResign("e", 204, t4));                                          // 13: nobody leads
        run.digest(untouched);

        run.ok("c1", Kind.GRANT, null, 201, 0, 0, 5, 15);
        run.ok("c2", Kind.GRANT, null, 202, 0, 0, 6, 16);
        run.ok("c3", Kind.GRANT, null, 203, 0, 0, 7, 17);
        run.ok("c4", Kind.GRANT, null, 204, 0, 0, 640, 655);
        Op a1 = run.ok("c1", Kind.CAMPAIGN, "e", 201, t1, 0, 18, 22);
        Op a2 = run.ok("c2", Kind.CAMPAIGN, "e", 202, t2, 0, 29, 605);
        Op a3 = run.ok("c3", Kind.CAMPAIGN, "e", 203, t3, 0, 39, 1005);
        Op a4 = run.ok("c4", Kind.CAMPAIGN, "e", 204, t4, 0, 658, 1405);
        if (plant == Plant.LOST_CAMPAIGN) {
            run.ok("c9", Kind.CAMPAIGN, "e", 209, position(9), 0, 630, 700); // index 9 granted lease 204, elected nobody
        }
        run.op("c1", Kind.PROCLAIM, "e", 201, t1, 0, 295, 305, Outcome.OK, r1); // its answer names the revision
        lead(run, a1, 100, 590, plant != Plant.RESOURCE_OVERLAP);
        lead(run, a2, 700, 990, true);
        lead(run, a3, 1100, 1390, true);
        lead(run, a4, 1500, 1790, true);
        return run.finish();
    }

    /** The leader {@code won} writes at {@code writeMillis}, ends its holding at the resource and resigns at {@code endMillis}. */
    private static void lead(RunFixture run, Op won, long writeMillis, long endMillis, boolean ends) {
        Op write = run.ok(won.process(), Kind.LEAD_WRITE, "e", won.leaseId(), won.token(), 0, writeMillis, writeMillis + 5);
        run.leader(write, Event.WRITE, writeMillis + 2, true);
        Op resign = run.ok(won.process(), Kind.RESIGN, "e", won.leaseId(), won.token(), 0, endMillis + 5, endMillis + 20);
        if (ends) {
            run.leader(resign, Event.END, endMillis, true);
        }
    }

    private static ElectionCampaign campaign(long lease, String value) {
        return new ElectionCampaign("e", lease, bytes(value), true, 1);
    }

    private static byte[] bytes(String value) {
        return value.getBytes(StandardCharsets.UTF_8);
    }

    /** The token of the leadership a resignation handed to the next candidate. */
    private static long handedTo(Applied applied) {
        return applied.effects().stream().filter(e -> e instanceof Effect.Wake w && w.result() instanceof ElectionResult.Elected)
                .map(e -> ((ElectionResult.Elected) ((Effect.Wake) e).result()).fencingToken()).findFirst().orElseThrow();
    }

    private static ObjectNode elected(long lease, long token) {
        ObjectNode result = AppliedLog.JSON.createObjectNode();
        result.put("type", "Elected").put("key", "e").put("leaseId", lease).put("fencingToken", token).put("again", false);
        return result;
    }



    @Test
    void aCleanElectionRunPassesTheChecksThatCoverElections() throws IOException {
        Verdict verdict = SafetyChecker.check(electionRun(Plant.NOTHING));

        assertThat(verdict.violations()).as(verdict.report()).isEmpty();
        for (int check : new int[] {1, 2, 3, 4, 5, 6, 8}) {
            assertThat(verdict.outcome(check).status()).as(verdict.report()).isEqualTo(Status.PASSED);
        }
        assertThat(verdict.outcome(1).evidence()).contains("4 leaderships of elections");
        assertThat(verdict.outcome(2).evidence()).contains("elections [e]: 8 decisions (4 writes accepted, 0 leaderships displaced)",
                "4 client writes", "4 accepted leaderships found in the log");
        assertThat(verdict.outcome(3).evidence()).contains("9 election commands");
        assertThat(verdict.outcome(4).evidence()).contains("4 elections won (key, lease)");
        assertThat(verdict.outcome(6).evidence()).as("4 grants, 4 campaigns, a proclaim, 4 resignations").contains("13 acknowledged");
        assertThat(verdict.outcome(8).evidence()).contains("3 leaderships handed to the first candidate");
    }

    @Test
    void aSecondLeaderByTheLogIsCheck3() throws IOException {
        Verdict verdict = SafetyChecker.check(electionRun(Plant.TWO_LEADERS));

        assertThat(verdict.violatedChecks()).as(verdict.report()).contains(3);
        assertThat(verdict.descriptions(3))
                .anyMatch(d -> d.contains("index 5") && d.contains("two leaders of election 'e': lease 201"))
                .anyMatch(d -> d.contains("index 5") && d.contains("the model gives"));
    }

    @Test
    void aNewcomerElectedPastACandidateIsCheck8() throws IOException {
        Verdict verdict = SafetyChecker.check(electionRun(Plant.PASSED_A_CANDIDATE));

        assertThat(verdict.violatedChecks()).as(verdict.report()).contains(8);
        assertThat(verdict.descriptions(8)).anyMatch(d -> d.contains("index 10")
                && d.contains("elected newcomer lease 204 past 1 candidate(s), first lease 203"));
    }

    @Test
    void twoLeadershipsHeldAtOnceByTheResourcesViewAreCheck2() throws IOException {
        Verdict verdict = SafetyChecker.check(electionRun(Plant.RESOURCE_OVERLAP));

        assertThat(verdict.violatedChecks()).as(verdict.report()).containsExactly(2);
        // c1's holding never ended at the resource: each later leader's write was accepted beside it.
        assertThat(verdict.descriptions(2)).hasSize(3)
                .allMatch(d -> d.contains("two leaders: election 'e' has 2 leaderships held") && d.contains("(c1/"));
        assertThat(verdict.violations().get(0).around()).extracting(Op::process).contains("c1", "c2");
    }

    @Test
    void anAcknowledgedCampaignThatTheLogNeverElectedIsCheck6() throws IOException {
        Verdict verdict = SafetyChecker.check(electionRun(Plant.LOST_CAMPAIGN));

        // The answer does not match the log either (check 4).
        assertThat(verdict.violatedChecks()).as(verdict.report()).containsExactly(4, 6);
        assertThat(verdict.descriptions(6)).singleElement().asString().contains("acknowledged c9 CAMPAIGN 'e' lease 209",
                "in no member's applied log");
    }
}
