package io.tenure.core;

import io.tenure.core.barrier.BarrierAwait;
import io.tenure.core.barrier.BarrierCancel;
import io.tenure.core.barrier.BarrierView;
import io.tenure.core.barrier.DoubleBarrierEnter;
import io.tenure.core.barrier.DoubleBarrierLeave;
import io.tenure.core.barrier.DoubleBarrierTable;
import io.tenure.core.barrier.DoubleBarrierView;
import io.tenure.core.barrier.DoubleBarrierWithdraw;
import io.tenure.core.latch.LatchAwait;
import io.tenure.core.latch.LatchCancel;
import io.tenure.core.latch.LatchCountDown;
import io.tenure.core.latch.LatchSetCount;
import io.tenure.core.latch.LatchTable;
import io.tenure.core.latch.LatchView;
import io.tenure.core.election.ElectionCampaign;
import io.tenure.core.election.ElectionProclaim;
import io.tenure.core.election.ElectionResign;
import io.tenure.core.election.ElectionTable;
import io.tenure.core.election.ElectionView;
import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.Command;
import io.tenure.core.kernel.LeaseExpire;
import io.tenure.core.kernel.LeaseGrant;
import io.tenure.core.kernel.LeaseRenew;
import io.tenure.core.kernel.LeaseView;
import io.tenure.core.lock.LockAcquire;
import io.tenure.core.lock.LockDowngrade;
import io.tenure.core.lock.LockRelease;
import io.tenure.core.lock.LockView;
import io.tenure.core.semaphore.SemaphoreAcquire;
import io.tenure.core.semaphore.SemaphoreRelease;
import io.tenure.core.semaphore.SemaphoreTable;
import io.tenure.core.semaphore.SemaphoreView;
import io.tenure.core.watch.WatchEvent;
import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Deterministic apply (I8) across every grant-queue kind at once: replicas fed the same log of
 * read and write locks with downgrades, semaphores, elections with proclaims, barriers, double
 * barriers and count-down latches, over
 * leases that are renewed, expire and come back, with commands packed several to an entry, end
 * in byte-identical snapshots and views having produced identical results and effects at every
 * step, also one that joined half-way from a snapshot. After every step the exclusion invariants
 * hold for each kind (I1: never a writer beside another holder, never more permits than the
 * limit, one leader, fewer waiting than a barrier's parties, no more inside a double barrier
 * than its parties), nothing is held by an ended lease,
 * and watch revisions strictly increase (I2, I10).
 */
class KindsDeterminismTest {
    private static final int STEPS = 3_000;
    private static final long[] LEASES = {1, 2, 3, 4, 5, 6};
    private static final String[] NAMES = {"n/a", "n/b", "n/c"};

    @Test
    void replicasFedTheSameLogOfEveryKindStayIdenticalAndSafe() {
        for (long seed : new long[] {3, 17, 4242}) {
            Random random = new Random(seed);
            Replica generator = new Replica();
            Replica a = new Replica();
            Replica b = new Replica();
            Replica joined = null;
            Set<String> outcomes = new HashSet<>();
            long lastRevision = 0;
            for (int step = 0; step < STEPS; step++) {
                Command command = next(random, generator, step);
                boolean newEntry = step == 0 || random.nextInt(4) != 0;
                apply(generator, command, newEntry);
                if (step == STEPS / 2) {
                    joined = Replica.restore(a.snapshot());
                }
                Applied fromA = apply(a, command, newEntry);
                String rendered = Rendering.of(fromA);
                String context = "seed " + seed + " step " + step + " " + Rendering.of(command);
                assertThat(Rendering.of(apply(b, command, newEntry))).as(context).isEqualTo(rendered);
                if (joined != null) {
                    assertThat(Rendering.of(apply(joined, command, newEntry))).as(context + " (joined)").isEqualTo(rendered);
                }
                for (WatchEvent event : Replica.watched(fromA)) {
                    assertThat(event.revision()).as(context + " revisions increase").isGreaterThan(lastRevision);
                    lastRevision = event.revision();
                }
                checkExclusion(a, context);
                outcomes.add(fromA.result().getClass().getSimpleName());
            }
            assertThat(b.snapshot()).isEqualTo(a.snapshot());
            assertThat(joined.snapshot()).isEqualTo(a.snapshot());
            assertThat(b.view()).isEqualTo(a.view());
            assertThat(joined.view().substring(0, joined.view().indexOf("\nhorizon=")))
                    .isEqualTo(a.view().substring(0, a.view().indexOf("\nhorizon=")));
            // The log must exercise every kind, or the equalities above prove little.
            assertThat(outcomes).as("seed " + seed).contains("Granted", "Queued", "Released", "Downgraded", "Elected", "Candidate",
                    "Proclaimed", "Resigned", "Waiting", "Entered", "Entering", "Leaving", "Left", "LeaseEnded",
                    "CountSet", "CountedDown", "Open", "Forgotten", "Deadlock");
        }
    }

    private static Applied apply(Replica replica, Command command, boolean newEntry) {
        return newEntry ? replica.apply(command) : replica.applyInSameEntry(command);
    }

    private static void checkExclusion(Replica replica, String context) {
        Set<Long> alive = new HashSet<>();
        for (LeaseView lease : replica.state.leases()) {
            alive.add(lease.leaseId());
        }
        for (LockView lock : replica.locks().locks("", Integer.MAX_VALUE)) {
            assertThat(lock.shared() || lock.holders().size() == 1).as(context + " a writer holds " + lock.key() + " alone").isTrue();
            lock.holders().forEach(h -> assertThat(alive).as(context + " holder alive").contains(h.leaseId()));
        }
        for (SemaphoreView semaphore : replica.state.primitive(SemaphoreTable.class).semaphores("", Integer.MAX_VALUE)) {
            int held = semaphore.holders().stream().mapToInt(SemaphoreView.Holder::permits).sum();
            assertThat(held).as(context + " permits of " + semaphore.key()).isLessThanOrEqualTo(semaphore.limit());
            semaphore.holders().forEach(h -> assertThat(alive).as(context + " holder alive").contains(h.leaseId()));
        }
        for (ElectionView election : replica.state.primitive(ElectionTable.class).elections("", Integer.MAX_VALUE)) {
            assertThat(alive).as(context + " leader of " + election.key() + " alive").contains(election.leaderLeaseId());
        }
        for (BarrierView barrier : replica.barriers()) {
            assertThat(barrier.waiting().size()).as(context + " waiting at " + barrier.key()).isLessThan(barrier.parties());
            barrier.waiting().forEach(p -> assertThat(alive).as(context + " party alive").contains(p.leaseId()));
        }
        for (DoubleBarrierView barrier : replica.state.primitive(DoubleBarrierTable.class).barriers("", Integer.MAX_VALUE)) {
            assertThat(barrier.inside().size() + barrier.leaving().size() + barrier.left().size()).as(context + " inside " + barrier.key())
                    .isLessThanOrEqualTo(barrier.parties());
            for (List<DoubleBarrierView.Party> parties : List.of(barrier.entering(), barrier.inside(), barrier.leaving(), barrier.left())) {
                parties.forEach(p -> assertThat(alive).as(context + " party alive").contains(p.leaseId()));
            }
        }
        List<io.tenure.core.scope.ScopeView.Holder> scopeHolders = replica.state.primitive(io.tenure.core.scope.ScopeTable.class).holders();
        for (int i = 0; i < scopeHolders.size(); i++) {
            assertThat(alive).as(context + " scope holder alive").contains(scopeHolders.get(i).leaseId());
            for (int j = 0; j < i; j++) {
                for (io.tenure.core.scope.ScopeRequest x : scopeHolders.get(i).scopes()) {
                    for (io.tenure.core.scope.ScopeRequest y : scopeHolders.get(j).scopes()) {
                        assertThat(io.tenure.core.scope.LockScope.conflicts(x.scope(), x.exclusive(), y.scope(), y.exclusive()))
                                .as(context + " scope sets held at once conflict: " + x + " and " + y).isFalse();
                    }
                }
            }
        }
        for (LatchView latch : replica.state.primitive(LatchTable.class).latches("", Integer.MAX_VALUE)) {
            assertThat(latch.count()).as(context + " count of " + latch.key()).isPositive();
            latch.waiting().forEach(w -> assertThat(alive).as(context + " latch waiter alive").contains(w.leaseId()));
        }
    }

    /** A varied command, made plausible by the generator's state (a holder's token, a lease's renewal point). */
    private static Command next(Random random, Replica state, int step) {
        long lease = LEASES[random.nextInt(LEASES.length)];
        // Each kind has its own names, so that the kinds meet in leases and entries, not in refusals.
        String name = NAMES[random.nextInt(NAMES.length)];
        int dice = random.nextInt(120);
        if (dice >= 110) {
            return scopeCommand(random, state, lease, dice - 110);
        }
        if (dice == 109) {
            // The leader forgets what it saw idle; a name used again since stays.
            return new io.tenure.core.kernel.IdleForget(state.state.idleAfter(0, 8));
        }
        if (dice >= 100) {
            return latchCommand(random, "done/" + name, lease, dice - 100);
        }
        if (dice < 6) {
            return new LeaseGrant(lease, 2_000, "client" + lease);
        } else if (dice < 12) {
            return new LeaseRenew(new long[] {lease, LEASES[random.nextInt(LEASES.length)]});
        } else if (dice < 15) {
            LeaseView view = state.lease(lease);
            return new LeaseExpire(lease, view == null ? 0 : view.renewedAt());
        } else if (dice < 35) {
            return new LockAcquire("lock/" + name, lease, null, random.nextInt(4) != 0, 0, random.nextInt(3) != 0);
        } else if (dice < 45) {
            LockView lock = state.lock("lock/" + name);
            if (lock == null) {
                return new LockRelease("lock/" + name, lease, 1);
            }
            LockView.Holder h = lock.holders().get(random.nextInt(lock.holders().size()));
            return random.nextInt(4) == 0 ? new LockDowngrade(lock.key(), h.leaseId(), h.fencingToken())
                    : new LockRelease(lock.key(), h.leaseId(), h.fencingToken());
        } else if (dice < 55) {
            return new SemaphoreAcquire("pool/" + name, lease, 3, 1 + random.nextInt(2), random.nextInt(4) != 0, 0);
        } else if (dice < 62) {
            SemaphoreView semaphore = state.state.primitive(SemaphoreTable.class).semaphore("pool/" + name);
            if (semaphore == null || semaphore.holders().isEmpty()) {
                return new SemaphoreRelease("pool/" + name, lease, 1);
            }
            SemaphoreView.Holder h = semaphore.holders().get(random.nextInt(semaphore.holders().size()));
            return new SemaphoreRelease(semaphore.key(), h.leaseId(), h.fencingToken());
        } else if (dice < 72) {
            return new ElectionCampaign("leader/" + name, lease, ("v" + step).getBytes(), random.nextInt(4) != 0, 0);
        } else if (dice < 80) {
            ElectionView election = state.state.primitive(ElectionTable.class).election("leader/" + name);
            if (election == null) {
                return new ElectionResign("leader/" + name, lease, 1);
            }
            return random.nextBoolean()
                    ? new ElectionProclaim(election.key(), election.leaderLeaseId(), election.fencingToken(), ("p" + step).getBytes())
                    : new ElectionResign(election.key(), election.leaderLeaseId(), election.fencingToken());
        } else if (dice < 88) {
            return new BarrierAwait("gate/" + name, lease, 3, random.nextInt(5) != 0, 0);
        } else if (dice < 90) {
            return new BarrierCancel("gate/" + name, lease, 0);
        } else if (dice < 95) {
            return new DoubleBarrierEnter("phase/" + name, lease, 2, random.nextInt(5) != 0, 0);
        } else if (dice < 99) {
            return new DoubleBarrierLeave("phase/" + name, lease, random.nextInt(4) != 0);
        }
        return new DoubleBarrierWithdraw("phase/" + name, lease, 0);
    }

    /** Lock scopes: small sets of ranges of two inodes and paths of one tree, so that they conflict, queue and deadlock. */
    private static Command scopeCommand(Random random, Replica state, long lease, int dice) {
        io.tenure.core.scope.ScopeTable scopes = state.state.primitive(io.tenure.core.scope.ScopeTable.class);
        if (dice < 6) {
            List<io.tenure.core.scope.ScopeRequest> set = new java.util.ArrayList<>();
            long start = random.nextInt(8);
            set.add(new io.tenure.core.scope.ScopeRequest(
                    new io.tenure.core.scope.LockScope.ByteRange(1 + random.nextInt(2), start, start + 1 + random.nextInt(4)),
                    random.nextInt(3) != 0));
            if (random.nextBoolean()) {
                String[] paths = {"/t", "/t/a", "/t/b", "/t/a/x"};
                set.add(new io.tenure.core.scope.ScopeRequest(new io.tenure.core.scope.LockScope.Path(paths[random.nextInt(paths.length)]),
                        random.nextBoolean()));
            }
            return new io.tenure.core.scope.ScopeAcquire(lease, set, null, random.nextInt(4) != 0, 1 + random.nextInt(1_000));
        }
        if (dice < 9) {
            List<io.tenure.core.scope.ScopeView.Holder> holders = scopes.holders();
            if (holders.isEmpty()) {
                return new io.tenure.core.scope.ScopeRelease(lease, 1);
            }
            io.tenure.core.scope.ScopeView.Holder h = holders.get(random.nextInt(holders.size()));
            return new io.tenure.core.scope.ScopeRelease(h.leaseId(), h.fencingToken());
        }
        List<io.tenure.core.scope.ScopeView.Waiter> waiters = scopes.waiters();
        return waiters.isEmpty() ? new io.tenure.core.scope.ScopeCancel(lease, 1)
                : new io.tenure.core.scope.ScopeCancel(waiters.get(0).leaseId(), waiters.get(0).requestId());
    }

    private static Command latchCommand(Random random, String name, long lease, int dice) {
        if (dice < 3) {
            return new LatchSetCount(name, 1 + random.nextInt(3), random.nextInt(1_000));
        } else if (dice < 6) {
            return new LatchCountDown(name, random.nextInt(1_000));
        } else if (dice < 9) {
            return new LatchAwait(name, lease, random.nextInt(4) != 0, random.nextInt(1_000));
        }
        return new LatchCancel(name, lease, random.nextInt(1_000));
    }
}
