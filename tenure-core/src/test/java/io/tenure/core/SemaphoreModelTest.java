package io.tenure.core;

import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.Command;
import io.tenure.core.kernel.IdleForget;
import io.tenure.core.kernel.IdleName;
import io.tenure.core.kernel.Result;
import io.tenure.core.kernel.Result.Code;
import io.tenure.core.semaphore.SemaphoreAcquire;
import io.tenure.core.semaphore.SemaphoreCancel;
import io.tenure.core.semaphore.SemaphoreRelease;
import io.tenure.core.semaphore.SemaphoreResult;
import io.tenure.core.semaphore.SemaphoreTable;
import io.tenure.core.semaphore.SemaphoreView;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The semaphore against a plain reference model, over thousands of seeded command sequences
 * (acquires that wait or try, with matching and mismatched limits and permits, releases with
 * right and stale tokens, withdrawals, leases revoked while holding and waiting, idle semaphores
 * forgotten, or not when used again since or named as another kind). At every applied index:
 * the same holders (lease and permits, in grant order) and the same queue as the
 * model, at most the limit held, no holder or waiter on an ended lease, each new grant's token
 * above every token the semaphore had before, and every 25 commands a snapshot that restores to
 * byte-identical state ({@link ModelRun}).
 */
class SemaphoreModelTest {
    private static final String[] NAMES = {"pool/a", "pool/b"};
    private static final long[] LEASES = {1, 2, 3, 4, 5, 6};

    @Test
    void everyAppliedIndexMatchesTheReferenceModel() {
        ModelRun.run(2_000, 150, LEASES, Model::new);
    }

    /** Semaphores as plain maps and lists, with the rules written out once more, simply. */
    private static final class Model extends ModelRun.Model {
        final TreeMap<String, Sem> sems = new TreeMap<>();

        static final class Sem {
            final int limit;
            /** lease → permits, in grant order; and the token each holder was granted with. */
            final LinkedHashMap<Long, Integer> held = new LinkedHashMap<>();
            final Map<Long, Long> heldToken = new HashMap<>();
            final LinkedHashMap<Long, Integer> queue = new LinkedHashMap<>();
            /** Whether nobody holds or waits: it keeps its limit until forgotten. */
            boolean idle;
            /** The position it became idle at, learnt from the state it was checked against (0 = not yet). */
            long idleSince;

            Sem(int limit) {
                this.limit = limit;
            }

            int used() {
                return held.values().stream().mapToInt(Integer::intValue).sum();
            }

            List<String> holders() {
                List<String> out = new ArrayList<>();
                held.forEach((l, p) -> out.add(l + "x" + p));
                return out;
            }

            List<String> waiters() {
                List<String> out = new ArrayList<>();
                queue.forEach((l, p) -> out.add(l + "x" + p));
                return out;
            }

            /** Grants from the head while the head fits. */
            void grantWaiters() {
                while (!queue.isEmpty()) {
                    Map.Entry<Long, Integer> head = queue.entrySet().iterator().next();
                    if (used() + head.getValue() > limit) {
                        return;
                    }
                    queue.remove(head.getKey());
                    held.put(head.getKey(), head.getValue());
                }
            }
        }

        @Override
        void check(Replica replica, Applied applied, String context) {
            for (String name : NAMES) {
                SemaphoreView view = replica.state.primitive(SemaphoreTable.class).semaphore(name);
                Sem sem = sems.get(name);
                if (sem == null) {
                    assertThat(view).as(context + " " + name + " exists").isNull();
                    continue;
                }
                assertThat(view).as(context + " " + name).isNotNull();
                assertThat(view.limit()).isEqualTo(sem.limit);
                long idleSince = replica.state.primitive(SemaphoreTable.class).idleSince(name);
                assertThat(idleSince > 0).as(context + " " + name + " idle").isEqualTo(sem.idle);
                if (sem.idle && sem.idleSince != 0) {
                    assertThat(idleSince).as(context + " " + name + " idle since").isEqualTo(sem.idleSince);
                }
                sem.idleSince = idleSince;
                assertThat(view.holders().stream().map(h -> h.leaseId() + "x" + h.permits()).toList())
                        .as(context + " holders of " + name).isEqualTo(sem.holders());
                assertThat(view.waiters().stream().map(w -> w.leaseId() + "x" + w.permits()).toList())
                        .as(context + " queue of " + name).isEqualTo(sem.waiters());
                int held = view.holders().stream().mapToInt(SemaphoreView.Holder::permits).sum();
                assertThat(held).as(context + " permits held").isLessThanOrEqualTo(view.limit()).isEqualTo(view.limit() - view.available());
                Set<Long> seen = new HashSet<>();
                for (SemaphoreView.Holder h : view.holders()) {
                    assertThat(alive).as(context + " holder alive").contains(h.leaseId());
                    seen.add(h.fencingToken());
                }
                view.waiters().forEach(w -> assertThat(alive).as(context + " waiter alive").contains(w.leaseId()));
                checkNewTokens(name, seen, context);
                // The model learns each grant's token from the state it was checked against.
                sem.heldToken.clear();
                view.holders().forEach(h -> sem.heldToken.put(h.leaseId(), h.fencingToken()));
            }
        }

        @Override
        String outcome(Result result) {
            if (result instanceof SemaphoreResult.Granted g) {
                return g.again() ? "Granted again" : "Granted";
            }
            if (result instanceof Result.Forgotten f) {
                return "Forgotten " + f.forgotten() + "/" + f.stayed();
            }
            return super.outcome(result);
        }

        @Override
        Command next(Random random, Replica replica, int step) {
            String name = NAMES[random.nextInt(NAMES.length)];
            long lease = LEASES[random.nextInt(LEASES.length)];
            int dice = random.nextInt(100);
            Command churn = leaseChurn(dice, 3, lease);
            if (churn != null) {
                return churn;
            } else if (dice < 55) {
                Sem sem = sems.get(name);
                int limit = sem != null && random.nextInt(10) != 0 ? sem.limit : 1 + random.nextInt(4);
                int permits = random.nextInt(30) == 0 ? limit + 1 : 1 + random.nextInt(limit);
                if (random.nextInt(50) == 0) {
                    limit = 0;
                }
                return new SemaphoreAcquire(name, lease, limit, permits, random.nextInt(4) != 0, 0);
            } else if (dice < 65) {
                return new SemaphoreCancel(name, lease, 0);
            } else if (dice < 72) {
                // The leader forgets what it saw idle: sometimes since another position, or as another kind.
                long since = replica.state.primitive(SemaphoreTable.class).idleSince(name);
                int stale = random.nextInt(6);
                return new IdleForget(List.of(new IdleName(stale == 0 ? "lock" : SemaphoreTable.NAME, name,
                        stale == 1 ? since + 1 : since)));
            }
            SemaphoreView view = replica.state.primitive(SemaphoreTable.class).semaphore(name);
            if (view != null && !view.holders().isEmpty() && random.nextInt(5) != 0) {
                SemaphoreView.Holder h = view.holders().get(random.nextInt(view.holders().size()));
                return new SemaphoreRelease(name, h.leaseId(), h.fencingToken() + (random.nextInt(8) == 0 ? 1 : 0));
            }
            return new SemaphoreRelease(name, lease, 1 + random.nextInt(1 << 20));
        }

        @Override
        void leaseEnded(long leaseId) {
            for (String name : List.copyOf(sems.keySet())) {
                Sem sem = sems.get(name);
                if (sem.held.remove(leaseId) != null) {
                    sem.grantWaiters();
                    restIfIdle(name);
                }
            }
            for (String name : List.copyOf(sems.keySet())) {
                Sem sem = sems.get(name);
                if (sem.queue.remove(leaseId) != null) {
                    sem.grantWaiters();
                    restIfIdle(name);
                }
            }
        }

        @Override
        String applyOwn(Command command) {
            if (command instanceof SemaphoreAcquire a) {
                if (a.limit() < 1 || a.permits() < 1 || a.permits() > a.limit()) {
                    return "Rejected " + Code.INVALID_ARGUMENT;
                }
                if (!alive.contains(a.leaseId())) {
                    return "Rejected " + Code.NOT_FOUND;
                }
                Sem sem = sems.get(a.key());
                if (sem != null && sem.limit != a.limit()) {
                    return "Rejected " + Code.FAILED_PRECONDITION;
                }
                if (sem != null && sem.held.containsKey(a.leaseId())) {
                    return sem.held.get(a.leaseId()) == a.permits() ? "Granted again" : "Rejected " + Code.FAILED_PRECONDITION;
                }
                if (sem != null && sem.queue.containsKey(a.leaseId())) {
                    return sem.queue.get(a.leaseId()) == a.permits() ? "Queued" : "Rejected " + Code.FAILED_PRECONDITION;
                }
                if (sem == null || sem.idle) {
                    sem = new Sem(a.limit());
                    sems.put(a.key(), sem);
                }
                if (sem.queue.isEmpty() && sem.used() + a.permits() <= sem.limit) {
                    sem.held.put(a.leaseId(), a.permits());
                    return "Granted";
                }
                if (!a.queue()) {
                    return "Busy";
                }
                sem.queue.put(a.leaseId(), a.permits());
                return "Queued";
            }
            if (command instanceof SemaphoreCancel c) {
                Sem sem = sems.get(c.key());
                if (sem != null && sem.held.containsKey(c.leaseId())) {
                    return "Granted again";
                }
                if (sem != null && sem.queue.remove(c.leaseId()) != null) {
                    sem.grantWaiters();
                    restIfIdle(c.key());
                }
                return "Cancelled";
            }
            if (command instanceof SemaphoreRelease r) {
                Sem sem = sems.get(r.key());
                Long token = sem == null ? null : sem.heldToken.get(r.leaseId());
                if (token != null && token == r.fencingToken()) {
                    sem.held.remove(r.leaseId());
                    sem.heldToken.remove(r.leaseId());
                    sem.grantWaiters();
                    restIfIdle(r.key());
                    released.put(r.fencingToken(), r.key() + "/" + r.leaseId());
                    return "Released";
                }
                if ((r.key() + "/" + r.leaseId()).equals(released.get(r.fencingToken()))) {
                    return "Released";
                }
                return "Rejected " + (alive.contains(r.leaseId()) ? Code.FAILED_PRECONDITION : Code.NOT_FOUND);
            }
            if (command instanceof IdleForget f) {
                int forgotten = 0;
                for (IdleName n : f.names()) {
                    Sem sem = sems.get(n.name());
                    if (sem != null && sem.idle && n.kind().equals(SemaphoreTable.NAME) && n.since() == sem.idleSince) {
                        sems.remove(n.name());
                        forgotten++;
                    }
                }
                return "Forgotten " + forgotten + "/" + (f.names().size() - forgotten);
            }
            throw new IllegalArgumentException("unexpected " + command);
        }

        /** Releases already done, by token: a retry succeeds again. */
        final Map<Long, String> released = new HashMap<>();

        private void restIfIdle(String name) {
            Sem sem = sems.get(name);
            if (sem.held.isEmpty() && sem.queue.isEmpty() && !sem.idle) {
                sem.idle = true;
                sem.idleSince = 0;
            }
        }
    }
}
