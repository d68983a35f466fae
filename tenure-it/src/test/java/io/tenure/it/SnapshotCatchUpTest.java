package io.tenure.it;

import io.tenure.proto.v1.LeaseGrantRequest;
import io.tenure.proto.v1.LockRequest;
import io.tenure.proto.v1.LockResponse;
import io.tenure.proto.v1.StatusResponse;
import io.tenure.testing.Await;
import io.tenure.testing.MemberProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A member that was down while the others snapshotted and purged their logs catches up by
 * snapshot installation: 3 members with {@code --snapshot-every 200}; one follower is killed;
 * 10,000 operations (lock and unlock requests) run through the other two, which snapshot and purge
 * past everything the dead member has; it restarts and reaches the same revision and applied
 * state as the others.
 *
 * <p>Long form: {@code mvn -B -ntp test -pl tenure-it -Pfaults-long -Dtest=SnapshotCatchUpTest}
 * (50,000 operations), or {@code -Dtenure.it.snapshotOps=N}.
 */
@ExtendWith(ItLogs.class)
class SnapshotCatchUpTest {
    static final int OPERATIONS = ItScale.of("snapshotOps", 10_000, 50_000);
    static final int SNAPSHOT_EVERY = 200;
    static final int THREADS = 4;

    @TempDir
    Path work;

    @Test
    @Timeout(value = 30, unit = TimeUnit.MINUTES)
    void aMemberThatMissedPurgedEntriesCatchesUpBySnapshotInstallation() throws Exception {
        try (Cluster cluster = Cluster.start(work, new Cluster.Options().size(3).snapshotEvery(SNAPSHOT_EVERY))) {
            // Some state before the kill, so the member has a log and a state of its own.
            try (LockCycler warmUp = new LockCycler(cluster.endpoints(), "snap/before")) {
                warmUp.start(2, 100).awaitDone(Duration.ofSeconds(120));
                assertThat(warmUp.failures()).isEmpty();
            }
            String leader = cluster.leader();
            String victim = cluster.followers().get(0);
            StatusResponse before = Await.PROCESSES.value(victim + " answers Status", Duration.ofSeconds(30), () -> cluster.statusOrNull(victim));
            cluster.kill9(victim);
            StatusResponse leaderAtKill = Await.PROCESSES.value(leader + " answers Status", Duration.ofSeconds(30), () -> cluster.statusOrNull(cluster.leader()));
            // Everything the victim could have in its log is at or below this index.
            long victimLogEnd = Math.max(before.getAppliedIndex(), leaderAtKill.getCommitIndex());
            long victimSnapshotBefore = cluster.snapshotIndex(victim);
            List<String> survivors = cluster.live();

            long started = System.nanoTime();
            try (LockCycler load = new LockCycler(cluster.endpoints(survivors.toArray(String[]::new)), "snap/during")) {
                load.start(THREADS, OPERATIONS / 2).awaitDone(Duration.ofSeconds(Math.max(300, OPERATIONS / 20)));
                assertThat(load.failures()).as("failed lock/unlock cycles").isEmpty();
                assertThat(load.cycles() * 2).as("operations").isGreaterThanOrEqualTo(OPERATIONS);
                System.out.printf("SnapshotCatchUpTest: %d operations in %d ms while %s was down (%d UNAVAILABLE retried)%n",
                        load.cycles() * 2, Await.millisSince(started), victim, load.unavailable());
            }

            // The survivors snapshot and purge their logs past everything the victim has, so that
            // it can only catch up by installing a snapshot. (Checked at the end, so that a failure
            // here still shows how the catch-up went.)
            String purgeProblem = null;
            // A trickle of writes meanwhile: a member on JRaft cuts its log, when it takes a
            // snapshot, only up to the snapshot before, so it needs one more past the victim's end.
            try (LockCycler trickle = new LockCycler(cluster.endpoints(survivors.toArray(String[]::new)), "snap/purge").start(1)) {
                Await.PROCESSES.until(() -> "the survivors " + survivors + " snapshot and purge their logs past index " + victimLogEnd
                        + " (now " + purgeState(cluster, survivors) + ")", Duration.ofSeconds(60),
                        () -> survivors.stream().allMatch(m -> cluster.snapshotIndex(m) > victimLogEnd
                                && cluster.firstLogIndex(m).orElse(0) > victimLogEnd + 1));
            } catch (AssertionError e) {
                purgeProblem = e.getMessage();
            }

            cluster.restart(victim);

            // A final write, after which nothing renews or expires (the load's leases were revoked;
            // this lease is long and never renewed), so every member must settle on one revision.
            MemberProcess leaderMember = cluster.member(cluster.leader());
            long lease = leaderMember.blocking().leaseGrant(LeaseGrantRequest.newBuilder().setClientId("final").setTtl(300).build()).getId();
            LockResponse last = leaderMember.blocking().lock(LockRequest.newBuilder().setName("snap/final").setLeaseId(lease).build());
            assertThat(last.getAcquired()).isTrue();
            Map<String, StatusResponse> settled = Await.PROCESSES.value("all members at one revision >= " + last.getFencingToken(),
                    Duration.ofSeconds(120), () -> {
                        Map<String, StatusResponse> all = cluster.statuses();
                        if (all.size() < 3) {
                            return null;
                        }
                        // Revisions, not applied indexes: each Status is a linearizable read, which
                        // commits a read barrier entry, so the applied indexes move with every poll.
                        boolean same = all.values().stream().allMatch(s -> s.getRevision() >= last.getFencingToken()
                                && s.getRevision() == all.get(victim).getRevision());
                        return same ? all : null;
                    });

            // The victim's own applied state has the final grant: watches are served from it.
            try (Watcher watcher = Watcher.open(cluster.member(victim), "snap/final", false, last.getFencingToken())) {
                Watcher.Seen put = watcher.await("the final grant in " + victim + "'s state", Duration.ofSeconds(30),
                        seen -> seen.isPut() && seen.revision() == last.getFencingToken());
                assertThat(put.event().getKv().getLease()).isEqualTo(lease);
            }

            long victimSnapshotAfter = cluster.snapshotIndex(victim);
            boolean loggedInstall = cluster.member(victim).logSinceStart().lines()
                    .filter(line -> line.contains("snapshot_loaded") || line.toLowerCase().contains("installsnapshot")
                            || line.toLowerCase().contains("install snapshot")).count() > 0;
            System.out.printf("SnapshotCatchUpTest: %s had applied %d (snapshot %d) before the kill; survivors purged past %d %s;"
                            + " after restart its snapshot is %d, all at revision %d / applied index %d; install logged: %s%n",
                    victim, before.getAppliedIndex(), victimSnapshotBefore, victimLogEnd, purgeState(cluster, survivors),
                    victimSnapshotAfter, settled.get(victim).getRevision(), settled.get(victim).getAppliedIndex(), loggedInstall);
            assertThat(purgeProblem).as("log purging on the survivors").isNull();
            assertThat(victimSnapshotAfter).as(victim + " has a snapshot beyond everything it had when killed (installed from the leader)")
                    .isGreaterThan(victimLogEnd);
        }
    }

    private static String purgeState(Cluster cluster, List<String> members) {
        return members.stream().map(m -> {
            OptionalLong first = cluster.firstLogIndex(m);
            return m + ": snapshot " + cluster.snapshotIndex(m) + ", log from " + (first.isPresent() ? first.getAsLong() : "-");
        }).collect(Collectors.joining("; ", "[", "]"));
    }
}
