package io.tenure.core;

import io.tenure.core.barrier.BarrierTable;
import io.tenure.core.barrier.DoubleBarrierTable;
import io.tenure.core.election.ElectionTable;
import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.Command;
import io.tenure.core.kernel.LeaseGrant;
import io.tenure.core.kernel.LeaseRevoke;
import io.tenure.core.kernel.LeaseView;
import io.tenure.core.kernel.Primitive;
import io.tenure.core.kernel.Result;
import io.tenure.core.kernel.Result.Code;
import io.tenure.core.latch.LatchTable;
import io.tenure.core.list.ListTable;
import io.tenure.core.lock.LockTable;
import io.tenure.core.scope.ScopeTable;
import io.tenure.core.semaphore.SemaphoreTable;

import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.SortedSet;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * The randomized model tests' runner: seeded command sequences applied to a {@link Replica} and to
 * a plain reference {@link Model} of one primitive, the outcomes compared at every applied index,
 * the model's own checks run after each command, every 10 the counts the acquire path's limits read
 * (ties), and every 25 commands a snapshot that must
 * restore to byte-identical state.
 */
final class ModelRun {
    private ModelRun() {
    }

    /**
     * A primitive's rules written out once more, simply, with its command generator and its
     * checks of the replica. One instance per sequence. Lease grants and revocations are kept
     * here; the model is told of each lease that ends.
     */
    abstract static class Model {
        final Set<Long> alive = new HashSet<>();
        /** Per name, the tokens of the grants seen so far and the highest of them. */
        private final Map<String, Set<Long>> tokens = new HashMap<>();
        private final Map<String, Long> highestToken = new HashMap<>();

        /** A lease's revocation for a roll under {@code percent}, its grant (again) under twice that, else null. */
        static Command leaseChurn(int dice, int percent, long lease) {
            if (dice < percent) {
                return new LeaseRevoke(lease);
            }
            return dice < 2 * percent ? new LeaseGrant(lease, Replica.TTL_MILLIS, Replica.clientOf(lease)) : null;
        }

        /**
         * Checks that every token of {@code name}'s holders not seen before is above every token
         * the name had (I2), and remembers them.
         */
        final void checkNewTokens(String name, Collection<Long> holding, String context) {
            long before = highestToken.getOrDefault(name, 0L);
            Set<Long> seen = tokens.computeIfAbsent(name, k -> new HashSet<>());
            for (long token : holding) {
                if (seen.add(token)) {
                    assertThat(token).as(context + " a new grant's token").isGreaterThan(before);
                }
            }
            highestToken.put(name, Math.max(before, holding.stream().mapToLong(Long::longValue).max().orElse(0)));
        }

        /** The next command of the sequence (the replica's state may guide it, e.g. to a holder's token). */
        abstract Command next(Random random, Replica replica, int step);

        /** The outcome of one of the primitive's own commands, applied to the model. */
        abstract String applyOwn(Command command);

        /** Lease {@code leaseId} ended: what it held goes to the next in line, and its waits end. */
        abstract void leaseEnded(long leaseId);

        /** Checks the replica against the model after {@code applied}; {@code context} names the seed, step and command. */
        abstract void check(Replica replica, Applied applied, String context);

        /** A result as the model predicts it: its kind, and the code of a refusal. */
        String outcome(Result result) {
            return result instanceof Result.Rejected r ? "Rejected " + r.code() : result.getClass().getSimpleName();
        }

        final String apply(Command command) {
            if (command instanceof LeaseGrant g) {
                alive.add(g.leaseId());
                return "LeaseGranted";
            }
            if (command instanceof LeaseRevoke r) {
                if (!alive.remove(r.leaseId())) {
                    return "Rejected " + Code.NOT_FOUND;
                }
                leaseEnded(r.leaseId());
                return "LeaseEnded";
            }
            return applyOwn(command);
        }
    }

    /** Runs seeds 1 to {@code sequences}, each {@code steps} commands long, with {@code leases} granted first. */
    static void run(int sequences, int steps, long[] leases, Supplier<Model> models) {
        for (long seed = 1; seed <= sequences; seed++) {
            Random random = new Random(seed);
            Replica replica = new Replica();
            Model model = models.get();
            for (long lease : leases) {
                replica.grantLease(lease);
                model.alive.add(lease);
            }
            for (int step = 0; step < steps; step++) {
                Command command = model.next(random, replica, step);
                Applied applied = replica.apply(command);
                String expected = model.apply(command);
                String context = "seed " + seed + " step " + step + " " + Rendering.of(command);
                assertThat(model.outcome(applied.result())).as(context).isEqualTo(expected);
                model.check(replica, applied, context);
                if (step % 10 == 9) {
                    checkTies(replica, leases, model.alive, context);
                }
                if (step % 25 == 24) {
                    byte[] snapshot = replica.snapshot();
                    Replica restored = Replica.restore(snapshot);
                    assertThat(restored.snapshot()).as(context + " snapshot round trip").isEqualTo(snapshot);
                    // The watch event log is not part of a snapshot; everything else is.
                    assertThat(withoutEvents(restored.view())).isEqualTo(withoutEvents(replica.view()));
                    // The per-client counts are derived, not written: reading the snapshot makes them again.
                    checkTies(restored, leases, model.alive, context + " (restored from its snapshot)");
                }
            }
        }
    }

    /** Primitives whose leases hold or wait for names. */
    private static final List<Class<? extends Primitive>> TYING = List.of(LockTable.class, SemaphoreTable.class, ElectionTable.class,
            LatchTable.class, BarrierTable.class, DoubleBarrierTable.class, ListTable.class, ScopeTable.class);

    /**
     * The counts the acquire path's limits read ({@link TenureState#tiesOf}, {@link TenureState#holdsAndWaits},
     * {@link Primitive#tiesOf}, {@link Primitive#tiedTo}) agree with the sets a lease reports, for every lease of the run
     * and one that never existed; every tenth step, to keep the runs' time.
     */
    private static void checkTies(Replica replica, long[] granted, Set<Long> alive, String context) {
        Set<Long> ids = new HashSet<>(alive);
        for (long id : granted) {
            ids.add(id);
        }
        ids.add(987_654_321L);
        // Plain comparisons, with the message built only on a failure.
        Map<String, Integer> byClient = new HashMap<>();
        for (long id : ids) {
            LeaseView lease = replica.state.lease(id);
            if (lease != null) {
                byClient.merge(lease.clientId(), lease.held().size() + lease.waiting().size(), Integer::sum);
            }
        }
        for (Map.Entry<String, Integer> client : byClient.entrySet()) {
            if (replica.state.holdsAndWaits(client.getKey()) != client.getValue()) {
                fail(context + ": holdsAndWaits(" + client.getKey() + ") is " + replica.state.holdsAndWaits(client.getKey())
                        + ", its leases report " + client.getValue());
            }
        }
        for (long id : ids) {
            LeaseView lease = replica.state.lease(id);
            int expected = lease == null ? 0 : lease.held().size() + lease.waiting().size();
            if (replica.state.tiesOf(id) != expected) {
                fail(context + ": tiesOf(" + id + ") is " + replica.state.tiesOf(id) + ", the lease reports " + expected);
            }
            if (!java.util.Objects.equals(replica.state.clientOf(id), lease == null ? null : lease.clientId())) {
                fail(context + ": clientOf(" + id + ") is " + replica.state.clientOf(id) + ", the lease reports " + lease);
            }
            for (Class<? extends Primitive> type : TYING) {
                Primitive p = replica.state.primitive(type);
                SortedSet<String> held = p.heldBy(id);
                SortedSet<String> waited = p.waitedBy(id);
                if (p.tiesOf(id) != held.size() + waited.size()) {
                    fail(context + ": " + type.getSimpleName() + ".tiesOf(" + id + ") is " + p.tiesOf(id) + ", held " + held + " waited " + waited);
                }
                for (SortedSet<String> names : List.of(held, waited)) {
                    for (String name : names) {
                        if (!p.tiedTo(id, name)) {
                            fail(context + ": " + type.getSimpleName() + ".tiedTo(" + id + ", " + name + ") is false; held " + held + " waited " + waited);
                        }
                    }
                }
                if (p.tiedTo(id, "never-a-name")) {
                    fail(context + ": " + type.getSimpleName() + ".tiedTo(" + id + ", a name never used) is true");
                }
            }
        }
    }

    private static String withoutEvents(String view) {
        return view.substring(0, view.indexOf("\nhorizon="));
    }
}
