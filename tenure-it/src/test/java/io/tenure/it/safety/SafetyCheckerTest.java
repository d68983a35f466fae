package io.tenure.it.safety;

import io.tenure.core.lock.LockResult;
import static io.tenure.it.safety.RunFixture.at;
import static io.tenure.it.safety.RunFixture.position;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tenure.client.Lease;
import io.tenure.client.LockHandle;
import io.tenure.client.TenureClient;
import io.tenure.client.TenureException;
import io.tenure.client.WatchEvent;
import io.tenure.client.WatchListener;
import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.LeaseExpire;
import io.tenure.core.kernel.LeaseGrant;
import io.tenure.core.kernel.LeaseRenew;
import io.tenure.core.lock.LockAcquire;
import io.tenure.core.lock.LockRelease;
import io.tenure.core.member.MemberEndpoint;
import io.tenure.core.kernel.Effect;
import io.tenure.it.safety.CheckOutcome.Status;
import io.tenure.it.safety.Op.Kind;
import io.tenure.it.safety.Op.Outcome;
import io.tenure.server.raft.AuditLog;
import io.tenure.testing.Await;
import io.tenure.testing.TenureCluster;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The checker itself: a clean hand-made run passes every check; each planted fault is flagged by
 * the check that owns it (and, where the fault is only in one place, by that check alone); a real
 * member's audit log round-trips through the checker with a clean verdict.
 */
class SafetyCheckerTest {
    @TempDir
    Path tmp;

    /** What to plant in the standard run. */
    enum Plant {
        NOTHING, STALE_WRITE, DUPLICATE_TOKEN, LOST_UPDATE, WATCH_GAP, WATCH_BACK_IN_TIME, EARLY_EXPIRY, FIFO, TWO_HOLDERS,
        DIGEST_MISMATCH, LATE_HANDOVER, LOST_ACK, REAL_TIME, NO_LEADER_AFTER_HEAL
    }

    /**
     * Three leases take lock k1 in turn (two of them queued), each doing a read-modify-write on the
     * fenced resource; a watcher follows k1; member n2 is killed and restarted; client c4, holding
     * k2 with c6 waiting, is paused for longer than the TTL, so its lease expires and k2 passes to c6.
     */
    private Path standardRun(Plant plant) throws IOException {
        RunFixture run = new RunFixture(Files.createDirectories(tmp.resolve(plant.name())), "n1", "n2");
        BiConsumer<String, ObjectNode> untouched = (member, line) -> { };
        run.noop(0);                                                                     // 0: configuration
        run.apply(10, new LeaseGrant(101, 5000, "c1"));                                  // 1
        run.apply(11, new LeaseGrant(102, 5000, "c2"));                                  // 2
        run.apply(12, new LeaseGrant(103, 5000, "c3"));                                  // 3
        long t1 = token(run.apply(20, new LockAcquire("k1", 101, null, true)));          // 4
        run.apply(25, new LockAcquire("k1", 102, null, true), plant == Plant.TWO_HOLDERS // 5: queued
                ? (member, line) -> line.set("result", json("{\"type\":\"Granted\",\"key\":\"k1\",\"leaseId\":102,\"fencingToken\":"
                        + position(5) + ",\"again\":false}"))
                : untouched);
        run.apply(30, new LockAcquire("k1", 103, null, true));                           // 6: queued
        run.apply(1000, new LeaseRenew(new long[] {101, 102, 103}));                     // 7
        long t2 = next(run.apply(1500, new LockRelease("k1", 101, t1), plant == Plant.FIFO // 8: to 102
                ? (member, line) -> line.get("effects").forEach(e -> handTo(e, 103))
                : untouched));
        long t3 = next(run.apply(2500, new LockRelease("k1", 102, t2)));                 // 9: to 103
        run.apply(3000, new LockRelease("k1", 103, t3));                                 // 10: k1 free
        run.apply(3100, new LeaseGrant(104, 5000, "c4"));                                // 11
        long t4 = token(run.apply(3150, new LockAcquire("k2", 104, null, true)));        // 12
        run.apply(3160, new LeaseGrant(106, 5000, "c6"));                                // 13
        run.apply(3200, new LockAcquire("k2", 106, null, true));                         // 14: queued
        run.apply(5600, new MemberEndpoint("n2", "127.0.0.1:7170"));                     // 15: n2 back
        long expiry = plant == Plant.LATE_HANDOVER ? 13_000 : 8_200;
        Applied expired = run.apply(expiry, new LeaseExpire(104, position(11)));         // 16: k2 to 106
        long t5 = expired.effects().stream().filter(e -> e instanceof Effect.Wake w && w.result() instanceof LockResult.Granted)
                .mapToLong(e -> ((LockResult.Granted) ((Effect.Wake) e).result()).fencingToken()).findFirst().orElseThrow();
        run.noop(expiry + 100);                                                          // 17
        run.digest(plant == Plant.DIGEST_MISMATCH
                ? (member, line) -> line.put("digest", member.equals("n2") ? line.get("digest").asLong() ^ 1 : line.get("digest").asLong())
                : untouched);

        run.ok("c1", Kind.GRANT, null, 101, 0, 0, 5, 15);
        run.ok("c2", Kind.GRANT, null, 102, 0, 0, 6, 16);
        run.ok("c3", Kind.GRANT, null, 103, 0, 0, 7, 17);
        run.ok("c1", Kind.ACQUIRE, "k1", 101, t1, 0, 18, 22);
        run.ok("c2", Kind.ACQUIRE, "k1", 102, plant == Plant.DUPLICATE_TOKEN ? t1 : t2, 0, 24, 1520);
        run.ok("c3", Kind.ACQUIRE, "k1", 103, t3, 0, 28, 2520);
        for (String c : List.of("c1", "c2", "c3")) {
            run.ok(c, Kind.KEEPALIVE, null, 100 + c.charAt(1) - '0', 0, 0, 990, 1010);
        }
        run.ok("c1", Kind.READ, "k1", 101, t1, 0, 100, 110);
        run.write(run.ok("c1", Kind.WRITE, "k1", 101, t1, 1, 1200, 1210), 1205, true);
        run.ok("c1", Kind.RELEASE, "k1", 101, t1, 0, 1400, 1510);
        run.ok("c2", Kind.READ, "k1", 102, t2, 1, 1600, 1610);
        Op c2Write = run.ok("c2", Kind.WRITE, "k1", 102, t2, 2, 2000, 2010);
        if (plant != Plant.LOST_UPDATE) {
            run.write(c2Write, 2005, true);
        }
        run.ok("c2", Kind.RELEASE, "k1", 102, t2, 0, 2400, 2510);
        run.ok("c3", Kind.READ, "k1", 103, t3, 2, 2600, 2610);
        run.write(run.ok("c3", Kind.WRITE, "k1", 103, t3, 3, 2700, 2710), 2705, true);
        run.ok("c3", Kind.RELEASE, "k1", 103, t3, 0, 2900, 3010);
        if (plant == Plant.STALE_WRITE) {
            run.resource(new ResourceWrite("k1", t1, 4, "c1/999", at(3050), true));
        }

        run.ok("c4", Kind.GRANT, null, 104, 0, 0, 3050, 3110);
        run.ok("c4", Kind.ACQUIRE, "k2", 104, t4, 0, 3140, 3160);
        if (plant == Plant.EARLY_EXPIRY) {
            run.ok("c4", Kind.KEEPALIVE, null, 104, 0, 0, 4000, 4010);
        }
        run.ok("c6", Kind.GRANT, null, 106, 0, 0, 3155, 3170);
        run.ok("c6", Kind.ACQUIRE, "k2", 106, t5, 0, 3190, expiry + 10);

        run.watched("c5", "w1", "k1", t1, true, 101, 22, "n1");
        if (plant != Plant.WATCH_GAP) {
            run.watched("c5", "w1", "k1", t2, true, 102, 1505, "n1");
        }
        run.watched("c5", "w1", "k1", t3, true, 103, 2505, "n1");
        run.watched("c5", "w1", "k1", position(10), false, 0, 3005, "n1");
        if (plant == Plant.WATCH_BACK_IN_TIME) {
            run.watched("c5", "w1", "k1", t2, true, 102, 3100, "n2"); // reconnected to a member that replays from t2
        }

        run.fault("pause", "c4", 3300, 9000);
        // Resumed after its lease expired, c4 releases k2: the SDK reports a release of an ended grant as
        // done, so this acknowledged release is kept by the lease's end (check 6), not lost.
        run.ok("c4", Kind.RELEASE, "k2", 104, t4, 0, 9100, 9110);
        run.fault("kill", "n2", 4000, 5000);
        if (plant == Plant.LOST_ACK) {
            run.op("c9", Kind.GRANT, null, 999, 0, 0, 5, 9, Outcome.OK, position(3));
        }
        if (plant == Plant.REAL_TIME) {
            run.op("c7", Kind.KEEPALIVE, null, 103, 0, 0, 3050, 3060, Outcome.OK, position(7));
        }
        if (plant == Plant.NO_LEADER_AFTER_HEAL) {
            run.fault("kill", "n1", 9000, 9500);
            run.op("c1", Kind.GRANT, null, 107, 0, 0, 9600, 14_000, Outcome.FAIL, 0);
        }
        return run.finish();
    }

    /** Rewrites a logged effect as if it named lease {@code lease}: the hand-off's waiter, or the watched holder. */
    private static void handTo(JsonNode effect, long lease) {
        if (effect.path("type").asText().equals("Wake")) {
            ((ObjectNode) effect.get("key")).put("leaseId", lease);
            ((ObjectNode) effect.get("result")).put("leaseId", lease);
        } else if (effect.path("type").asText().equals("Watched")) {
            ((ObjectNode) effect.get("event").get("kv")).put("leaseId", lease);
        }
    }

    private static long token(Applied applied) {
        return ((LockResult.Granted) applied.result()).fencingToken();
    }

    private static long next(Applied applied) {
        return ((LockResult.Released) applied.result()).nextFencingToken();
    }

    private static JsonNode json(String text) {
        try {
            return AppliedLog.JSON.readTree(text);
        } catch (IOException e) {
            throw new IllegalArgumentException(e);
        }
    }


    private static String firstOf(Verdict verdict, int check) {
        return verdict.violations().stream().filter(v -> v.check() == check).findFirst().orElseThrow().description();
    }

    @Test
    void aCleanRunPassesEveryCheck() throws IOException {
        Verdict verdict = SafetyChecker.check(standardRun(Plant.NOTHING));

        assertThat(verdict.violations()).as(verdict.report()).isEmpty();
        assertThat(verdict.checks()).as(verdict.report()).extracting(CheckOutcome::status).containsOnly(Status.PASSED);
        assertThat(verdict.statistics().recoveries()).extracting(Verdict.Recovery::millis).containsExactlyInAnyOrder(600L, 4900L);
        String report = verdict.report();
        assertThat(report).contains("**Verdict: no violation.**", "| ACQUIRE | 5 | 0 | 0 | 5 |", "| kill | 1 |", "| pause | 1 |",
                "a leader after a heal: 1 measured, median 600 ms", "lock 'k2' after pause of c4");
    }

    @Test
    void aStaleWriteAcceptedByTheResourceIsCheck2() throws IOException {
        Verdict verdict = SafetyChecker.check(standardRun(Plant.STALE_WRITE));

        assertThat(verdict.violatedChecks()).as(verdict.report()).containsExactly(2);
        assertThat(firstOf(verdict, 2)).contains("stale write accepted", "token " + position(4), "after it had accepted token " + position(9));
        assertThat(verdict.report()).contains("## First violation: check 2", "Fault timeline", "kill start n2");
    }

    @Test
    void aTokenIssuedTwiceIsCheck1() throws IOException {
        Verdict verdict = SafetyChecker.check(standardRun(Plant.DUPLICATE_TOKEN));

        // The client's answer also fails to match the log (check 4), and comes out of real-time order.
        assertThat(verdict.violatedChecks()).as(verdict.report()).containsExactly(1, 4);
        assertThat(firstOf(verdict, 1)).contains("token " + position(4) + " returned to two holders", "lease 101", "lease 102");
        assertThat(verdict.violations().get(0).around()).extracting(Op::process).contains("c1", "c2");
    }

    @Test
    void aLostUpdateIsCheck2() throws IOException {
        Verdict verdict = SafetyChecker.check(standardRun(Plant.LOST_UPDATE));

        assertThat(verdict.violatedChecks()).as(verdict.report()).containsExactly(2);
        assertThat(verdict.violations()).extracting(Violation::description)
                .anyMatch(d -> d.contains("acknowledged update lost") && d.contains("c2 WRITE"))
                .anyMatch(d -> d.contains("lost update: c3 read 2") && d.contains("held 1"));
    }

    @Test
    void aWatchGapIsCheck9() throws IOException {
        Verdict verdict = SafetyChecker.check(standardRun(Plant.WATCH_GAP));

        assertThat(verdict.violatedChecks()).as(verdict.report()).containsExactly(9);
        assertThat(firstOf(verdict, 9)).contains("gap", "skipped revision " + position(8), "PUT 'k1' lease 102");
    }

    @Test
    void aWatchGoingBackInTimeAcrossAReconnectIsCheck9() throws IOException {
        Verdict verdict = SafetyChecker.check(standardRun(Plant.WATCH_BACK_IN_TIME));

        assertThat(verdict.violatedChecks()).as(verdict.report()).containsExactly(9);
        assertThat(firstOf(verdict, 9)).contains("went back in time", "revision " + position(8) + " (from n2) after "
                + position(10) + " (from n1)");
    }

    @Test
    void aLeaseExpiredBeforeItsTtlAfterAnAcknowledgedKeepAliveIsCheck7() throws IOException {
        Verdict verdict = SafetyChecker.check(standardRun(Plant.EARLY_EXPIRY));

        assertThat(verdict.violatedChecks()).as(verdict.report()).containsExactly(7);
        assertThat(firstOf(verdict, 7)).contains("lease 104 expired", "4200 ms after the keep-alive", "TTL is 5000 ms");
    }

    @Test
    void aWaiterGrantedBeforeOneThatJoinedEarlierIsCheck8() throws IOException {
        Verdict verdict = SafetyChecker.check(standardRun(Plant.FIFO));

        // The member's results also differ from the model's (check 3), and the client's grant is not the log's (1, 4).
        assertThat(verdict.violatedChecks()).as(verdict.report()).contains(8, 3);
        assertThat(firstOf(verdict, 8)).contains("lock 'k1' handed to lease 103", "before lease 102");
    }

    @Test
    void twoHoldersAtOneIndexAreCheck3() throws IOException {
        Verdict verdict = SafetyChecker.check(standardRun(Plant.TWO_HOLDERS));

        assertThat(verdict.violatedChecks()).as(verdict.report()).contains(3);
        assertThat(verdict.violations()).filteredOn(v -> v.check() == 3).extracting(Violation::description)
                .anyMatch(d -> d.contains("index 5") && d.contains("two holders of lock 'k1': lease 101") && d.contains("lease 102"))
                .anyMatch(d -> d.contains("index 5") && d.contains("the model gives"));
    }

    @Test
    void replicasWithDifferentDigestsAtOneIndexAreCheck5() throws IOException {
        Verdict verdict = SafetyChecker.check(standardRun(Plant.DIGEST_MISMATCH));

        assertThat(verdict.violatedChecks()).as(verdict.report()).containsExactly(5);
        assertThat(verdict.violations()).extracting(Violation::description)
                .anyMatch(d -> d.contains("index 17: state digest") && d.contains("n1#1") && d.contains("n2#1"))
                .anyMatch(d -> d.contains("n2#1's state digest") && d.contains("differs from the model's"));
    }

    @Test
    void aLockHandedToTheWaiterTooLongAfterItsHolderDiedIsCheck10() throws IOException {
        Verdict verdict = SafetyChecker.check(standardRun(Plant.LATE_HANDOVER));

        assertThat(verdict.violatedChecks()).as(verdict.report()).containsExactly(10);
        assertThat(firstOf(verdict, 10)).contains("the waiter for 'k2' got it 9700 ms after pause of c4", "8000 ms after the last overlapping heal", "over the bound of 7050 ms");
    }

    @Test
    void noLeaderWithinTwoElectionTimeoutsAndASecondAfterAHealIsCheck10() throws IOException {
        Verdict verdict = SafetyChecker.check(standardRun(Plant.NO_LEADER_AFTER_HEAL));

        assertThat(verdict.violatedChecks()).as(verdict.report()).containsExactly(10);
        assertThat(firstOf(verdict, 10)).contains("no leader within 3000 ms after kill of n1 healed", "nothing was applied");
    }

    @Test
    void anAcknowledgedOperationMissingFromTheLogIsCheck6() throws IOException {
        Verdict verdict = SafetyChecker.check(standardRun(Plant.LOST_ACK));

        assertThat(verdict.violatedChecks()).as(verdict.report()).containsExactly(6);
        assertThat(firstOf(verdict, 6)).contains("acknowledged c9 GRANT lease 999", "in no member's applied log");
    }

    @Test
    void anAnswerWithASmallerPositionThanOneCompletedBeforeItIsCheck4() throws IOException {
        Verdict verdict = SafetyChecker.check(standardRun(Plant.REAL_TIME));

        assertThat(verdict.violatedChecks()).as(verdict.report()).containsExactly(4);
        assertThat(firstOf(verdict, 4)).contains("real-time order broken", "c3 ACQUIRE", "c7 KEEPALIVE");
    }

    @Test
    void aTornLastLineAndALostTailAreToleratedAndNoted() throws IOException {
        Path run = standardRun(Plant.NOTHING);
        Path n2 = run.resolve("members/n2/audit.jsonl");
        List<String> lines = Files.readAllLines(n2, StandardCharsets.UTF_8);
        // n2 was killed: its last three lines never reached the file, the one before them only half.
        String torn = lines.get(lines.size() - 4);
        Files.write(n2, lines.subList(0, lines.size() - 4), StandardCharsets.UTF_8);
        Files.writeString(n2, torn.substring(0, torn.length() / 2), StandardOpenOption.APPEND);

        Verdict verdict = SafetyChecker.check(run);

        assertThat(verdict.violations()).as(verdict.report()).isEmpty();
        assertThat(verdict.statistics().notes()).anyMatch(n -> n.contains("member n2: 1 torn last line(s) skipped"));
    }

    @Test
    void theAuditLogCutsATornTailWhenReopenedSoTheNextLifeStartsOnALineOfItsOwn() throws IOException {
        Path file = tmp.resolve("members/n1/audit.jsonl");
        AuditLog first = AuditLog.open(file, "n1", () -> 1L);
        first.indexApplied(0, 1);
        first.close();
        Files.writeString(file, "{\"line\":\"index\",\"at\":2,\"ind", StandardOpenOption.APPEND); // killed mid-line

        AuditLog second = AuditLog.open(file, "n1", () -> 3L);
        second.indexApplied(1, 1);
        second.close();

        assertThat(Files.readAllLines(file)).containsExactly(
                "{\"line\":\"open\",\"at\":1,\"member\":\"n1\",\"pid\":" + ProcessHandle.current().pid() + "}",
                "{\"line\":\"index\",\"at\":1,\"index\":0,\"term\":1}",
                "{\"line\":\"open\",\"at\":3,\"member\":\"n1\",\"pid\":" + ProcessHandle.current().pid() + "}",
                "{\"line\":\"index\",\"at\":3,\"index\":1,\"term\":1}");
    }

    @Test
    void whatTheDataCannotDecideIsReportedNotExercised() throws IOException {
        RunFixture empty = new RunFixture(Files.createDirectories(tmp.resolve("empty")));
        Verdict verdict = SafetyChecker.check(empty.finish());

        assertThat(verdict.violations()).isEmpty();
        assertThat(verdict.checks()).extracting(CheckOutcome::status).containsOnly(Status.NOT_EXERCISED);
        assertThat(verdict.report()).contains("not exercised", "no watch stream in the histories", "did not start");
    }

    // ---- a real member --------------------------------------------------------------------------

    /**
     * One real member with {@code ServerConfig.auditLog} set, driven by the Java client: lock
     * cycles with read-modify-writes on a fenced resource (enough to pass index 256, so a digest is
     * logged), a waiter handed the lock, a watch on the key. Its audit log and the history written
     * here by hand must come out clean.
     */
    @Test
    void aRealMembersAuditLogRoundTripsThroughTheChecker() throws Exception {
        Path runDir = Files.createDirectories(tmp.resolve("real"));
        TenureCluster.Builder member = TenureCluster.builder().dataDir(tmp.resolve("data"))
                .config(c -> c.withAuditLog(runDir.resolve("members/n1/audit.jsonl")));
        List<Op> history = new CopyOnWriteArrayList<>();
        List<ResourceWrite> resource = new ArrayList<>();
        int cycles = 140;
        // Each cycle puts and deletes k1; then the hand-over: a put for each holder and a delete.
        CountDownLatch allEvents = new CountDownLatch(2 * cycles + 3);
        long[] ids = {0};
        long start = System.nanoTime();
        try (TenureCluster server = member.start();
             TenureClient c1 = client(server, "c1");
             TenureClient c2 = client(server, "c2")) {
            c1.watch("k1", 0, new WatchListener() {
                @Override
                public void onEvent(WatchEvent e) {
                    long now = System.nanoTime();
                    history.add(new Op(++ids[0] << 32, "w1", Kind.WATCH, e.key(), e.leaseId(), e.revision(),
                            e.type() == WatchEvent.Type.PUT ? 1 : 0, 0, now, now, Outcome.OK, e.revision(), null, "n1", "w1"));
                    allEvents.countDown();
                }

                @Override
                public void onCompacted(long compactRevision) {
                }

                @Override
                public void onError(TenureException error) {
                }
            });
            long invoked = System.nanoTime();
            Lease lease1 = c1.grantLease(Duration.ofSeconds(30));
            history.add(done(1, "c1", Kind.GRANT, null, lease1.id(), 0, 0, invoked, 0));
            invoked = System.nanoTime();
            Lease lease2 = c2.grantLease(Duration.ofSeconds(30));
            history.add(done(2, "c2", Kind.GRANT, null, lease2.id(), 0, 0, invoked, 0));
            long value = 0;
            long id = 10;
            for (int i = 0; i < cycles; i++) {
                invoked = System.nanoTime();
                LockHandle handle = c1.acquire("k1", lease1, Duration.ofSeconds(10), null);
                long token = handle.fencingToken();
                history.add(done(id++, "c1", Kind.ACQUIRE, "k1", lease1.id(), token, 0, invoked, token));
                history.add(done(id++, "c1", Kind.READ, "k1", lease1.id(), token, value, System.nanoTime(), 0));
                Op write = done(id++, "c1", Kind.WRITE, "k1", lease1.id(), token, ++value, System.nanoTime(), 0);
                resource.add(new ResourceWrite("k1", token, value, "c1/" + write.id(), System.nanoTime(), true));
                history.add(write);
                invoked = System.nanoTime();
                handle.release();
                history.add(done(id++, "c1", Kind.RELEASE, "k1", lease1.id(), token, 0, invoked, 0));
            }
            // A waiter: c2 queues behind c1 and is handed the lock when c1 releases.
            invoked = System.nanoTime();
            LockHandle held = c1.acquire("k1", lease1, Duration.ofSeconds(10), null);
            history.add(done(id++, "c1", Kind.ACQUIRE, "k1", lease1.id(), held.fencingToken(), 0, invoked, held.fencingToken()));
            long waitInvoked = System.nanoTime();
            CompletableFuture<LockHandle> waiting = c2.acquireAsync("k1", lease2, Duration.ofSeconds(20), null);
            awaitQueued(c1, "k1");
            invoked = System.nanoTime();
            held.release();
            history.add(done(id++, "c1", Kind.RELEASE, "k1", lease1.id(), held.fencingToken(), 0, invoked, 0));
            LockHandle handed = waiting.get(20, TimeUnit.SECONDS);
            history.add(done(id++, "c2", Kind.ACQUIRE, "k1", lease2.id(), handed.fencingToken(), 0, waitInvoked, handed.fencingToken()));
            invoked = System.nanoTime();
            handed.release();
            history.add(done(id++, "c2", Kind.RELEASE, "k1", lease2.id(), handed.fencingToken(), 0, invoked, 0));
            assertThat(allEvents.await(30, TimeUnit.SECONDS)).as("every watch event delivered").isTrue();
        }
        long end = System.nanoTime();

        Files.writeString(runDir.resolve("run.json"), "{\"ttlMillis\":30000,\"electionTimeoutMillis\":1000,\"expiryPeriodMillis\":50,"
                + "\"members\":[\"n1\"],\"keys\":[\"k1\"],\"startNanos\":" + start + ",\"endNanos\":" + end + ",\"seed\":0,\"faults\":[]}");
        Files.createDirectories(runDir.resolve("history"));
        for (String process : List.of("c1", "c2", "w1")) {
            RunFixture.writeLines(runDir.resolve("history").resolve(process + ".jsonl"),
                    history.stream().filter(op -> op.process().equals(process)).toList());
        }
        RunFixture.writeLines(runDir.resolve("resource.jsonl"), resource);
        RunFixture.writeLines(runDir.resolve("nemesis.jsonl"), List.of());

        Verdict verdict = SafetyChecker.check(runDir);

        assertThat(verdict.violations()).as(verdict.report()).isEmpty();
        for (int check : new int[] {1, 2, 3, 4, 5, 6, 8, 9}) {
            assertThat(verdict.outcome(check).status()).as(verdict.report()).isEqualTo(Status.PASSED);
        }
        // No lease expired, no fault was injected: nothing to decide.
        assertThat(verdict.outcome(7).status()).isEqualTo(Status.NOT_EXERCISED);
        assertThat(verdict.outcome(10).status()).isEqualTo(Status.NOT_EXERCISED);
        assertThat(verdict.outcome(5).evidence()).as("digests (indexes 0 and 256) compared with the model")
                .contains("digest lines at 2 indexes (2 compared with the model)");
        assertThat(Files.readAllLines(runDir.resolve("members/n1/audit.jsonl"))).anyMatch(l -> l.contains("\"line\":\"digest\"")
                && l.contains("\"index\":256,"));
        assertThat(verdict.outcome(9).evidence()).contains("1 streams, " + (2 * cycles + 3) + " events");
    }

    private static TenureClient client(TenureCluster server, String clientId) {
        return TenureClient.builder().endpoints(server.endpoints()).clientId(clientId).build();
    }

    /** An acknowledged operation, completing now. */
    private static Op done(long id, String process, Kind kind, String key, long leaseId, long token, long value, long invoked,
                           long position) {
        return new Op(id, process, kind, key, leaseId, token, value, 0, invoked, System.nanoTime(), Outcome.OK, position, null, "n1", null);
    }

    /** Waits (polling the server, bounded) until someone queues for {@code key}. */
    private static void awaitQueued(TenureClient client, String key) throws InterruptedException {
        Await.until("a waiter queued for " + key, Duration.ofSeconds(20), () -> !client.describe(key).waiters().isEmpty());
    }
}
