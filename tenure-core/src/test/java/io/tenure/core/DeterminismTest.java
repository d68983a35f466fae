package io.tenure.core;

import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.Command;
import io.tenure.core.kernel.Effect;
import io.tenure.core.kernel.LeaseView;
import io.tenure.core.lock.LockView;
import io.tenure.core.kernel.ReadBarrier;
import io.tenure.core.kernel.Result;
import io.tenure.core.kernel.LeaseExpire;
import io.tenure.core.kernel.LeaseGrant;
import io.tenure.core.kernel.LeaseRenew;
import io.tenure.core.kernel.LeaseRevoke;
import io.tenure.core.lock.LockAcquire;
import io.tenure.core.lock.LockCancel;
import io.tenure.core.lock.LockRelease;
import io.tenure.core.lock.LockResult.Granted;
import io.tenure.core.kernel.LeaseResult.LeaseEnded;
import io.tenure.core.lock.LockResult.Released;
import io.tenure.core.watch.WatchEvent;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;

import static io.tenure.core.Replica.effects;
import static io.tenure.core.Replica.grantsToWaiters;
import static io.tenure.core.Replica.waitsEnded;
import static io.tenure.core.Replica.watched;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Deterministic apply (I8): replicas fed the same long, varied log end in byte-identical
 * snapshots having produced identical results and effects at every step, also when one of
 * them joined half-way from a snapshot. After every step the safety invariants hold (I1, I2, I7).
 */
class DeterminismTest {
    private static final int STEPS = 4_000;
    private static final long[] LEASE_IDS = {1, 2, 3, 4, 5, 6, 7, 8, -9};
    private static final String[] KEYS = {"k0", "k1", "k2", "k3", "jobs/a", "jobs/b", "\u9396"};

    /** One log step: a command, and whether it starts a new log entry or shares the previous one. */
    private record Step(Command command, boolean newEntry) {}

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 7, 2024, 90210})
    void replicasFedTheSameLogStayIdenticalAndSafe(long seed) {
        List<Step> log = generate(seed);
        Replica a = new Replica();
        Replica b = new Replica();
        Replica joined = null;
        Stamps stamps = new Stamps();
        Map<String, Integer> kinds = new TreeMap<>();
        List<String> outputsA = new ArrayList<>();
        List<String> outputsB = new ArrayList<>();

        for (int i = 0; i < log.size(); i++) {
            Step step = log.get(i);
            if (i == log.size() / 2) {
                joined = Replica.restore(a.snapshot());
            }
            Applied fromA = apply(a, step);
            Applied fromB = apply(b, step);
            outputsA.add(Rendering.of(fromA));
            outputsB.add(Rendering.of(fromB));
            assertThat(outputsB.get(i)).as("step %d: %s", i, Rendering.of(step.command())).isEqualTo(outputsA.get(i));
            if (joined != null) {
                assertThat(Rendering.of(apply(joined, step))).as("replica restored at step %d, step %d", log.size() / 2, i)
                        .isEqualTo(outputsA.get(i));
            }
            checkOutputs(fromA, stamps);
            checkInvariants(a);
            count(kinds, fromA);
        }

        assertThat(outputsB).isEqualTo(outputsA);
        assertThat(b.snapshot()).isEqualTo(a.snapshot());
        assertThat(joined.snapshot()).isEqualTo(a.snapshot());
        assertThat(b.view()).isEqualTo(a.view());
        // The log must exercise the machinery, or the equalities above prove little.
        assertThat(kinds).containsKeys("Granted", "Granted(again)", "Queued", "Busy", "Released", "Cancelled",
                "LeaseEnded(EXPIRED)", "LeaseEnded(REVOKED)", "Skipped", "LeasesRenewed", "LeaseGranted",
                "Rejected(NOT_FOUND)", "Rejected(FAILED_PRECONDITION)", "Rejected(ALREADY_EXISTS)", "Rejected(INVALID_ARGUMENT)",
                "Wake(Granted)", "Wake(Rejected)");
        assertThat(kinds.get("Wake(Granted)")).isGreaterThan(50);
    }

    private static Applied apply(Replica replica, Step step) {
        return step.newEntry() ? replica.apply(step.command()) : replica.applyInSameEntry(step.command());
    }

    // ---- the checks ---------------------------------------------------------------------------

    /** Stamps (tokens and revisions) seen so far: they strictly increase across the whole log. */
    private static final class Stamps {
        long last;
        final Map<String, Long> lastTokenByKey = new HashMap<>();
        final Set<Long> tokens = new HashSet<>();
    }

    private static void checkOutputs(Applied applied, Stamps stamps) {
        List<Long> grantTokens = new ArrayList<>();
        if (applied.result() instanceof Granted g && !g.again()) {
            grantTokens.add(g.fencingToken());
            checkToken(stamps, g.key(), g.fencingToken());
        }
        List<Granted> woken = grantsToWaiters(applied);
        for (Granted w : woken) {
            grantTokens.add(w.fencingToken());
            checkToken(stamps, w.key(), w.fencingToken());
        }
        List<Long> putRevisions = new ArrayList<>();
        for (WatchEvent event : watched(applied)) {
            assertThat(event.revision()).as("watch revisions strictly increase").isGreaterThan(stamps.last);
            stamps.last = event.revision();
            if (event.type() == WatchEvent.Type.PUT) {
                putRevisions.add(event.revision());
            }
        }
        assertThat(putRevisions).as("a PUT per grant, with the grant's token").containsExactlyInAnyOrderElementsOf(grantTokens);

        // No herd (I7): only what became free is handed over, one waiter per lock.
        Result result = applied.result();
        if (result instanceof Released released) {
            assertThat(woken).hasSizeLessThanOrEqualTo(1);
            woken.forEach(w -> assertThat(w.fencingToken()).isEqualTo(released.nextFencingToken()));
        } else if (result instanceof LeaseEnded ended) {
            assertThat(woken).extracting(Granted::key).containsExactlyElementsOf(
                    ended.released().stream().filter(k -> woken.stream().anyMatch(w -> w.key().equals(k))).toList());
            assertThat(woken).hasSizeLessThanOrEqualTo(ended.released().size());
            assertThat(waitsEnded(applied)).allSatisfy(w -> assertThat(w.leaseId()).isEqualTo(ended.leaseId()));
        } else {
            assertThat(woken).as("only a release or a lease's end hands a lock over").isEmpty();
            assertThat(waitsEnded(applied)).isEmpty();
        }
    }

    private static void checkToken(Stamps stamps, String key, long token) {
        Long previous = stamps.lastTokenByKey.put(key, token);
        if (previous != null) {
            assertThat(token).as("tokens of %s strictly increase (I2)", key).isGreaterThan(previous);
        }
        assertThat(stamps.tokens.add(token)).as("token %d is unique across keys (I2)", token).isTrue();
    }

    /** I1 and the consistency of locks, queues and leases, from the public views. */
    static void checkInvariants(Replica replica) {
        TenureState state = replica.state;
        Map<Long, LeaseView> leases = new HashMap<>();
        for (LeaseView lease : state.leases()) {
            leases.put(lease.leaseId(), lease);
        }
        List<LockView> locks = replica.locks().locks("", Integer.MAX_VALUE);
        assertThat(locks).hasSize(replica.locks().lockCount());
        assertThat(leases).hasSize(state.leaseCount());
        Set<String> heldByLeases = new HashSet<>();
        for (LeaseView lease : leases.values()) {
            for (String key : lease.held()) {
                assertThat(heldByLeases.add(key)).as("%s held by one lease only (I1)", key).isTrue();
                LockView lock = replica.lock(key);
                assertThat(lock).as("lock %s held by lease %d", key, lease.leaseId()).isNotNull();
                assertThat(lock.leaseId()).isEqualTo(lease.leaseId());
            }
            for (String key : lease.waiting()) {
                LockView lock = replica.lock(key);
                assertThat(lock).as("lock %s waited for by lease %d", key, lease.leaseId()).isNotNull();
                assertThat(lock.waiters()).extracting(LockView.Waiter::leaseId).contains(lease.leaseId());
            }
        }
        for (LockView lock : locks) {
            LeaseView holder = leases.get(lock.leaseId());
            assertThat(holder).as("the holder of %s exists (I1)", lock.key()).isNotNull();
            assertThat(holder.held()).contains(lock.key());
            assertThat(lock.holder()).isEqualTo(holder.clientId());
            long joinedBefore = Long.MIN_VALUE;
            Set<Long> waiting = new HashSet<>();
            for (LockView.Waiter waiter : lock.waiters()) {
                LeaseView lease = leases.get(waiter.leaseId());
                assertThat(lease).as("waiter %d of %s exists", waiter.leaseId(), lock.key()).isNotNull();
                assertThat(lease.waiting()).contains(lock.key());
                assertThat(waiter.leaseId()).as("the holder does not wait for its own lock").isNotEqualTo(lock.leaseId());
                assertThat(waiting.add(waiter.leaseId())).as("one queue entry per lease").isTrue();
                assertThat(waiter.joinedAt()).as("queue of %s in join order (I7)", lock.key()).isGreaterThan(joinedBefore);
                joinedBefore = waiter.joinedAt();
            }
        }
        assertThat(heldByLeases).containsExactlyInAnyOrderElementsOf(locks.stream().map(LockView::key).toList());
    }

    private static void count(Map<String, Integer> kinds, Applied applied) {
        Result r = applied.result();
        String kind = r.getClass().getSimpleName();
        if (r instanceof Granted g && g.again()) {
            kind = "Granted(again)";
        } else if (r instanceof LeaseEnded e) {
            kind = "LeaseEnded(" + e.reason() + ")";
        } else if (r instanceof Result.Rejected rejected) {
            kind = "Rejected(" + rejected.code() + ")";
        }
        kinds.merge(kind, 1, Integer::sum);
        for (Effect effect : applied.effects()) {
            kinds.merge(effect instanceof Effect.Wake wake ? "Wake(" + wake.result().getClass().getSimpleName() + ")"
                    : effect.getClass().getSimpleName(), 1, Integer::sum);
        }
    }

    // ---- the log ------------------------------------------------------------------------------

    /**
     * A log of varied commands. A model replica applies them as they are generated, so that most
     * commands are plausible (right tokens, matching renewal points) and some are not (stale
     * tokens, foreign leases, stale expiries, retries, bad input).
     */
    private static List<Step> generate(long seed) {
        Random random = new Random(seed);
        Replica model = new Replica();
        List<Step> log = new ArrayList<>();
        List<LockRelease> releases = new ArrayList<>();
        for (int i = 0; i < STEPS; i++) {
            Command command = next(random, model, releases);
            boolean newEntry = log.isEmpty() || random.nextInt(4) != 0;
            Applied applied = newEntry ? model.apply(command) : model.applyInSameEntry(command);
            if (command instanceof LockRelease release && applied.result() instanceof Released) {
                releases.add(release);
            }
            log.add(new Step(command, newEntry));
        }
        return log;
    }

    private static Command next(Random random, Replica model, List<LockRelease> releases) {
        long lease = LEASE_IDS[random.nextInt(LEASE_IDS.length)];
        String key = KEYS[random.nextInt(KEYS.length)];
        LeaseView view = model.lease(lease);
        LockView lock = model.lock(key);
        int dice = random.nextInt(100);
        if (dice < 10) {
            long ttl = random.nextInt(8) == 0 ? 3_000 : 2_000;
            String client = random.nextInt(10) == 0 ? "someone-else" : "client" + lease;
            return new LeaseGrant(lease, ttl, client);
        } else if (dice < 20) {
            long[] ids = new long[1 + random.nextInt(3)];
            for (int i = 0; i < ids.length; i++) {
                ids[i] = LEASE_IDS[random.nextInt(LEASE_IDS.length)];
            }
            return new LeaseRenew(ids);
        } else if (dice < 23) {
            return new LeaseRevoke(lease);
        } else if (dice < 30) {
            if (view == null) {
                return new LeaseExpire(lease, random.nextInt(1000));
            }
            boolean stale = random.nextInt(3) == 0;
            return new LeaseExpire(lease, stale ? view.renewedAt() - 1 - random.nextInt(3) : view.renewedAt());
        } else if (dice < 32) {
            return new ReadBarrier();
        } else if (dice < 60) {
            byte[] metadata = random.nextBoolean() ? null : new byte[] {(byte) random.nextInt(), (byte) lease};
            String name = random.nextInt(50) == 0 ? "" : key;
            // A few request ids, so that copies of one acquire (and late ones) recur.
            long requestId = random.nextInt(3) == 0 ? 0 : 1 + random.nextInt(6);
            return new LockAcquire(name, lease, metadata, random.nextInt(4) != 0, requestId);
        } else if (dice < 67) {
            if (lock != null && !lock.waiters().isEmpty() && random.nextBoolean()) {
                lease = lock.waiters().get(random.nextInt(lock.waiters().size())).leaseId();
            }
            return new LockCancel(key, lease, random.nextInt(3) == 0 ? 0 : 1 + random.nextInt(6));
        } else {
            int how = random.nextInt(20);
            if (how < 2 && !releases.isEmpty()) {
                return releases.get(random.nextInt(releases.size())); // a retry
            }
            if (lock == null) {
                return new LockRelease(key, lease, random.nextInt(1 << 20));
            }
            if (how < 14) {
                return new LockRelease(key, lock.leaseId(), lock.fencingToken());
            } else if (how < 17) {
                return new LockRelease(key, lock.leaseId(), lock.fencingToken() + (random.nextBoolean() ? 1 : -1));
            }
            return new LockRelease(key, lease, lock.fencingToken());
        }
    }
}
