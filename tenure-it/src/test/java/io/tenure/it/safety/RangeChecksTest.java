package io.tenure.it.safety;

import static io.tenure.it.safety.RunFixture.position;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.Effect;
import io.tenure.core.kernel.LeaseGrant;
import io.tenure.core.scope.LockScope;
import io.tenure.core.scope.ScopeAcquire;
import io.tenure.core.scope.ScopeRelease;
import io.tenure.core.scope.ScopeRequest;
import io.tenure.core.scope.ScopeResult;
import io.tenure.it.safety.CheckOutcome.Status;
import io.tenure.it.safety.Op.Kind;
import io.tenure.it.safety.Op.Outcome;
import io.tenure.it.safety.RangeDecision.Event;
import io.tenure.server.raft.AuditLog;
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
 * The byte-range side of the safety suite (issue 21): the fenced resource's range fence
 * ({@link RangeHoldings}, over the SDK's scope-aware guard) and its line protocol, the replay of
 * its decisions that both checkers run ("no overlapping writes accepted"), the harness's check of
 * the clients' RANGE_WRITE outcomes, and the checker over a hand-made run of three range writers
 * on inode 7, clean and with one planted violation each (in the applied log, and in the
 * resource's view).
 */
class RangeChecksTest {
    private static final long INODE = 7;

    @TempDir
    Path tmp;

    // ---- the fence ------------------------------------------------------------------------------

    @Test
    void aNewerConflictingGrantDisplacesTheOlderWhoseLaterWriteIsRefusedEvenWhereItDidNotWriteTheSameBytes() {
        RangeHoldings fence = new RangeHoldings(INODE);
        assertThat(fence.write(INODE, 0, 8192, "0-8192", "EXCLUSIVE", 10, "c1/1", 1)).extracting(RangeDecision::accepted)
                .containsExactly(true);

        List<RangeDecision> newer = fence.write(INODE, 4096, 12288, "4096-12288", "EXCLUSIVE", 20, "c2/1", 2);

        assertThat(newer).extracting(RangeDecision::event, RangeDecision::token, RangeDecision::accepted)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(Event.DISPLACE, 10L, true),
                        org.assertj.core.groups.Tuple.tuple(Event.WRITE, 20L, true));
        // Page 0 was written by grant 10 only, yet its holding ended: refused by the resource's view, not the guard.
        assertThat(fence.write(INODE, 0, 4096, "0-8192", "EXCLUSIVE", 10, "c1/2", 3)).singleElement().satisfies(d -> {
            assertThat(d.accepted()).isFalse();
            assertThat(d.reason()).contains("holding of grant 10 ended");
        });
        // A grant older than 20 that never wrote, overlapping it: stale by rule 3 (the guard alone would take bytes 8192+).
        assertThat(fence.write(INODE, 8192, 16384, "8192-16384", "EXCLUSIVE", 15, "c3/1", 4)).singleElement().satisfies(d -> {
            assertThat(d.accepted()).isFalse();
            assertThat(d.reason()).contains("stale", "grant 20");
        });
        assertThat(fence.end(INODE, 0, 8192, "0-8192", "EXCLUSIVE", 10, "c1/3", 5).accepted()).as("a displaced grant's END").isFalse();
        assertThat(fence.end(INODE, 4096, 12288, "4096-12288", "EXCLUSIVE", 20, "c2/2", 6).accepted()).isTrue();
    }

    @Test
    void overlappingSharedGrantsHoldTogetherUntilANewerExclusiveOneDisplacesBoth() {
        RangeHoldings fence = new RangeHoldings(INODE);
        assertThat(fence.write(INODE, 0, 8192, "0-8192", "SHARED", 10, "c1/1", 1)).singleElement()
                .extracting(RangeDecision::accepted).isEqualTo(true);
        assertThat(fence.write(INODE, 4096, 12288, "4096-12288", "SHARED", 11, "c2/1", 2)).as("no DISPLACE: shared beside shared")
                .singleElement().extracting(RangeDecision::accepted).isEqualTo(true);
        // The guard fences bytes by token whatever the mode: the older shared grant's write over grant 11's bytes is refused.
        assertThat(fence.write(INODE, 4096, 8192, "0-8192", "SHARED", 10, "c1/2", 3)).singleElement().satisfies(d -> {
            assertThat(d.accepted()).isFalse();
            assertThat(d.reason()).startsWith("stale");
        });
        assertThat(fence.write(INODE, 0, 4096, "0-8192", "SHARED", 10, "c1/3", 4)).as("its own bytes still take it")
                .singleElement().extracting(RangeDecision::accepted).isEqualTo(true);

        assertThat(fence.write(INODE, 0, 16384, "0-16384", "EXCLUSIVE", 30, "c3/1", 5))
                .extracting(RangeDecision::event, RangeDecision::token)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(Event.DISPLACE, 10L), org.assertj.core.groups.Tuple.tuple(Event.DISPLACE, 11L),
                        org.assertj.core.groups.Tuple.tuple(Event.WRITE, 30L));
    }

    @Test
    void aWriteOutsideTheGrantsRangesIsRefusedAsAMismatch() {
        RangeHoldings fence = new RangeHoldings(INODE);
        assertThat(fence.write(INODE, 4096, 12288, "0-8192", "EXCLUSIVE", 10, "c1/1", 1)).singleElement().satisfies(d -> {
            assertThat(d.accepted()).isFalse();
            assertThat(d.reason()).startsWith("mismatch");
        });
        assertThat(fence.write(INODE, 4096, 12288, "0-8192,8192-16384", "EXCLUSIVE", 11, "c1/2", 2)).as("adjacent ranges cover it")
                .singleElement().extracting(RangeDecision::accepted).isEqualTo(true);
        assertThat(fence.write(8, 0, 4096, "0-4096", "EXCLUSIVE", 12, "c1/3", 3)).as("another inode").singleElement()
                .extracting(RangeDecision::accepted).isEqualTo(false);
    }

    @Test
    void theResourceAnswersRangeRequestsAndLogsEveryDecision() throws IOException {
        try (FencedResource resource = new FencedResource(tmp.resolve("resource.jsonl"), FencedResource.Fence.AT_LEAST,
                tmp.resolve("permits.jsonl"), Map.of(), tmp.resolve("leaders.jsonl"), List.of(), tmp.resolve("ranges.jsonl"), INODE);
             ResourceClient client = new ResourceClient(resource.endpoint())) {
            assertThat(client.rangeWrite(INODE, 0, 8192, "EXCLUSIVE", 10, "c1/1", "0-8192")).isNull();
            assertThat(resource.rangesHeldBy("c1")).isEqualTo("exclusive 7:0-8192 (grant 10)");
            assertThat(client.rangeWrite(INODE, 4096, 8192, "EXCLUSIVE", 20, "c2/1", "4096-8192")).isNull();
            assertThat(resource.rangesHeldBy("c1")).isNull();
            assertThat(client.rangeWrite(INODE, 0, 4096, "EXCLUSIVE", 10, "c1/2", "0-8192")).startsWith("REFUSE");
            assertThat(client.rangeEnd(INODE, 0, 8192, "EXCLUSIVE", 10, "c1/3", "0-8192")).startsWith("NOTHELD");
            assertThat(client.rangeEnd(INODE, 4096, 8192, "EXCLUSIVE", 20, "c2/2", "4096-8192")).isNull();
        }
        List<RangeDecision> log = JsonLines.read(tmp.resolve("ranges.jsonl"), RangeDecision.class);
        assertThat(log).extracting(RangeDecision::event).containsExactly(Event.WRITE, Event.DISPLACE, Event.WRITE, Event.WRITE,
                Event.END, Event.END);
        assertThat(RangeHoldings.breaches(log)).isEmpty();
    }

    @Test
    void aResourceWithoutRangeWritersRefusesThem() throws IOException {
        try (FencedResource resource = new FencedResource(tmp.resolve("resource.jsonl"), FencedResource.Fence.AT_LEAST,
                tmp.resolve("permits.jsonl"), Map.of(), tmp.resolve("leaders.jsonl"), List.of());
             ResourceClient client = new ResourceClient(resource.endpoint())) {
            assertThat(client.rangeWrite(INODE, 0, 4096, "EXCLUSIVE", 10, "c1/1", "0-4096")).contains("no range writers");
        }
    }

    @Test
    void whatTheFenceDecidesPassesItsOwnReplay() {
        RangeHoldings fence = new RangeHoldings(INODE);
        List<RangeDecision> log = new ArrayList<>();
        java.util.Random random = new java.util.Random(21);
        for (int i = 1; i <= 3_000; i++) {
            long token = 1 + random.nextInt(500);
            int pages = 1 + random.nextInt(4);
            long start = random.nextInt(16 - pages + 1) * 4096L;
            String held = start + "-" + (start + pages * 4096L);
            String mode = random.nextInt(4) == 0 ? "SHARED" : "EXCLUSIVE";
            long page = start + random.nextInt(pages) * 4096L;
            if (random.nextInt(5) == 0) {
                log.add(fence.end(INODE, start, start + pages * 4096L, held, mode, token, "c/" + i, i));
            } else {
                log.addAll(fence.write(INODE, page, page + 4096, held, mode, token, "c/" + i, i));
            }
        }
        assertThat(log).anyMatch(d -> d.event() == Event.DISPLACE).anyMatch(d -> d.event() == Event.WRITE && !d.accepted())
                .anyMatch(d -> d.event() == Event.WRITE && d.accepted() && !d.exclusive());
        assertThat(RangeHoldings.breaches(log)).isEmpty();
    }

    // ---- the replay of the resource's view --------------------------------------------------------

    @Test
    void twoConflictingHoldingsOpenAtOnceAreABreachNamingBothGrantsAndRanges() {
        List<RangeDecision> log = List.of(write(0, 8192, "0-8192", "EXCLUSIVE", 10, "c1/1", 1),
                write(4096, 12288, "4096-12288", "EXCLUSIVE", 20, "c2/1", 2)); // no DISPLACE of grant 10 first

        assertThat(RangeHoldings.breaches(log)).singleElement().satisfies(b -> {
            assertThat(b.description()).contains("conflicting holdings open at once", "grant 10 (exclusive 7:0-8192, c1/1)",
                    "grant 20 (exclusive 7:4096-12288, c2/1)");
            assertThat(b.writers()).containsExactly("c1/1", "c2/1");
        });
    }

    @Test
    void theSameWritesWithTheOlderDisplacedOrSharedBesideSharedAreNoBreach() {
        List<RangeDecision> displaced = List.of(write(0, 8192, "0-8192", "EXCLUSIVE", 10, "c1/1", 1),
                new RangeDecision(INODE, 0, 8192, "0-8192", "EXCLUSIVE", Event.DISPLACE, 10, "c2/1", 2, true, "newer"),
                write(4096, 12288, "4096-12288", "EXCLUSIVE", 20, "c2/1", 2),
                write(12288, 16384, "12288-16384", "EXCLUSIVE", 5, "c3/1", 3)); // older, but neither holding nor bytes overlap it
        assertThat(RangeHoldings.breaches(displaced)).isEmpty();

        List<RangeDecision> shared = List.of(write(0, 8192, "0-8192", "SHARED", 10, "c1/1", 1),
                write(4096, 12288, "4096-12288", "SHARED", 20, "c2/1", 2));
        assertThat(RangeHoldings.breaches(shared)).isEmpty();
    }

    @Test
    void anOverlappingStaleWriteOrAWriteAfterTheEndOrOutsideTheRangesIsABreach() {
        List<RangeDecision> stale = List.of(write(4096, 8192, "4096-8192", "EXCLUSIVE", 20, "c2/1", 1),
                new RangeDecision(INODE, 4096, 8192, "4096-8192", "EXCLUSIVE", Event.END, 20, "c2/2", 2, true, null),
                write(0, 8192, "0-8192", "EXCLUSIVE", 10, "c1/1", 3));
        assertThat(RangeHoldings.breaches(stale)).singleElement().extracting(RangeHoldings.Breach::description).asString()
                .contains("overlapping stale write accepted", "grant 10", "7:[0,8192)", "after grant 20 had written 7:[4096,8192) (c2/1)");

        List<RangeDecision> ended = List.of(write(0, 8192, "0-8192", "EXCLUSIVE", 10, "c1/1", 1),
                new RangeDecision(INODE, 0, 8192, "0-8192", "EXCLUSIVE", Event.END, 10, "c1/2", 2, true, null),
                write(0, 4096, "0-8192", "EXCLUSIVE", 10, "c1/3", 3));
        assertThat(RangeHoldings.breaches(ended)).singleElement().extracting(RangeHoldings.Breach::description).asString()
                .contains("after its holding had ended", "grant 10");

        List<RangeDecision> outside = List.of(write(0, 12288, "0-8192", "EXCLUSIVE", 10, "c1/1", 1));
        assertThat(RangeHoldings.breaches(outside)).singleElement().extracting(RangeHoldings.Breach::description).asString()
                .contains("write outside its scopes accepted");
    }

    @Test
    void aRangeWriteRecordedOkThatTheResourceRefusedIsAHarnessViolation() {
        List<RangeDecision> log = List.of(new RangeDecision(INODE, 0, 4096, "0-4096", "EXCLUSIVE", Event.WRITE, 10, "c1/7", 1, false,
                "stale"), write(4096, 8192, "4096-8192", "EXCLUSIVE", 11, "c2/3", 2));
        List<Op> ops = List.of(rangeWrite("c1", 7, 10, "7:0-4096", Outcome.OK), rangeWrite("c2", 3, 11, "7:4096-8192", Outcome.OK),
                rangeWrite("c3", 4, 12, "7:0-4096", Outcome.INFO));
        List<String> violations = new ArrayList<>();

        HarnessChecks.checkRanges(ops, log, violations);

        assertThat(violations).singleElement().asString().contains("c1 recorded RANGE_WRITE 7 OK", "refused");
    }

    private static RangeDecision write(long start, long end, String held, String mode, long token, String writer, long at) {
        return new RangeDecision(INODE, start, end, held, mode, Event.WRITE, token, writer, at, true, null);
    }

    private static Op rangeWrite(String process, long id, long token, String key, Outcome outcome) {
        return new Op(id, process, Kind.RANGE_WRITE, key, 1, token, 1, 0, 1, 2, outcome, 0, null, null, null);
    }

    // ---- the checker over a hand-made run ----------------------------------------------------------

    /** What to plant in the range run. */
    enum Plant { NOTHING, CONFLICTING_GRANT, RESOURCE_OVERLAP, REFUSED_REPORTED_OK }

    /**
     * Inode 7: c1 holds [0, 8192) exclusive; c2 asks for [4096, 12288) exclusive and queues; c3
     * holds [16384, 20480) shared; c1 writes, ends and releases, which hands c2 its range; c2 and
     * c3 write, end and release. Each holder writes the fenced resource once.
     */
    private Path rangeRun(Plant plant) throws IOException {
        RunFixture run = new RunFixture(Files.createDirectories(tmp.resolve(plant.name())), "n1", "n2");
        run.rangeInode = INODE;
        BiConsumer<String, ObjectNode> untouched = (member, line) -> { };
        ScopeRequest r1 = new ScopeRequest(new LockScope.ByteRange(INODE, 0, 8192), true);
        ScopeRequest r2 = new ScopeRequest(new LockScope.ByteRange(INODE, 4096, 12288), true);
        ScopeRequest r3 = new ScopeRequest(new LockScope.ByteRange(INODE, 16384, 20480), false);
        run.noop(0);                                                                             // 0
        run.apply(10, new LeaseGrant(201, 5000, "c1"));                                          // 1
        run.apply(11, new LeaseGrant(202, 5000, "c2"));                                          // 2
        run.apply(12, new LeaseGrant(203, 5000, "c3"));                                          // 3
        long t1 = token(run.apply(20, new ScopeAcquire(201, List.of(r1), new byte[0], true, 1)));  // 4
        run.apply(30, new ScopeAcquire(202, List.of(r2), new byte[0], true, 1), plant == Plant.CONFLICTING_GRANT // 5: queued
                ? (member, line) -> line.set("result", AuditLog.result(new ScopeResult.Granted(202, position(5), List.of(r2), 1, false)))
                : untouched);
        long t3 = token(run.apply(40, new ScopeAcquire(203, List.of(r3), new byte[0], true, 1)));  // 6
        long t2 = handed(run.apply(1000, new ScopeRelease(201, t1)));                              // 7: hands [4096, 12288) to c2
        run.apply(1500, new ScopeRelease(202, t2));                                                // 8
        run.apply(1600, new ScopeRelease(203, t3));                                                // 9
        run.digest(untouched);

        run.ok("c1", Kind.GRANT, null, 201, 0, 0, 5, 15);
        run.ok("c2", Kind.GRANT, null, 202, 0, 0, 6, 16);
        run.ok("c3", Kind.GRANT, null, 203, 0, 0, 7, 17);
        Op a1 = run.ok("c1", Kind.RANGE_ACQUIRE, "7:0-8192", 201, t1, 1, 18, 22);
        Op a2 = run.ok("c2", Kind.RANGE_ACQUIRE, "7:4096-12288", 202, t2, 1, 29, 1010);
        Op a3 = run.ok("c3", Kind.RANGE_ACQUIRE, "7:16384-20480", 203, t3, 0, 38, 42);
        cycle(run, a1, 0, 8192, 100, 990, plant != Plant.RESOURCE_OVERLAP, true);
        cycle(run, a2, 4096, 12288, 1100, 1490, true, plant != Plant.REFUSED_REPORTED_OK);
        cycle(run, a3, 16384, 20480, 200, 1590, true, true);
        run.ranges.sort(java.util.Comparator.comparingLong(RangeDecision::atNanos));
        return run.finish();
    }

    /** The holder of {@code grant} writes its range at {@code writeMillis}, ends its holding at the resource and releases at {@code endMillis}. */
    private static void cycle(RunFixture run, Op grant, long start, long end, long writeMillis, long endMillis, boolean ends,
                              boolean accepted) {
        String mode = grant.value() == 1 ? "EXCLUSIVE" : "SHARED";
        String held = start + "-" + end;
        Op write = run.ok(grant.process(), Kind.RANGE_WRITE, grant.key(), grant.leaseId(), grant.token(), grant.value(), writeMillis,
                writeMillis + 5);
        run.ranges.add(new RangeDecision(INODE, start, end, held, mode, Event.WRITE, grant.token(), write.process() + "/" + write.id(),
                RunFixture.at(writeMillis + 2), accepted, accepted ? null : "stale"));
        Op release = run.ok(grant.process(), Kind.RANGE_RELEASE, grant.key(), grant.leaseId(), grant.token(), grant.value(),
                endMillis + 5, endMillis + 20);
        if (ends) {
            run.ranges.add(new RangeDecision(INODE, start, end, held, mode, Event.END, grant.token(), release.process() + "/" + release.id(),
                    RunFixture.at(endMillis), true, null));
        }
    }

    private static long token(Applied applied) {
        return ((ScopeResult.Granted) applied.result()).fencingToken();
    }

    private static long handed(Applied applied) {
        return applied.effects().stream().filter(e -> e instanceof Effect.Wake w && w.result() instanceof ScopeResult.Granted)
                .map(e -> ((ScopeResult.Granted) ((Effect.Wake) e).result()).fencingToken()).findFirst().orElseThrow();
    }

    @Test
    void aCleanRangeRunPassesTheChecksThatCoverRanges() throws IOException {
        Verdict verdict = SafetyChecker.check(rangeRun(Plant.NOTHING));

        assertThat(verdict.violations()).as(verdict.report()).isEmpty();
        for (int check : new int[] {1, 2, 3, 4, 5}) {
            assertThat(verdict.outcome(check).status()).as(verdict.report()).isEqualTo(Status.PASSED);
        }
        assertThat(verdict.outcome(2).evidence()).contains("ranges of inode 7: 6 decisions (3 writes accepted, 0 refused, "
                + "0 grants displaced, 3 ended), 3 client writes matched, 3 accepted grants found in the log with their ranges and mode");
        assertThat(verdict.outcome(3).evidence()).contains("6 lock-scope commands", "no conflicting sets held at once",
                "at most 2 sets held, 1 handed to waiters");
        assertThat(verdict.outcome(4).evidence()).contains("3 grants of byte ranges (lease, ranges, mode)");
    }

    @Test
    void conflictingScopeGrantsByTheLogAreCheck3() throws IOException {
        Verdict verdict = SafetyChecker.check(rangeRun(Plant.CONFLICTING_GRANT));

        assertThat(verdict.violatedChecks()).as(verdict.report()).contains(3);
        assertThat(verdict.descriptions(3))
                .anyMatch(d -> d.contains("index 5") && d.contains("conflicting lock scopes held at once by the log")
                        && d.contains("lease 201 token " + position(4)) && d.contains("lease 202 token " + position(5))
                        && d.contains("range 7:0-8192 exclusive against range 7:4096-12288 exclusive"))
                .anyMatch(d -> d.contains("index 5") && d.contains("the model gives"));
    }

    @Test
    void twoConflictingHoldingsByTheResourcesViewAreCheck2NamingBothGrants() throws IOException {
        Verdict verdict = SafetyChecker.check(rangeRun(Plant.RESOURCE_OVERLAP));

        assertThat(verdict.violatedChecks()).as(verdict.report()).containsExactly(2);
        assertThat(verdict.descriptions(2)).singleElement().asString().contains("conflicting holdings open at once",
                "grant " + position(4) + " (exclusive 7:0-8192", "(exclusive 7:4096-12288");
        assertThat(verdict.violations().get(0).around()).extracting(Op::process).contains("c1", "c2");
    }

    @Test
    void aRangeWriteReportedAcceptedThatTheResourceRefusedIsCheck2() throws IOException {
        Verdict verdict = SafetyChecker.check(rangeRun(Plant.REFUSED_REPORTED_OK));

        assertThat(verdict.violatedChecks()).as(verdict.report()).containsExactly(2);
        assertThat(verdict.descriptions(2)).singleElement().asString().contains("c2 RANGE_WRITE '7:4096-12288'", "was reported accepted",
                "the resource refused");
    }

    @Test
    void aRunMadeBeforeRangeWritersLoadsWithoutThem() throws IOException {
        RunFixture run = new RunFixture(Files.createDirectories(tmp.resolve("old")), "n1");
        run.noop(0);
        run.apply(10, new LeaseGrant(201, 5000, "c1"));
        Path dir = run.finish();

        RunInfo info = RunInfo.read(dir);
        assertThat(info.hasRanges()).isFalse();
        assertThat(SafetyChecker.check(dir).outcome(2).evidence()).doesNotContain("ranges of inode");
    }
}
