package io.tenure.it.safety;

import static io.tenure.it.safety.RunFixture.position;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.Effect;
import io.tenure.core.kernel.LeaseGrant;
import io.tenure.core.semaphore.SemaphoreAcquire;
import io.tenure.core.semaphore.SemaphoreRelease;
import io.tenure.core.semaphore.SemaphoreResult;
import io.tenure.it.safety.CheckOutcome.Status;
import io.tenure.it.safety.Op.Kind;
import io.tenure.it.safety.Op.Outcome;
import io.tenure.it.safety.PermitDecision.Event;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The semaphore side of the safety suite: the fenced resource's per-grant fence
 * ({@link PermitFence}), the replay of its decisions that both checkers run, the harness's check
 * of the clients' SEM_WRITE outcomes, and the checker over a hand-made run of a semaphore of
 * limit 3, clean and with one planted violation each.
 */
class SemaphoreChecksTest {
    private static final Map<String, Integer> LIMIT_3 = Map.of("s", 3);

    @TempDir
    Path tmp;

    // ---- the fence ------------------------------------------------------------------------------

    @Test
    void aNewerGrantThatNeedsTheirPermitsDisplacesTheOldestHeldGrantsWhoseLaterWritesAreRefused() {
        PermitFence fence = new PermitFence(LIMIT_3);
        assertThat(fence.write("s", 10, 1, "c1/1", 1)).extracting(PermitDecision::accepted).containsExactly(true);
        assertThat(fence.write("s", 20, 2, "c2/1", 2)).extracting(PermitDecision::accepted).containsExactly(true);

        List<PermitDecision> third = fence.write("s", 30, 1, "c3/1", 3);

        assertThat(third).extracting(PermitDecision::event, PermitDecision::token, PermitDecision::accepted)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(Event.DISPLACE, 10L, true),
                        org.assertj.core.groups.Tuple.tuple(Event.WRITE, 30L, true));
        assertThat(fence.write("s", 10, 1, "c1/2", 4)).singleElement().satisfies(d -> {
            assertThat(d.accepted()).isFalse();
            assertThat(d.reason()).contains("holding of grant 10 ended");
        });
        assertThat(fence.write("s", 20, 2, "c2/2", 5)).singleElement().extracting(PermitDecision::accepted).isEqualTo(true);
        assertThat(fence.end("s", 10, 1, "c1/3", 6).accepted()).as("a displaced grant's END finds nothing held").isFalse();
    }

    @Test
    void aGrantThatCannotHaveBeenHeldBesideANewerAcceptedOneIsStaleEvenAfterThatOneEnded() {
        PermitFence fence = new PermitFence(LIMIT_3);
        fence.write("s", 20, 2, "c2/1", 1);
        fence.end("s", 20, 2, "c2/2", 2);

        // 2 + 2 > 3: grant 10 had ended when grant 20 was made.
        assertThat(fence.write("s", 10, 2, "c1/1", 3)).singleElement().satisfies(d -> {
            assertThat(d.accepted()).isFalse();
            assertThat(d.reason()).contains("stale", "grant 20");
        });
        // 1 + 2 <= 3: grant 11 may have been held beside grant 20, and nothing is held now.
        assertThat(fence.write("s", 11, 1, "c3/1", 4)).singleElement().extracting(PermitDecision::accepted).isEqualTo(true);
    }

    @Test
    void aLowerGrantIsRefusedWhenNewerHeldGrantsLeaveItNoRoom() {
        PermitFence fence = new PermitFence(LIMIT_3);
        fence.write("s", 20, 1, "c2/1", 1);
        fence.write("s", 30, 1, "c3/1", 2);

        assertThat(fence.write("s", 10, 2, "c1/1", 3)).singleElement().extracting(PermitDecision::accepted).isEqualTo(false);
        assertThat(fence.write("s", 15, 1, "c4/1", 4)).singleElement().extracting(PermitDecision::accepted).isEqualTo(true);
    }

    @Test
    void withALimitOfOneTheFenceIsTheLocksAtLeastFence() {
        PermitFence fence = new PermitFence(Map.of("s", 1));
        assertThat(fence.write("s", 10, 1, "c1/1", 1)).extracting(PermitDecision::accepted).containsExactly(true);
        assertThat(fence.write("s", 10, 1, "c1/2", 2)).extracting(PermitDecision::accepted).containsExactly(true);
        assertThat(fence.write("s", 20, 1, "c2/1", 3)).extracting(PermitDecision::event).containsExactly(Event.DISPLACE, Event.WRITE);
        assertThat(fence.write("s", 15, 1, "c3/1", 4)).extracting(PermitDecision::accepted).containsExactly(false);
        assertThat(fence.write("s", 10, 1, "c1/3", 5)).extracting(PermitDecision::accepted).containsExactly(false);
    }

    @Test
    void whatTheFenceDecidesPassesItsOwnReplay() {
        PermitFence fence = new PermitFence(LIMIT_3);
        List<PermitDecision> log = new ArrayList<>();
        java.util.Random random = new java.util.Random(7);
        for (int i = 1; i <= 2_000; i++) {
            long token = 1 + random.nextInt(400);
            int permits = 1 + random.nextInt(3);
            if (random.nextInt(4) == 0) {
                log.add(fence.end("s", token, permits, "c/" + i, i));
            } else {
                log.addAll(fence.write("s", token, permits, "c/" + i, i));
            }
        }
        assertThat(log).anyMatch(d -> d.event() == Event.DISPLACE).anyMatch(d -> d.event() == Event.WRITE && !d.accepted());
        assertThat(PermitFence.breaches(log, LIMIT_3)).isEmpty();
    }

    // ---- the replay of the resource's view --------------------------------------------------------

    @Test
    void fourOverlappingHoldersOfOnePermitOfALimitOfThreeAreABreach() {
        List<PermitDecision> log = List.of(write(10, 1, "c1/1", 1), write(11, 1, "c2/1", 2), write(12, 1, "c3/1", 3),
                write(13, 1, "c4/1", 4));

        assertThat(PermitFence.breaches(log, LIMIT_3)).singleElement().satisfies(b -> {
            assertThat(b.description()).contains("limit 3", "4 permits held", "c4/1");
            assertThat(b.writers()).containsExactly("c1/1", "c2/1", "c3/1", "c4/1");
        });
    }

    @Test
    void theSameHoldersOneOfWhichEndedFirstAreNoBreach() {
        List<PermitDecision> log = List.of(write(10, 1, "c1/1", 1), write(11, 1, "c2/1", 2), write(12, 1, "c3/1", 3),
                new PermitDecision("s", Event.END, 10, 1, "c1/2", 4, true, null), write(13, 1, "c4/1", 5),
                write(11, 1, "c2/2", 6));

        assertThat(PermitFence.breaches(log, LIMIT_3)).isEmpty();
    }

    @Test
    void aWriteAcceptedAfterItsGrantsHoldingEndedOrBesideANewerGrantItExcludesIsABreach() {
        List<PermitDecision> ended = List.of(write(10, 1, "c1/1", 1), new PermitDecision("s", Event.END, 10, 1, "c1/2", 2, true, null),
                write(10, 1, "c1/3", 3));
        assertThat(PermitFence.breaches(ended, LIMIT_3)).singleElement().extracting(PermitFence.Breach::description).asString()
                .contains("after its holding had ended");

        List<PermitDecision> stale = List.of(write(20, 2, "c2/1", 1), new PermitDecision("s", Event.END, 20, 2, "c2/2", 2, true, null),
                write(10, 2, "c1/1", 3));
        assertThat(PermitFence.breaches(stale, LIMIT_3)).singleElement().extracting(PermitFence.Breach::description).asString()
                .contains("stale write accepted", "grant 10 with 2 permits", "after grant 20");
    }

    @Test
    void aSemWriteRecordedOkThatTheResourceRefusedIsAHarnessViolation() {
        List<PermitDecision> log = List.of(new PermitDecision("s", Event.WRITE, 10, 2, "c1/7", 1, false, "stale"), write(11, 1, "c2/3", 2));
        List<Op> ops = List.of(semWrite("c1", 7, 10, 2, Outcome.OK), semWrite("c2", 3, 11, 1, Outcome.OK),
                semWrite("c3", 4, 12, 1, Outcome.INFO));
        List<String> violations = new ArrayList<>();

        HarnessChecks.checkPermits(ops, log, LIMIT_3, violations);

        assertThat(violations).singleElement().asString().contains("c1 recorded SEM_WRITE 7 OK", "refused");
    }

    private static PermitDecision write(long token, int permits, String writer, long at) {
        return new PermitDecision("s", Event.WRITE, token, permits, writer, at, true, null);
    }

    private static Op semWrite(String process, long id, long token, int permits, Outcome outcome) {
        return new Op(id, process, Kind.SEM_WRITE, "s", 1, token, permits, 0, 1, 2, outcome, 0, null, null, null);
    }

    // ---- the checker over a hand-made run ----------------------------------------------------------

    /** What to plant in the semaphore run. */
    enum Plant { NOTHING, OVER_LIMIT, PASSED_A_WAITER, RESOURCE_OVER_LIMIT, LOST_GRANT }

    /**
     * Semaphore s of limit 3: c1 takes 2 permits and c2 1; c3 queues for 2; c2 releases (1 free,
     * not enough for the head); c4 asks for 1 and queues behind c3 (strict FIFO); c1's release
     * hands 2 to c3 and 1 to c4, in that order; both release. Each holder writes the fenced
     * resource once and ends its holding there before releasing.
     */
    private Path semaphoreRun(Plant plant) throws IOException {
        RunFixture run = new RunFixture(Files.createDirectories(tmp.resolve(plant.name())), "n1", "n2");
        run.semaphores.put("s", 3);
        BiConsumer<String, ObjectNode> untouched = (member, line) -> { };
        run.noop(0);                                                                             // 0
        run.apply(10, new LeaseGrant(201, 5000, "c1"));                                          // 1
        run.apply(11, new LeaseGrant(202, 5000, "c2"));                                          // 2
        run.apply(12, new LeaseGrant(203, 5000, "c3"));                                          // 3
        long t1 = token(run.apply(20, new SemaphoreAcquire("s", 201, 3, 2, true, 1)));            // 4
        long t2 = token(run.apply(26, new SemaphoreAcquire("s", 202, 3, 1, true, 1)));            // 5
        run.apply(30, new SemaphoreAcquire("s", 203, 3, 2, true, 1), plant == Plant.OVER_LIMIT    // 6: queued
                ? (member, line) -> line.set("result", granted(203, 2, position(6)))
                : untouched);
        run.apply(400, new SemaphoreRelease("s", 202, t2));                                       // 7: 1 free
        run.apply(500, new LeaseGrant(204, 5000, "c4"));                                          // 8
        run.apply(510, new SemaphoreAcquire("s", 204, 3, 1, true, 1), plant == Plant.PASSED_A_WAITER // 9: queued
                ? (member, line) -> line.set("result", granted(204, 1, position(9)))
                : untouched);
        List<SemaphoreResult.Granted> handed = handed(run.apply(1000, new SemaphoreRelease("s", 201, t1))); // 10
        long t3 = handed.get(0).fencingToken();
        long t4 = handed.get(1).fencingToken();
        run.apply(1500, new SemaphoreRelease("s", 203, t3));                                      // 11
        run.apply(1600, new SemaphoreRelease("s", 204, t4));                                      // 12
        run.digest(untouched);

        run.ok("c1", Kind.GRANT, null, 201, 0, 0, 5, 15);
        run.ok("c2", Kind.GRANT, null, 202, 0, 0, 6, 16);
        run.ok("c3", Kind.GRANT, null, 203, 0, 0, 7, 17);
        run.ok("c4", Kind.GRANT, null, 204, 0, 0, 490, 505);
        Op a1 = run.ok("c1", Kind.SEM_ACQUIRE, "s", 201, t1, 2, 18, 22);
        Op a2 = run.ok("c2", Kind.SEM_ACQUIRE, "s", 202, t2, 1, 24, 28);
        Op a3 = run.ok("c3", Kind.SEM_ACQUIRE, "s", 203, t3, 2, 29, 1010);
        Op a4 = run.ok("c4", Kind.SEM_ACQUIRE, "s", 204, t4, 1, 508, 1012);
        if (plant == Plant.LOST_GRANT) {
            run.ok("c9", Kind.SEM_ACQUIRE, "s", 209, position(8), 1, 480, 520); // index 8 granted lease 204, not a semaphore
        }
        cycle(run, a1, 100, 990, plant != Plant.RESOURCE_OVER_LIMIT);
        cycle(run, a2, 200, 390, true);
        cycle(run, a3, 1100, 1490, true);
        cycle(run, a4, 1200, 1590, true);
        return run.finish();
    }

    /** The holder of {@code grant} writes at {@code writeMillis}, ends its holding at the resource and releases at {@code endMillis}. */
    private static void cycle(RunFixture run, Op grant, long writeMillis, long endMillis, boolean ends) {
        Op write = run.ok(grant.process(), Kind.SEM_WRITE, "s", grant.leaseId(), grant.token(), grant.value(), writeMillis,
                writeMillis + 5);
        run.permit(write, Event.WRITE, writeMillis + 2, true);
        Op release = run.ok(grant.process(), Kind.SEM_RELEASE, "s", grant.leaseId(), grant.token(), grant.value(), endMillis + 5,
                endMillis + 20);
        if (ends) {
            run.permit(release, Event.END, endMillis, true);
        }
    }

    private static long token(Applied applied) {
        return ((SemaphoreResult.Granted) applied.result()).fencingToken();
    }

    private static List<SemaphoreResult.Granted> handed(Applied applied) {
        return applied.effects().stream().filter(e -> e instanceof Effect.Wake w && w.result() instanceof SemaphoreResult.Granted)
                .map(e -> (SemaphoreResult.Granted) ((Effect.Wake) e).result()).toList();
    }

    private static ObjectNode granted(long lease, int permits, long token) {
        ObjectNode result = AppliedLog.JSON.createObjectNode();
        result.put("type", "Granted").put("key", "s").put("leaseId", lease).put("permits", permits).put("fencingToken", token)
                .put("again", false);
        return result;
    }



    @Test
    void aCleanSemaphoreRunPassesTheChecksThatCoverSemaphores() throws IOException {
        Verdict verdict = SafetyChecker.check(semaphoreRun(Plant.NOTHING));

        assertThat(verdict.violations()).as(verdict.report()).isEmpty();
        for (int check : new int[] {1, 2, 3, 4, 5, 6, 8}) {
            assertThat(verdict.outcome(check).status()).as(verdict.report()).isEqualTo(Status.PASSED);
        }
        assertThat(verdict.outcome(1).evidence()).contains("4 of semaphores");
        assertThat(verdict.outcome(2).evidence()).contains("semaphores {s=3}: 8 decisions (4 writes accepted, 0 grants displaced)",
                "4 accepted grants found in the log");
        assertThat(verdict.outcome(3).evidence()).contains("8 semaphore commands", "permits held at most 3");
        assertThat(verdict.outcome(4).evidence()).contains("4 of semaphores (key, lease, permits)");
        assertThat(verdict.outcome(8).evidence()).contains("2 semaphore hand-offs checked head first");
    }

    @Test
    void moreGrantedPermitsThanTheLimitByTheLogAreCheck3() throws IOException {
        Verdict verdict = SafetyChecker.check(semaphoreRun(Plant.OVER_LIMIT));

        assertThat(verdict.violatedChecks()).as(verdict.report()).contains(3);
        assertThat(verdict.descriptions(3))
                .anyMatch(d -> d.contains("index 6") && d.contains("semaphore 's' (limit 3) has 5 permits held by the log"))
                .anyMatch(d -> d.contains("index 6") && d.contains("the model gives"));
    }

    @Test
    void aNewcomerGrantedPastAWaiterIsCheck8() throws IOException {
        Verdict verdict = SafetyChecker.check(semaphoreRun(Plant.PASSED_A_WAITER));

        assertThat(verdict.violatedChecks()).as(verdict.report()).contains(8);
        assertThat(verdict.descriptions(8)).anyMatch(d -> d.contains("index 9")
                && d.contains("granted 1 permits to newcomer lease 204 past 1 waiter(s), first lease 203"));
    }

    @Test
    void fourPermitsHeldByTheResourcesViewAreCheck2() throws IOException {
        Verdict verdict = SafetyChecker.check(semaphoreRun(Plant.RESOURCE_OVER_LIMIT));

        assertThat(verdict.violatedChecks()).as(verdict.report()).containsExactly(2);
        assertThat(verdict.descriptions(2)).singleElement().asString().contains("limit 3", "4 permits held by the resource's view");
        assertThat(verdict.violations().get(0).around()).extracting(Op::process).contains("c1", "c3");
    }

    @Test
    void anAcknowledgedGrantThatTheLogNeverMadeIsCheck6() throws IOException {
        Verdict verdict = SafetyChecker.check(semaphoreRun(Plant.LOST_GRANT));

        // The answer does not match the log either (check 4).
        assertThat(verdict.violatedChecks()).as(verdict.report()).containsExactly(4, 6);
        assertThat(verdict.descriptions(6)).singleElement().asString().contains("acknowledged c9 SEM_ACQUIRE 's' lease 209",
                "in no member's applied log");
    }
}
