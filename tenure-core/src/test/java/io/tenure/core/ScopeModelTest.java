package io.tenure.core;

import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.Command;
import io.tenure.core.kernel.Result;
import io.tenure.core.kernel.Result.Code;
import io.tenure.core.scope.LockScope;
import io.tenure.core.scope.ScopeAcquire;
import io.tenure.core.scope.ScopeCancel;
import io.tenure.core.scope.ScopeRelease;
import io.tenure.core.scope.ScopeRequest;
import io.tenure.core.scope.ScopeResult;
import io.tenure.core.scope.ScopeTable;
import io.tenure.core.scope.ScopeView;
import org.junit.jupiter.api.Test;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Lock scopes against a brute-force reference, over thousands of seeded command sequences: sets
 * of one to three inodes, paths and byte ranges (shared or exclusive, sometimes invalid), tried or
 * queued, retried, cancelled, released with right and stale tokens, leases revoked while holding
 * and waiting. The reference checks every pair of parts and walks the whole wait-for graph of
 * leases. At every applied index: the same holders and queue as the reference, no two holders in
 * conflict, no waiter left waiting that conflicts with no holder and no earlier waiter, every new
 * grant's token above every token granted before it, a deadlock reported exactly when the
 * reference finds a cycle, and every 25 commands a snapshot that restores byte for byte.
 */
class ScopeModelTest {
    private static final long[] LEASES = {1, 2, 3, 4, 5};
    private static final String[] PATHS = {"/", "/a", "/a/b", "/a/c", "/a/b/c", "/d"};

    /** How often the reference predicted each outcome, over all sequences: each must be exercised. */
    private static final Map<String, Integer> OUTCOMES = new java.util.TreeMap<>();

    @Test
    void everyAppliedIndexMatchesTheBruteForceReference() {
        ModelRun.run(2_000, 120, LEASES, Model::new);
        assertThat(OUTCOMES).as("outcomes seen").containsKeys("Granted", "Granted again", "Queued", "Busy", "Deadlock", "Released",
                "Cancelled", "Rejected INVALID_ARGUMENT", "Rejected NOT_FOUND", "Rejected FAILED_PRECONDITION");
        assertThat(OUTCOMES.get("Deadlock")).as("deadlocks reported").isGreaterThan(100);
        assertThat(OUTCOMES.get("Queued")).isGreaterThan(1_000);
    }

    /** A set as the reference keeps it. */
    private record Set_(long leaseId, long requestId, List<ScopeRequest> scopes) {
        String render() {
            return leaseId + "#" + requestId + scopes;
        }
    }

    private static boolean conflict(List<ScopeRequest> a, List<ScopeRequest> b) {
        for (ScopeRequest x : a) {
            for (ScopeRequest y : b) {
                if (LockScope.conflicts(x.scope(), x.exclusive(), y.scope(), y.exclusive())) {
                    return true;
                }
            }
        }
        return false;
    }

    private static final class Model extends ModelRun.Model {
        final List<Set_> held = new ArrayList<>();
        final List<Set_> queue = new ArrayList<>();
        /** Held sets' tokens, learnt from the replica after each command. */
        final Map<String, Long> tokenOf = new HashMap<>();
        /** token -> lease of every release, for the retried ones. */
        final Map<Long, Long> released = new HashMap<>();
        /** lease/request of every acquire that ended (released or withdrawn). */
        final Set<String> ended = new HashSet<>();
        long nextRequest = 1;

        @Override
        Command next(Random random, Replica replica, int step) {
            long lease = LEASES[random.nextInt(LEASES.length)];
            int dice = random.nextInt(100);
            Command churn = leaseChurn(dice, 3, lease);
            if (churn != null) {
                return churn;
            }
            ScopeTable table = replica.state.primitive(ScopeTable.class);
            if (dice < 55) {
                long requestId = nextRequest++;
                List<ScopeView.Waiter> waiting = table.waiters();
                if (random.nextInt(12) == 0 && !waiting.isEmpty()) { // a retry of a waiting acquire
                    ScopeView.Waiter w = waiting.get(random.nextInt(waiting.size()));
                    return new ScopeAcquire(w.leaseId(), w.scopes(), null, true, w.requestId());
                }
                if (random.nextInt(15) == 0 && requestId > 2) { // a retry or late copy of an older one
                    requestId = 1 + random.nextInt((int) requestId - 1);
                }
                return new ScopeAcquire(lease, randomSet(random), new byte[] {(byte) step}, random.nextInt(4) != 0, requestId);
            }
            if (dice < 65) {
                List<ScopeView.Waiter> waiting = table.waiters();
                if (!waiting.isEmpty() && random.nextInt(4) != 0) {
                    ScopeView.Waiter w = waiting.get(random.nextInt(waiting.size()));
                    return new ScopeCancel(w.leaseId(), w.requestId());
                }
                return new ScopeCancel(lease, 1 + random.nextInt((int) nextRequest));
            }
            List<ScopeView.Holder> holders = table.holders();
            if (!holders.isEmpty() && random.nextInt(6) != 0) {
                ScopeView.Holder h = holders.get(random.nextInt(holders.size()));
                return new ScopeRelease(h.leaseId(), h.fencingToken() + (random.nextInt(10) == 0 ? 1 : 0));
            }
            if (!released.isEmpty() && random.nextBoolean()) { // a retried release
                long token = released.keySet().stream().sorted().skip(random.nextInt(released.size())).findFirst().orElseThrow();
                return new ScopeRelease(released.get(token), token);
            }
            return new ScopeRelease(lease, 1 + random.nextInt(1 << 20));
        }

        private static List<ScopeRequest> randomSet(Random random) {
            int parts = 1 + (random.nextInt(3) == 0 ? 1 + random.nextInt(2) : 0);
            List<ScopeRequest> set = new ArrayList<>();
            for (int i = 0; i < parts; i++) {
                LockScope scope;
                int kind = random.nextInt(10);
                if (kind < 5) {
                    long start = random.nextInt(12);
                    scope = new LockScope.ByteRange(1 + random.nextInt(2), start, start + 1 + random.nextInt(5));
                } else if (kind < 6) {
                    scope = new LockScope.Inode(1 + random.nextInt(2));
                } else {
                    scope = new LockScope.Path(PATHS[random.nextInt(PATHS.length)]);
                }
                set.add(new ScopeRequest(scope, random.nextInt(10) < 6));
            }
            return set;
        }

        @Override
        String outcome(Result result) {
            if (result instanceof ScopeResult.Granted g) {
                return g.again() ? "Granted again" : "Granted";
            }
            return super.outcome(result);
        }

        @Override
        String applyOwn(Command command) {
            String outcome = applyScope(command);
            OUTCOMES.merge(outcome, 1, Integer::sum);
            return outcome;
        }

        private String applyScope(Command command) {
            if (command instanceof ScopeAcquire a) {
                return acquire(a);
            }
            if (command instanceof ScopeCancel c) {
                Set_ holding = find(held, c.leaseId(), c.requestId());
                if (holding != null) {
                    return "Granted again";
                }
                ended.add(c.leaseId() + "/" + c.requestId());
                Set_ waiting = find(queue, c.leaseId(), c.requestId());
                if (waiting != null) {
                    queue.remove(waiting);
                    grantWaiters();
                }
                return "Cancelled";
            }
            ScopeRelease r = (ScopeRelease) command;
            for (Set_ s : held) {
                if (s.leaseId() == r.leaseId() && tokenOf.get(s.render()) == r.fencingToken()) {
                    held.remove(s);
                    ended.add(s.leaseId() + "/" + s.requestId());
                    released.put(r.fencingToken(), r.leaseId());
                    grantWaiters();
                    return "Released";
                }
            }
            Long before = released.get(r.fencingToken());
            if (before != null && before == r.leaseId()) {
                return "Released";
            }
            return "Rejected " + (alive.contains(r.leaseId()) ? Code.FAILED_PRECONDITION : Code.NOT_FOUND);
        }

        private String acquire(ScopeAcquire a) {
            List<ScopeRequest> scopes = a.scopes();
            for (int i = 0; i < scopes.size(); i++) {
                for (int j = 0; j < i; j++) {
                    if (LockScope.overlaps(scopes.get(i).scope(), scopes.get(j).scope())) {
                        return "Rejected " + Code.INVALID_ARGUMENT;
                    }
                }
            }
            if (!alive.contains(a.leaseId())) {
                return "Rejected " + Code.NOT_FOUND;
            }
            if (ended.contains(a.leaseId() + "/" + a.requestId())) {
                return "Rejected " + Code.FAILED_PRECONDITION;
            }
            if (find(held, a.leaseId(), a.requestId()) != null) {
                return "Granted again";
            }
            if (find(queue, a.leaseId(), a.requestId()) != null) {
                return "Queued";
            }
            Set_ set = new Set_(a.leaseId(), a.requestId(), scopes);
            boolean blocked = held.stream().anyMatch(h -> conflict(h.scopes(), scopes))
                    || queue.stream().anyMatch(w -> conflict(w.scopes(), scopes));
            if (!blocked) {
                held.add(set);
                return "Granted";
            }
            if (!a.queue()) {
                return "Busy";
            }
            if (closesCycle(set)) {
                return "Deadlock";
            }
            queue.add(set);
            return "Queued";
        }

        /** Whom each set waits for, as leases: conflicting holders and earlier conflicting waiters. */
        private Set<Long> waitsFor(Set_ set, int queuedAt) {
            Set<Long> leases = new HashSet<>();
            for (Set_ h : held) {
                if (conflict(h.scopes(), set.scopes())) {
                    leases.add(h.leaseId());
                }
            }
            for (int i = 0; i < queuedAt; i++) {
                if (conflict(queue.get(i).scopes(), set.scopes())) {
                    leases.add(queue.get(i).leaseId());
                }
            }
            return leases;
        }

        /** Whether the asking lease is reachable from the leases the new set would wait for. */
        private boolean closesCycle(Set_ set) {
            Map<Long, Set<Long>> edges = new HashMap<>();
            for (int i = 0; i < queue.size(); i++) {
                edges.computeIfAbsent(queue.get(i).leaseId(), k -> new HashSet<>()).addAll(waitsFor(queue.get(i), i));
            }
            ArrayDeque<Long> todo = new ArrayDeque<>(waitsFor(set, queue.size()));
            Set<Long> seen = new HashSet<>();
            while (!todo.isEmpty()) {
                long lease = todo.poll();
                if (lease == set.leaseId()) {
                    return true;
                }
                if (seen.add(lease)) {
                    todo.addAll(edges.getOrDefault(lease, Set.of()));
                }
            }
            return false;
        }

        /** Grants, in join order, each waiter that conflicts with no holder and no waiter still queued before it. */
        private void grantWaiters() {
            List<Set_> passed = new ArrayList<>();
            for (Set_ w : List.copyOf(queue)) {
                boolean blocked = held.stream().anyMatch(h -> conflict(h.scopes(), w.scopes()))
                        || passed.stream().anyMatch(p -> conflict(p.scopes(), w.scopes()));
                if (blocked) {
                    passed.add(w);
                } else {
                    queue.remove(w);
                    held.add(w);
                }
            }
        }

        private static Set_ find(List<Set_> sets, long leaseId, long requestId) {
            for (Set_ s : sets) {
                if (s.leaseId() == leaseId && s.requestId() == requestId) {
                    return s;
                }
            }
            return null;
        }

        @Override
        void leaseEnded(long leaseId) {
            boolean withdrew = queue.removeIf(w -> w.leaseId() == leaseId);
            if (withdrew) {
                grantWaiters();
            }
            for (Set_ h : List.copyOf(held)) {
                if (h.leaseId() == leaseId) {
                    held.remove(h);
                    grantWaiters();
                }
            }
        }

        @Override
        void check(Replica replica, Applied applied, String context) {
            ScopeTable table = replica.state.primitive(ScopeTable.class);
            List<ScopeView.Holder> holders = table.holders();
            List<ScopeView.Waiter> waiters = table.waiters();
            assertThat(holders.stream().map(h -> new Set_(h.leaseId(), h.requestId(), h.scopes()).render()).sorted().toList())
                    .as(context + " holders").isEqualTo(held.stream().map(Set_::render).sorted().toList());
            assertThat(waiters.stream().map(w -> new Set_(w.leaseId(), w.requestId(), w.scopes()).render()).toList())
                    .as(context + " queue").isEqualTo(queue.stream().map(Set_::render).toList());
            for (int i = 0; i < holders.size(); i++) {
                assertThat(alive).as(context + " holder alive").contains(holders.get(i).leaseId());
                for (int j = 0; j < i; j++) {
                    assertThat(conflict(holders.get(i).scopes(), holders.get(j).scopes()))
                            .as(context + " holders " + holders.get(j) + " and " + holders.get(i) + " conflict").isFalse();
                }
            }
            for (int i = 0; i < waiters.size(); i++) {
                ScopeView.Waiter w = waiters.get(i);
                assertThat(alive).as(context + " waiter alive").contains(w.leaseId());
                boolean blocked = holders.stream().anyMatch(h -> conflict(h.scopes(), w.scopes()))
                        || waiters.subList(0, i).stream().anyMatch(e -> conflict(e.scopes(), w.scopes()));
                assertThat(blocked).as(context + " waiter " + w + " has something in its way").isTrue();
            }
            // One token order over every scope: each new grant's token is above all before it.
            checkNewTokens("every scope", holders.stream().map(ScopeView.Holder::fencingToken).toList(), context);
            tokenOf.clear();
            holders.forEach(h -> tokenOf.put(new Set_(h.leaseId(), h.requestId(), h.scopes()).render(), h.fencingToken()));
            if (applied.result() instanceof ScopeResult.Deadlock d) {
                assertThat(d.cycle()).as(context + " the cycle").isNotEmpty();
                assertThat(d.cycle().get(0).waiting()).isEqualTo(d.leaseId());
                assertThat(d.cycle().get(d.cycle().size() - 1).blocker().leaseId()).isEqualTo(d.leaseId());
            }
        }
    }
}
