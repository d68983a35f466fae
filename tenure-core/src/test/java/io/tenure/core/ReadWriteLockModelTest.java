package io.tenure.core;

import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.Command;
import io.tenure.core.kernel.Result;
import io.tenure.core.kernel.Result.Code;
import io.tenure.core.lock.LockAcquire;
import io.tenure.core.lock.LockCancel;
import io.tenure.core.lock.LockDowngrade;
import io.tenure.core.lock.LockRelease;
import io.tenure.core.lock.LockResult;
import io.tenure.core.lock.LockTable;
import io.tenure.core.lock.LockView;
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
 * The read/write lock against a plain reference model, over thousands of seeded command
 * sequences (read and write acquires that wait or try, mode mismatches, releases with right and
 * stale tokens, downgrades, withdrawals, leases revoked while holding and waiting). At every
 * applied index: the same holders (lease and mode, in grant order) and the same queue (lease and
 * mode) as the model, never a writer beside another holder, no holder or waiter on an ended
 * lease, each new grant's token above every token the lock had before (so a writer's token is
 * above every earlier reader's), and every 25 commands a snapshot that restores to
 * byte-identical state ({@link ModelRun}).
 */
class ReadWriteLockModelTest {
    private static final String[] NAMES = {"rw/a", "rw/b"};
    private static final long[] LEASES = {1, 2, 3, 4, 5, 6};

    @Test
    void everyAppliedIndexMatchesTheReferenceModel() {
        ModelRun.run(2_000, 150, LEASES, Model::new);
    }

    private static String mode(Boolean shared) {
        return shared == null ? "?" : shared ? "r" : "w";
    }

    /** Read/write locks as plain maps, with the rules written out once more, simply. */
    private static final class Model extends ModelRun.Model {
        final TreeMap<String, Rw> locks = new TreeMap<>();
        /** Releases already done, by token: a retry succeeds again. */
        final Map<Long, String> released = new HashMap<>();

        static final class Rw {
            /** lease → shared, in grant order; and the token each holder was granted with. */
            final LinkedHashMap<Long, Boolean> held = new LinkedHashMap<>();
            final Map<Long, Long> heldToken = new HashMap<>();
            final LinkedHashMap<Long, Boolean> queue = new LinkedHashMap<>();

            boolean fits(boolean shared) {
                return shared ? !held.containsValue(false) : held.isEmpty();
            }

            List<String> holders() {
                List<String> out = new ArrayList<>();
                held.forEach((l, s) -> out.add(l + (s ? "r" : "w")));
                return out;
            }

            List<String> waiters() {
                List<String> out = new ArrayList<>();
                queue.forEach((l, s) -> out.add(l + (s ? "r" : "w")));
                return out;
            }

            /** Grants from the head while the head fits: readers behind a reading head join it, a writer stops the scan. */
            void grantWaiters() {
                while (!queue.isEmpty()) {
                    Map.Entry<Long, Boolean> head = queue.entrySet().iterator().next();
                    if (!fits(head.getValue())) {
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
                LockView view = replica.state.primitive(LockTable.class).lock(name);
                Rw rw = locks.get(name);
                if (rw == null) {
                    assertThat(view).as(context + " " + name + " exists").isNull();
                    continue;
                }
                assertThat(view).as(context + " " + name).isNotNull();
                assertThat(view.holders().stream().map(h -> h.leaseId() + mode(rw.held.get(h.leaseId()))).toList())
                        .as(context + " holders of " + name).isEqualTo(rw.holders());
                assertThat(view.waiters().stream().map(w -> w.leaseId() + (w.shared() ? "r" : "w")).toList())
                        .as(context + " queue of " + name).isEqualTo(rw.waiters());
                assertThat(view.shared()).as(context + " mode").isEqualTo(rw.held.containsValue(true));
                if (!view.shared()) {
                    assertThat(view.holders()).as(context + " a writer holds alone").hasSize(1);
                }
                assertThat(view.leaseId()).isEqualTo(view.holders().get(0).leaseId());
                Set<Long> seen = new HashSet<>();
                for (LockView.Holder h : view.holders()) {
                    assertThat(alive).as(context + " holder alive").contains(h.leaseId());
                    seen.add(h.fencingToken());
                }
                view.waiters().forEach(w -> assertThat(alive).as(context + " waiter alive").contains(w.leaseId()));
                checkNewTokens(name, seen, context);
                // The model learns each grant's token from the state it was checked against.
                rw.heldToken.clear();
                view.holders().forEach(h -> rw.heldToken.put(h.leaseId(), h.fencingToken()));
            }
        }

        @Override
        String outcome(Result result) {
            if (result instanceof LockResult.Granted g) {
                return g.again() ? "Granted again" : "Granted";
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
                return new LockAcquire(name, lease, null, random.nextInt(4) != 0, 0, random.nextInt(3) != 0);
            } else if (dice < 63) {
                return new LockCancel(name, lease, 0);
            }
            LockView view = replica.state.primitive(LockTable.class).lock(name);
            if (view != null && random.nextInt(5) != 0) {
                LockView.Holder h = view.holders().get(random.nextInt(view.holders().size()));
                long token = h.fencingToken() + (random.nextInt(8) == 0 ? 1 : 0);
                return dice < 75 ? new LockDowngrade(name, h.leaseId(), token) : new LockRelease(name, h.leaseId(), token);
            }
            return dice < 70 ? new LockDowngrade(name, lease, 1 + random.nextInt(1 << 20)) : new LockRelease(name, lease, 1 + random.nextInt(1 << 20));
        }

        @Override
        void leaseEnded(long leaseId) {
            for (String name : List.copyOf(locks.keySet())) {
                Rw rw = locks.get(name);
                if (rw.held.remove(leaseId) != null) {
                    rw.grantWaiters();
                    dropIfFree(name);
                }
            }
            for (String name : List.copyOf(locks.keySet())) {
                Rw rw = locks.get(name);
                if (rw.queue.remove(leaseId) != null) {
                    rw.grantWaiters();
                }
            }
        }

        @Override
        String applyOwn(Command command) {
            if (command instanceof LockAcquire a) {
                if (!alive.contains(a.leaseId())) {
                    return "Rejected " + Code.NOT_FOUND;
                }
                Rw rw = locks.get(a.key());
                if (rw != null && rw.held.containsKey(a.leaseId())) {
                    return rw.held.get(a.leaseId()) == a.shared() ? "Granted again" : "Rejected " + Code.FAILED_PRECONDITION;
                }
                if (rw != null && rw.queue.containsKey(a.leaseId())) {
                    return rw.queue.get(a.leaseId()) == a.shared() ? "Queued" : "Rejected " + Code.FAILED_PRECONDITION;
                }
                if (rw == null) {
                    rw = new Rw();
                    locks.put(a.key(), rw);
                }
                if (rw.queue.isEmpty() && rw.fits(a.shared())) {
                    rw.held.put(a.leaseId(), a.shared());
                    return "Granted";
                }
                if (!a.queue()) {
                    return "Busy";
                }
                rw.queue.put(a.leaseId(), a.shared());
                return "Queued";
            }
            if (command instanceof LockCancel c) {
                Rw rw = locks.get(c.key());
                if (rw != null && rw.held.containsKey(c.leaseId())) {
                    return "Granted again";
                }
                if (rw != null && rw.queue.remove(c.leaseId()) != null) {
                    rw.grantWaiters();
                }
                return "Cancelled";
            }
            if (command instanceof LockRelease r) {
                Rw rw = locks.get(r.key());
                Long token = rw == null ? null : rw.heldToken.get(r.leaseId());
                if (token != null && token == r.fencingToken()) {
                    rw.held.remove(r.leaseId());
                    rw.heldToken.remove(r.leaseId());
                    rw.grantWaiters();
                    dropIfFree(r.key());
                    released.put(r.fencingToken(), r.key() + "/" + r.leaseId());
                    return "Released";
                }
                if ((r.key() + "/" + r.leaseId()).equals(released.get(r.fencingToken()))) {
                    return "Released";
                }
                return "Rejected " + (alive.contains(r.leaseId()) ? Code.FAILED_PRECONDITION : Code.NOT_FOUND);
            }
            if (command instanceof LockDowngrade d) {
                Rw rw = locks.get(d.key());
                Long token = rw == null ? null : rw.heldToken.get(d.leaseId());
                if (token != null && token == d.fencingToken()) {
                    rw.held.put(d.leaseId(), true);
                    rw.grantWaiters();
                    return "Downgraded";
                }
                return "Rejected " + (alive.contains(d.leaseId()) ? Code.FAILED_PRECONDITION : Code.NOT_FOUND);
            }
            throw new IllegalArgumentException("unexpected " + command);
        }

        private void dropIfFree(String name) {
            Rw rw = locks.get(name);
            if (rw.held.isEmpty()) {
                assertThat(rw.queue).as("a free lock has nobody waiting").isEmpty();
                locks.remove(name);
            }
        }
    }
}
