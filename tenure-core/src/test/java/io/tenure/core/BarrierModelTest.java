package io.tenure.core;

import io.tenure.core.barrier.BarrierAwait;
import io.tenure.core.barrier.BarrierCancel;
import io.tenure.core.barrier.BarrierResult;
import io.tenure.core.barrier.BarrierTable;
import io.tenure.core.barrier.BarrierView;
import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.Command;
import io.tenure.core.kernel.Effect;
import io.tenure.core.kernel.Result.Code;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Barriers against a plain reference model, over thousands of seeded command sequences (awaits
 * that wait or not, with matching and mismatched parties, withdrawals, leases revoked while
 * waiting). At every applied index: the same parties waiting, in arrival order, as the model;
 * never as many waiting as the barrier's parties; nobody waiting on an ended lease; a release
 * wakes exactly the parties that waited, all with one revision; and every 25 commands a snapshot
 * that restores to byte-identical state ({@link ModelRun}).
 */
class BarrierModelTest {
    private static final String[] NAMES = {"gate/a", "gate/b"};
    private static final long[] LEASES = {1, 2, 3, 4, 5, 6};

    @Test
    void everyAppliedIndexMatchesTheReferenceModel() {
        ModelRun.run(2_000, 120, LEASES, Model::new);
    }

    /** Barriers as plain sets, with the rules written out once more, simply. */
    private static final class Model extends ModelRun.Model {
        final TreeMap<String, Gate> gates = new TreeMap<>();
        /** The parties the last release let go, in arrival order. */
        List<Long> lastReleased = List.of();

        static final class Gate {
            final int parties;
            final LinkedHashSet<Long> waiting = new LinkedHashSet<>();

            Gate(int parties) {
                this.parties = parties;
            }
        }

        @Override
        Command next(Random random, Replica replica, int step) {
            String name = NAMES[random.nextInt(NAMES.length)];
            long lease = LEASES[random.nextInt(LEASES.length)];
            int dice = random.nextInt(100);
            Command churn = leaseChurn(dice, 4, lease);
            if (churn != null) {
                return churn;
            } else if (dice < 80) {
                Gate gate = gates.get(name);
                int parties = gate != null && random.nextInt(10) != 0 ? gate.parties : 1 + random.nextInt(4);
                if (random.nextInt(60) == 0) {
                    parties = 0;
                }
                return new BarrierAwait(name, lease, parties, random.nextInt(5) != 0, 0);
            }
            return new BarrierCancel(name, lease, 0);
        }

        @Override
        void leaseEnded(long leaseId) {
            for (String name : new ArrayList<>(gates.keySet())) {
                Gate gate = gates.get(name);
                if (gate.waiting.remove(leaseId) && gate.waiting.isEmpty()) {
                    gates.remove(name);
                }
            }
        }

        @Override
        String applyOwn(Command command) {
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
                    lastReleased = gate == null ? List.of() : List.copyOf(gate.waiting);
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

        @Override
        void check(Replica replica, Applied applied, String context) {
            if (applied.result() instanceof BarrierResult.Released released) {
                List<BarrierResult.Released> woken = Replica.effects(applied, Effect.Wake.class).stream()
                        .map(w -> (BarrierResult.Released) w.result()).toList();
                assertThat(woken).extracting(BarrierResult.Released::leaseId).as(context + " the parties that waited")
                        .containsExactlyElementsOf(lastReleased);
                assertThat(woken).extracting(BarrierResult.Released::revision).as(context + " one revision")
                        .allMatch(r -> r == released.revision());
            }
            for (String name : NAMES) {
                BarrierView view = replica.state.primitive(BarrierTable.class).barrier(name);
                Gate gate = gates.get(name);
                if (gate == null) {
                    assertThat(view).as(context + " " + name + " exists").isNull();
                    continue;
                }
                assertThat(view).as(context + " " + name).isNotNull();
                assertThat(view.parties()).isEqualTo(gate.parties);
                assertThat(view.waiting()).extracting(BarrierView.Party::leaseId).as(context + " waiting at " + name)
                        .containsExactlyElementsOf(gate.waiting);
                assertThat(view.waiting().size()).as(context + " fewer than the parties").isLessThan(view.parties());
                view.waiting().forEach(p -> assertThat(alive).as(context + " party alive").contains(p.leaseId()));
            }
        }
    }
}
