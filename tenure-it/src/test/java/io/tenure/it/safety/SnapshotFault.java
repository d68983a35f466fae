package io.tenure.it.safety;

import io.tenure.client.Lease;
import io.tenure.client.LockHandle;
import io.tenure.client.TenureClient;
import io.tenure.it.Cluster;
import io.tenure.it.safety.History.Pending;
import io.tenure.it.safety.Op.Kind;
import io.tenure.proto.v1.StatusResponse;
import io.tenure.testing.MemberProcess;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

/**
 * F10: a follower is killed; the harness drives the log on (lock and unlock cycles of its own on
 * {@code filler/} keys, recorded as the process {@code filler}) until the survivors have
 * snapshotted and purged past everything the follower has; the follower restarts and can only
 * catch up by installing a snapshot. It is killed -9 as soon as the install shows (a snapshot
 * file newer than its own appears, or it logs a second {@code event=snapshot_loaded}), restarted
 * again, and must catch up.
 */
final class SnapshotFault implements AutoCloseable {
    static final String FILLER = "filler";
    static final int FILLER_NUMBER = 999;
    private static final Duration PURGE_LIMIT = Duration.ofSeconds(180);
    private static final Duration INSTALL_LIMIT = Duration.ofSeconds(60);

    private final Lab lab;
    private final Cluster cluster;
    private int episodes;
    private History history; // the filler's, opened by the first episode

    SnapshotFault(Lab lab) {
        this.lab = lab;
        this.cluster = lab.cluster;
    }

    void run() throws Exception {
        episodes++;
        String victim = lab.pick(cluster.followers());
        StatusResponse before = Waits.value(victim + " answers Status", Duration.ofSeconds(30), () -> cluster.statusOrNull(victim));
        StatusResponse leader = Waits.value("the leader answers Status", Duration.ofSeconds(30), () -> cluster.statusOrNull(cluster.leader()));
        long victimLogEnd = Math.max(before.getAppliedIndex(), leader.getCommitIndex());
        long ownSnapshot = cluster.snapshotIndex(victim);
        long killedAt = System.nanoTime();
        cluster.kill9(victim);
        lab.log.start(Fault.F10, victim, "kill -9 a follower at applied index " + before.getAppliedIndex()
                + "; driving the others' logs past " + victimLogEnd + " until they purge it", killedAt);
        List<String> survivors = cluster.live();
        long entries = fill(survivors, () -> survivors.stream().allMatch(m -> cluster.snapshotIndex(m) > victimLogEnd
                && cluster.firstLogIndex(m).orElse(0) > victimLogEnd + 1));

        MemberProcess member = cluster.member(victim);
        long restartAt = System.nanoTime();
        member.launch();
        String marker = awaitInstall(member, victim, ownSnapshot);
        cluster.kill9(victim);
        long killedInInstallAt = System.nanoTime();
        lab.relaunch(List.of(victim));
        cluster.awaitCaughtUp(victim);
        lab.log.end(Fault.F10, victim, "the others purged past " + victimLogEnd + " after " + entries + " filler cycles; restarted, "
                + "killed -9 " + Waits.millisSince(restartAt) + " ms after the restart when " + marker + "; restarted again and "
                + "caught up " + Waits.millisSince(killedInInstallAt) + " ms after (snapshot index now "
                + cluster.snapshotIndex(victim) + ")", restartAt);
    }

    /** Waits (polling every 10 ms: the install is short) for a sign that the member is installing a snapshot. */
    private String awaitInstall(MemberProcess member, String victim, long ownSnapshot) {
        String[] seen = {null};
        Waits.within(INSTALL_LIMIT, Duration.ofMillis(10), () -> {
            long snapshot = cluster.snapshotIndex(victim);
            if (snapshot > ownSnapshot) {
                boolean loaded = member.logSinceStart().contains("event=snapshot_loaded index=" + snapshot);
                seen[0] = "a snapshot from the leader (index " + snapshot + ") was on disk"
                        + (loaded ? " and already loaded" : ", not yet loaded: during the install");
            }
            return seen[0] != null || !member.isAlive();
        });
        return seen[0] != null ? seen[0] : "no install was seen within " + INSTALL_LIMIT.toSeconds() + " s";
    }

    /** Lock/unlock cycles on filler keys through the survivors until {@code done}; how many. */
    private long fill(List<String> survivors, java.util.function.BooleanSupplier done) throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        long[] cycles = new long[1];
        synchronized (this) {
            if (history == null) {
                history = History.open(lab.runDir.resolve("history").resolve(FILLER + ".jsonl"), FILLER, FILLER_NUMBER);
            }
        }
        try (TenureClient client = cluster.client(cluster.endpoints(survivors.toArray(String[]::new)))
                     .clientId(FILLER).build()) {
            List<Thread> threads = List.of(0, 1).stream().map(i -> new Thread(() -> {
                String key = "filler/" + episodes + "-" + i;
                Lease lease = null;
                while (!stop.get()) {
                    if (lease == null || !lease.isValid()) {
                        lease = grant(history, client);
                        if (lease == null) {
                            LockSupport.parkNanos(200_000_000); // back off while no member grants
                        }
                        continue;
                    }
                    if (cycle(history, client, lease, key)) {
                        synchronized (cycles) {
                            cycles[0]++;
                        }
                    }
                }
                if (lease != null) {
                    revoke(history, lease);
                }
            }, "filler-" + i)).toList();
            threads.forEach(Thread::start);
            try {
                Waits.until("the survivors snapshot and purge their logs", PURGE_LIMIT, done);
            } finally {
                stop.set(true);
                for (Thread t : threads) {
                    t.join(30_000);
                }
            }
        }
        return cycles[0];
    }

    private Lease grant(History history, TenureClient client) {
        Pending op = history.invoke(Kind.GRANT, null).ttlMillis(lab.ttl().toMillis());
        try {
            Lease lease = client.grantLease(lab.ttl(), FILLER);
            op.leaseId(lease.id()).ttlMillis(lease.ttl().toMillis()).ok();
            return lease;
        } catch (RuntimeException e) {
            op.complete(WorkerContext.outcomeOf(e), WorkerContext.describe(e));
            return null;
        }
    }

    private boolean cycle(History history, TenureClient client, Lease lease, String key) {
        Pending acquire = history.invoke(Kind.ACQUIRE, key).leaseId(lease.id());
        Optional<LockHandle> handle;
        try {
            handle = client.lock(key, lease).tryAcquire();
        } catch (RuntimeException e) {
            acquire.complete(WorkerContext.outcomeOf(e), WorkerContext.describe(e));
            return false;
        }
        if (handle.isEmpty()) {
            acquire.fail("held by another lease");
            return false;
        }
        long token = handle.get().fencingToken();
        acquire.token(token).position(token).ok();
        Pending release = history.invoke(Kind.RELEASE, key).leaseId(lease.id()).token(token);
        try {
            handle.get().release();
            release.ok();
        } catch (RuntimeException e) {
            release.complete(WorkerContext.outcomeOf(e), WorkerContext.describe(e));
        }
        return true;
    }

    private void revoke(History history, Lease lease) {
        Pending op = history.invoke(Kind.REVOKE, null).leaseId(lease.id());
        try {
            lease.revoke();
            op.ok();
        } catch (RuntimeException e) {
            op.complete(WorkerContext.outcomeOf(e), WorkerContext.describe(e));
        }
    }

    /** Ends the filler's history (open across episodes, so its operation ids stay unique). */
    @Override
    public synchronized void close() {
        if (history != null) {
            history.close();
        }
    }
}
