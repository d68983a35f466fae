package io.tenure.core;

import io.tenure.core.barrier.BarrierAwait;
import io.tenure.core.barrier.BarrierCancel;
import io.tenure.core.barrier.BarrierResult;
import io.tenure.core.barrier.BarrierTable;
import io.tenure.core.barrier.BarrierView;
import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.Command;
import io.tenure.core.kernel.Effect;
import io.tenure.core.kernel.LeaseGrant;
import io.tenure.core.kernel.LeaseRevoke;
import io.tenure.core.kernel.Result;
import io.tenure.core.kernel.Result.Code;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Barriers against a plain reference model, over thousands of seeded command sequences (awaits
 * that wait or not, with matching and mismatched parties, withdrawals, leases revoked while
 * waiting). At every applied index: the same parties waiting, in arrival order, as the model;
 * never as many waiting as the barrier's parties; nobody waiting on an ended lease; a release
 * wakes exactly the parties that waited, all with one revision; and every 25 commands a snapshot
 * that restores to byte-identical state.
 */
class BarrierModelTest {
    private static final String[] NAMES = {"gate/a", "gate/b"};
    private static final long[] LEASES = {1, 2, 3, 4, 5, 6};
    private static final int SEQUENCES = 2_000;
    private static final int STEPS = 120;

    @Test
    void everyAppliedIndexMatchesTheReferenceModel() {
        for (long seed = 1; seed <= SEQUENCES; seed++) {
            run(seed);
        }
    }

    private static void run(long seed) {
        Random random = new Random(seed);
        Replica replica = new Replica();
        Model model = new Model();
        for (long lease : LEASES) {
            replica.grantLease(lease);
            model.alive.add(lease);
        }
        for (int step = 0; step < STEPS; step++) {
            Command command = next(random, model);
            List<Long> waitingBefore = command instanceof BarrierAwait a && model.gates.containsKey(a.key())
                    ? List.copyOf(model.gates.get(a.key()).waiting) : List.of();
            Applied applied = replica.apply(command);
            String expected = model.apply(command);
            String context = "seed " + seed + " step " + step + " " + Rendering.of(command);
            assertThat(outcome(applied.result())).as(context).isEqualTo(expected);
            if (applied.result() instanceof BarrierResult.Released released) {
                List<BarrierResult.Released> woken = Replica.effects(applied, Effect.Wake.class).stream()
                        .map(w -> (BarrierResult.Released) w.result()).toList();
                assertThat(woken).extracting(BarrierResult.Released::leaseId).as(context + " the parties that waited")
                        .containsExactlyElementsOf(waitingBefore);
                assertThat(woken).extracting(BarrierResult.Released::revision).as(context + " one revision")
                        .allMatch(r -> r == released.revision());
            }
            for (String name : NAMES) {
                BarrierView view = replica.state.primitive(BarrierTable.class).barrier(name);
                Model.Gate gate = model.gates.get(name);
                if (gate == null) {
                    assertThat(view).as(context + " " + name + " exists").isNull();
                    continue;
                }
                assertThat(view).as(context + " " + name).isNotNull();
                assertThat(view.parties()).isEqualTo(gate.parties);
                assertThat(view.waiting()).extracting(BarrierView.Party::leaseId).as(context + " waiting at " + name)
                        .containsExactlyElementsOf(gate.waiting);
                assertThat(view.waiting().size()).as(context + " fewer than the parties").isLessThan(view.parties());
                view.waiting().forEach(p -> assertThat(model.alive).as(context + " party alive").contains(p.leaseId()));
            }
            if (step % 25 == 24) {
                byte[] snapshot = replica.snapshot();
                Replica restored = Replica.restore(snapshot);
                assertThat(restored.snapshot()).as(context + " snapshot round trip").isEqualTo(snapshot);
                assertThat(withoutEvents(restored.view())).isEqualTo(withoutEvents(replica.view()));
            }
        }
    }

    private static String withoutEvents(String view) {
        return view.substring(0, view.indexOf("\nhorizon="));
    }

    private static String outcome(Result result) {
        return result instanceof Result.Rejected r ? "Rejected " + r.code() : result.getClass().getSimpleName();
    }

    private static Command next(Random random, Model model) {
        String name = NAMES[random.nextInt(NAMES.length)];
        long lease = LEASES[random.nextInt(LEASES.length)];
        int dice = random.nextInt(100);
        if (dice < 4) {
            return new LeaseRevoke(lease);
        } else if (dice < 8) {
            return new LeaseGrant(lease, Replica.TTL_MILLIS, Replica.clientOf(lease));
        } else if (dice < 80) {
            Model.Gate gate = model.gates.get(name);
            int parties = gate != null && random.nextInt(10) != 0 ? gate.parties : 1 + random.nextInt(4);
            if (random.nextInt(60) == 0) {
                parties = 0;
            }
            return new BarrierAwait(name, lease, parties, random.nextInt(5) != 0, 0);
        }
        return new BarrierCancel(name, lease, 0);
    }

    /** Barriers as plain sets, with the rules written out once more, simply. */
    private static final class Model {
        final Set<Long> alive = new HashSet<>();
        final TreeMap<String, Gate> gates = new TreeMap<>();

        static final class Gate {
            final int parties;
            final LinkedHashSet<Long> waiting = new LinkedHashSet<>();

            Gate(int parties) {
                this.parties = parties;
            }
        }

        String apply(Command command) {
            if (command instanceof LeaseGrant g) {
                alive.add(g.leaseId());
                return "LeaseGranted";
            }
            if (command instanceof LeaseRevoke r) {
                if (!alive.remove(r.leaseId())) {
                    return "Rejected " + Code.NOT_FOUND;
                }
                for (String name : new ArrayList<>(gates.keySet())) {
                    Gate gate = gates.get(name);
                    if (gate.waiting.remove(r.leaseId()) && gate.waiting.isEmpty()) {
                        gates.remove(name);
                    }
                }
                return "LeaseEnded";
            }
            if (command instanceof BarrierAwait a) {
                if (a.parties() < 1) {
                    return "Rejected " + Code.INVALID_ARGUMENT;
                }
                if (!alive.contains(a.leaseId())) {
                    return "Rejected " + Code.NOT_FOUND;
                }
                Gate gate = gates.get(a.key());
                if (gate != null && gate.parties != a.parties()) {
                    return "Rejected " + Code.FAILED_PRECONDITION;
                }
                if (gate != null && gate.waiting.contains(a.leaseId())) {
                    return "Waiting";
                }
                int arrived = (gate == null ? 0 : gate.waiting.size()) + 1;
                if (arrived < a.parties() && !a.queue()) {
                    return "NotYet";
                }
                if (arrived == a.parties()) {
                    gates.remove(a.key());
                    return "Released";
                }
                gates.computeIfAbsent(a.key(), k -> new Gate(a.parties())).waiting.add(a.leaseId());
                return "Waiting";
            }
            if (command instanceof BarrierCancel c) {
                Gate gate = gates.get(c.key());
                if (gate != null && gate.waiting.remove(c.leaseId()) && gate.waiting.isEmpty()) {
                    gates.remove(c.key());
                }
                return "Left";
            }
            throw new IllegalArgumentException("unexpected " + command);
        }
    }
}
