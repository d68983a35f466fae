package io.tenure.core;

import io.tenure.core.barrier.DoubleBarrierEnter;
import io.tenure.core.barrier.DoubleBarrierLeave;
import io.tenure.core.barrier.DoubleBarrierResult;
import io.tenure.core.barrier.DoubleBarrierTable;
import io.tenure.core.barrier.DoubleBarrierView;
import io.tenure.core.barrier.DoubleBarrierWithdraw;
import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.Command;
import io.tenure.core.kernel.Effect;
import io.tenure.core.kernel.LeaseRevoke;
import io.tenure.core.kernel.Result;
import io.tenure.core.kernel.Result.Code;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Double barriers against a plain reference model, over thousands of seeded command sequences
 * (enters that wait or not, with matching and mismatched parties, enters while a generation is
 * inside, retries, leaves that wait or not, withdrawals, leases revoked in every phase). At every
 * applied index: the same leases entering, inside, leaving and left, in order, as the model;
 * nobody let in before {@code parties} entered, and then exactly the first {@code parties}
 * entrants, all with one revision; nobody let go from leave before every party inside has left,
 * and then exactly the parties waiting, all with one revision; nobody at a barrier on an ended
 * lease; and every 25 commands a snapshot that restores to byte-identical state ({@link ModelRun}).
 */
class DoubleBarrierModelTest {
    private static final String[] NAMES = {"phase/a", "phase/b"};
    private static final long[] LEASES = {1, 2, 3, 4, 5, 6};

    @Test
    void everyAppliedIndexMatchesTheReferenceModel() {
        Set<String> outcomes = new TreeSet<>();
        ModelRun.run(2_000, 150, LEASES, () -> new Model(outcomes));
        // The sequences must reach every outcome, or the comparisons above prove little.
        assertThat(outcomes).contains("Entered", "Entering", "NotEntered", "Left", "Leaving", "NotLeft", "Rejected INVALID_ARGUMENT",
                "Rejected NOT_FOUND", "Rejected FAILED_PRECONDITION", "LeaseEnded");
    }

    /** Double barriers as plain ordered sets, with the rules written out once more, simply. */
    private static final class Model extends ModelRun.Model {
        final TreeMap<String, Gate> gates = new TreeMap<>();
        /** The leases the last command let in, and the waiting leavers it let go, in order. */
        final TreeMap<String, List<Long>> letIn = new TreeMap<>();
        final TreeMap<String, List<Long>> letGo = new TreeMap<>();
        final Set<String> outcomes;

        Model(Set<String> outcomes) {
            this.outcomes = outcomes;
        }

        @Override
        String outcome(Result result) {
            String outcome = super.outcome(result);
            outcomes.add(outcome);
            return outcome;
        }

        static final class Gate {
            final int parties;
            boolean generation;
            final LinkedHashSet<Long> entering = new LinkedHashSet<>();
            final LinkedHashSet<Long> inside = new LinkedHashSet<>();
            final LinkedHashSet<Long> leaving = new LinkedHashSet<>();
            final LinkedHashSet<Long> left = new LinkedHashSet<>();

            Gate(int parties) {
                this.parties = parties;
            }
        }

        @Override
        Command next(Random random, Replica replica, int step) {
            letIn.clear();
            letGo.clear();
            String name = NAMES[random.nextInt(NAMES.length)];
            long lease = LEASES[random.nextInt(LEASES.length)];
            int dice = random.nextInt(100);
            Command churn = leaseChurn(dice, 4, lease);
            if (churn != null) {
                return churn;
            } else if (dice < 55) {
                Gate gate = gates.get(name);
                int parties = gate != null && random.nextInt(10) != 0 ? gate.parties : 1 + random.nextInt(4);
                if (random.nextInt(80) == 0) {
                    parties = random.nextBoolean() ? 0 : DoubleBarrierTable.MAX_PARTIES + 1;
                }
                return new DoubleBarrierEnter(name, lease, parties, random.nextInt(5) != 0, 0);
            } else if (dice < 90) {
                return new DoubleBarrierLeave(name, lease, random.nextInt(4) != 0);
            }
            return new DoubleBarrierWithdraw(name, lease, 0);
        }

        @Override
        void leaseEnded(long leaseId) {
            for (String name : new ArrayList<>(gates.keySet())) {
                Gate gate = gates.get(name);
                gate.entering.remove(leaseId);
                gate.leaving.remove(leaseId);
                gate.left.remove(leaseId);
                if (gate.inside.remove(leaseId) && gate.inside.isEmpty()) {
                    letGo(name, gate);
                } else {
                    removeIfEmpty(name, gate);
                }
            }
        }

        private void removeIfEmpty(String name, Gate gate) {
            if (!gate.generation && gate.entering.isEmpty()) {
                gates.remove(name);
            }
        }

        private void letIn(String name, Gate gate) {
            List<Long> first = new ArrayList<>(gate.entering).subList(0, gate.parties);
            letIn.put(name, List.copyOf(first));
            first.forEach(gate.entering::remove);
            gate.inside.addAll(first);
            gate.generation = true;
        }

        private void letGo(String name, Gate gate) {
            letGo.put(name, List.copyOf(gate.leaving));
            gate.leaving.clear();
            gate.left.clear();
            gate.generation = false;
            if (gate.entering.isEmpty()) {
                gates.remove(name);
            } else if (gate.entering.size() >= gate.parties) {
                letIn(name, gate);
            }
        }

        @Override
        String applyOwn(Command command) {
            if (command instanceof DoubleBarrierEnter e) {
                if (e.parties() < 1 || e.parties() > DoubleBarrierTable.MAX_PARTIES) {
                    return "Rejected " + Code.INVALID_ARGUMENT;
                }
                if (!alive.contains(e.leaseId())) {
                    return "Rejected " + Code.NOT_FOUND;
                }
                Gate gate = gates.get(e.key());
                if (gate != null && gate.parties != e.parties()) {
                    return "Rejected " + Code.FAILED_PRECONDITION;
                }
                if (gate != null && gate.inside.contains(e.leaseId())) {
                    return "Entered";
                }
                if (gate != null && gate.entering.contains(e.leaseId())) {
                    return "Entering";
                }
                if (gate != null && gate.leaving.contains(e.leaseId())) {
                    return "Rejected " + Code.FAILED_PRECONDITION;
                }
                boolean generation = gate != null && gate.generation;
                int entrants = (gate == null ? 0 : gate.entering.size()) + 1;
                if (!e.queue() && (generation || entrants < e.parties())) {
                    return "NotEntered";
                }
                gate = gates.computeIfAbsent(e.key(), k -> new Gate(e.parties()));
                gate.entering.add(e.leaseId());
                if (generation || entrants < e.parties()) {
                    return "Entering";
                }
                letIn(e.key(), gate);
                return "Entered";
            }
            if (command instanceof DoubleBarrierLeave l) {
                if (!alive.contains(l.leaseId())) {
                    return "Rejected " + Code.NOT_FOUND;
                }
                Gate gate = gates.get(l.key());
                if (gate == null) {
                    return "Left";
                }
                gate.entering.remove(l.leaseId());
                if (gate.inside.remove(l.leaseId())) {
                    gate.left.add(l.leaseId());
                    if (gate.inside.isEmpty()) {
                        letGo(l.key(), gate);
                        return "Left";
                    }
                }
                if (!gate.leaving.contains(l.leaseId()) && !gate.left.contains(l.leaseId())) {
                    removeIfEmpty(l.key(), gate);
                    return "Left";
                }
                if (l.queue()) {
                    if (gate.left.remove(l.leaseId())) {
                        gate.leaving.add(l.leaseId());
                    }
                    return "Leaving";
                }
                if (gate.leaving.remove(l.leaseId())) {
                    gate.left.add(l.leaseId());
                }
                return "NotLeft";
            }
            if (command instanceof DoubleBarrierWithdraw w) {
                Gate gate = gates.get(w.key());
                if (gate == null) {
                    return "NotEntered";
                }
                if (gate.inside.contains(w.leaseId()) || gate.leaving.contains(w.leaseId()) || gate.left.contains(w.leaseId())) {
                    return "Entered";
                }
                if (gate.entering.remove(w.leaseId())) {
                    removeIfEmpty(w.key(), gate);
                }
                return "NotEntered";
            }
            throw new IllegalArgumentException("unexpected " + command);
        }

        @Override
        void check(Replica replica, Applied applied, String context) {
            long caller = applied.result() instanceof DoubleBarrierResult.Entered || applied.result() instanceof DoubleBarrierResult.Left
                    ? callerOf(applied) : 0;
            for (String name : NAMES) {
                List<Long> in = letIn.getOrDefault(name, List.of());
                List<DoubleBarrierResult.Entered> entered = woken(applied, DoubleBarrierResult.Entered.class).stream()
                        .filter(e -> e.key().equals(name)).toList();
                List<Long> enteredLeases = new ArrayList<>(entered.stream().map(DoubleBarrierResult.Entered::leaseId).toList());
                List<Long> revisions = new ArrayList<>(entered.stream().map(DoubleBarrierResult.Entered::revision).toList());
                if (in.contains(caller) && applied.result() instanceof DoubleBarrierResult.Entered e && e.key().equals(name)) {
                    enteredLeases.add(in.indexOf(caller), caller);
                    revisions.add(e.revision());
                }
                assertThat(enteredLeases).as(context + " let in together at " + name).containsExactlyElementsOf(in);
                if (!in.isEmpty()) {
                    assertThat(in).as(context + " let in when all parties entered").hasSize(gates.get(name).parties);
                    assertThat(revisions).as(context + " one revision").allMatch(r -> r.equals(revisions.get(0)));
                }
                List<DoubleBarrierResult.Left> left = woken(applied, DoubleBarrierResult.Left.class).stream()
                        .filter(l -> l.key().equals(name)).toList();
                assertThat(left).extracting(DoubleBarrierResult.Left::leaseId).as(context + " let go together at " + name)
                        .containsExactlyElementsOf(letGo.getOrDefault(name, List.of()));
                if (!left.isEmpty()) {
                    long revision = left.get(0).revision();
                    assertThat(left).extracting(DoubleBarrierResult.Left::revision).as(context + " one revision").allMatch(r -> r == revision);
                }
            }
            for (Effect.Wake wake : Replica.effects(applied, Effect.Wake.class)) {
                if (wake.result() instanceof Result.Rejected) {
                    assertThat(applied.result()).as(context + " only a lease's end ends waits").isNotInstanceOf(Result.Rejected.class);
                    assertThat(alive).as(context + " an ended wait's lease ended").doesNotContain(wake.key().leaseId());
                }
            }
            for (String name : NAMES) {
                DoubleBarrierView view = replica.state.primitive(DoubleBarrierTable.class).barrier(name);
                Gate gate = gates.get(name);
                if (gate == null) {
                    assertThat(view).as(context + " " + name + " exists").isNull();
                    continue;
                }
                assertThat(view).as(context + " " + name).isNotNull();
                assertThat(view.parties()).isEqualTo(gate.parties);
                assertThat(view.revision() != 0).as(context + " a generation inside " + name).isEqualTo(gate.generation);
                assertThat(leases(view.entering())).as(context + " entering " + name).containsExactlyElementsOf(gate.entering);
                assertThat(leases(view.inside())).as(context + " inside " + name).containsExactlyElementsOf(gate.inside);
                assertThat(leases(view.leaving())).as(context + " leaving " + name).containsExactlyElementsOf(gate.leaving);
                assertThat(leases(view.left())).as(context + " left " + name).containsExactlyElementsOf(gate.left);
                assertThat(view.inside().size() + view.leaving().size() + view.left().size()).as(context + " at most the parties")
                        .isLessThanOrEqualTo(view.parties());
                assertThat(gate.generation ? view.inside().size() : view.entering().size()).as(context + " " + name + " not empty")
                        .isPositive();
                if (!gate.generation) {
                    assertThat(view.entering().size()).as(context + " fewer entering than the parties").isLessThan(view.parties());
                }
                for (List<DoubleBarrierView.Party> parties : List.of(view.entering(), view.inside(), view.leaving(), view.left())) {
                    parties.forEach(p -> assertThat(alive).as(context + " party alive").contains(p.leaseId()));
                }
            }
        }

        private static long callerOf(Applied applied) {
            return applied.result() instanceof DoubleBarrierResult.Entered e ? e.leaseId() : ((DoubleBarrierResult.Left) applied.result()).leaseId();
        }

        private static <R> List<R> woken(Applied applied, Class<R> kind) {
            return Replica.effects(applied, Effect.Wake.class).stream().map(Effect.Wake::result).filter(kind::isInstance).map(kind::cast)
                    .toList();
        }

        private static List<Long> leases(List<DoubleBarrierView.Party> parties) {
            return parties.stream().map(DoubleBarrierView.Party::leaseId).toList();
        }
    }
}
