package io.tenure.core;

import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.Command;
import io.tenure.core.kernel.Effect;
import io.tenure.core.kernel.Result;
import io.tenure.core.kernel.Result.Code;
import io.tenure.core.latch.LatchAwait;
import io.tenure.core.latch.LatchCancel;
import io.tenure.core.latch.LatchCountDown;
import io.tenure.core.latch.LatchResult;
import io.tenure.core.latch.LatchSetCount;
import io.tenure.core.latch.LatchTable;
import io.tenure.core.latch.LatchView;
import io.tenure.core.watch.WatchEvent;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
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
 * Count-down latches against a plain reference model, over thousands of seeded command sequences
 * (set-counts in and out of range, count-downs, retries of both with the same request id, awaits
 * that wait or not and their retries, withdrawals, leases revoked while waiting). At every
 * applied index: the same count and waiters, in arrival order, as the model; a count never below
 * one while the latch exists; a retried set-count or count-down answered as its first copy and
 * applied once; the waiters released exactly when the count reaches zero, all together with one
 * revision, and no one else; nobody waiting on an ended lease; a PUT with the count at every set
 * and count-down above zero and a DELETE at zero; and every 25 commands a snapshot that restores
 * to byte-identical state ({@link ModelRun}).
 */
class LatchModelTest {
    private static final String[] NAMES = {"done/a", "done/b"};
    private static final long[] LEASES = {1, 2, 3, 4, 5, 6};

    @Test
    void everyAppliedIndexMatchesTheReferenceModel() {
        ModelRun.run(2_000, 120, LEASES, Model::new);
    }

    /** Latches as plain counts and ordered maps, with the rules written out once more, simply. */
    private static final class Model extends ModelRun.Model {
        final TreeMap<String, Gate> latches = new TreeMap<>();
        /** Answers of set-counts and count-downs by name, kind and request id, as first given. */
        final Map<String, String> answered = new HashMap<>();
        final List<Long> requestIds = new ArrayList<>();
        /** (name, lease, await request) released, and withdrawn. */
        final Set<List<Object>> released = new HashSet<>();
        final Set<List<Object>> withdrawn = new HashSet<>();
        final List<long[]> awaits = new ArrayList<>();
        /** The waiters the last count-down to zero released, in arrival order; null when the last command released none. */
        List<Long> lastReleased;
        String lastName;
        long nextRequest = 1;

        static final class Gate {
            int count;
            /** Waiting lease → its await's request id, in arrival order. */
            final LinkedHashMap<Long, Long> waiting = new LinkedHashMap<>();

            Gate(int count) {
                this.count = count;
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
            }
            if (random.nextInt(80) == 0) {
                name = "";
            }
            if (dice < 25) {
                int count = 1 + random.nextInt(4);
                if (random.nextInt(40) == 0) {
                    count = random.nextBoolean() ? 0 : LatchTable.MAX_COUNT + 1;
                }
                return new LatchSetCount(name, count, requestId(random));
            } else if (dice < 60) {
                return new LatchCountDown(name, requestId(random));
            } else if (dice < 90) {
                if (!awaits.isEmpty() && random.nextInt(6) == 0) {
                    long[] before = awaits.get(random.nextInt(awaits.size()));
                    return new LatchAwait(NAMES[(int) before[0]], before[1], true, before[2]);
                }
                long request = random.nextInt(5) == 0 ? 0 : nextRequest++;
                awaits.add(new long[] {name.equals(NAMES[0]) ? 0 : 1, lease, request});
                return new LatchAwait(name, lease, random.nextInt(5) != 0, request);
            }
            long request = !awaits.isEmpty() && random.nextBoolean() ? awaits.get(awaits.size() - 1)[2] : 0;
            return new LatchCancel(name, lease, request);
        }

        /** A request id: none, a new one, or (a retry) one used before. */
        private long requestId(Random random) {
            int dice = random.nextInt(10);
            if (dice == 0) {
                return 0;
            }
            if (dice < 4 && !requestIds.isEmpty()) {
                return requestIds.get(random.nextInt(requestIds.size()));
            }
            long id = nextRequest++;
            requestIds.add(id);
            return id;
        }

        @Override
        void leaseEnded(long leaseId) {
            for (Gate gate : latches.values()) {
                gate.waiting.remove(leaseId);
            }
        }

        @Override
        String outcome(Result result) {
            if (result instanceof LatchResult.CountSet s) {
                return "CountSet " + s.set() + " " + s.count();
            } else if (result instanceof LatchResult.CountedDown d) {
                return "CountedDown " + d.count() + " " + d.applied();
            } else if (result instanceof LatchResult.Waiting w) {
                return "Waiting " + w.count();
            } else if (result instanceof LatchResult.NotYet n) {
                return "NotYet " + n.count();
            } else if (result instanceof LatchResult.Left l) {
                return "Left " + l.count();
            }
            return super.outcome(result);
        }

        @Override
        String applyOwn(Command command) {
            if (command instanceof LatchSetCount s) {
                lastName = s.key();
                if (s.key().isEmpty() || s.count() < 1 || s.count() > LatchTable.MAX_COUNT) {
                    return "Rejected " + Code.INVALID_ARGUMENT;
                }
                String before = s.requestId() == 0 ? null : answered.get(s.key() + " set " + s.requestId());
                if (before != null) {
                    return before;
                }
                Gate gate = latches.get(s.key());
                String answer;
                if (gate != null) {
                    answer = "CountSet false " + gate.count;
                } else {
                    latches.put(s.key(), new Gate(s.count()));
                    answer = "CountSet true " + s.count();
                }
                if (s.requestId() != 0) {
                    answered.put(s.key() + " set " + s.requestId(), answer);
                }
                return answer;
            }
            if (command instanceof LatchCountDown d) {
                lastName = d.key();
                if (d.key().isEmpty()) {
                    return "Rejected " + Code.INVALID_ARGUMENT;
                }
                String before = d.requestId() == 0 ? null : answered.get(d.key() + " down " + d.requestId());
                if (before != null) {
                    return before;
                }
                Gate gate = latches.get(d.key());
                String answer;
                if (gate == null) {
                    answer = "CountedDown 0 false";
                } else {
                    gate.count--;
                    if (gate.count == 0) {
                        lastReleased = List.copyOf(gate.waiting.keySet());
                        gate.waiting.forEach((lease, request) -> {
                            if (request != 0) {
                                released.add(List.of(d.key(), lease, request));
                            }
                        });
                        latches.remove(d.key());
                    }
                    answer = "CountedDown " + gate.count + " true";
                }
                if (d.requestId() != 0) {
                    answered.put(d.key() + " down " + d.requestId(), answer);
                }
                return answer;
            }
            if (command instanceof LatchAwait a) {
                if (a.key().isEmpty()) {
                    return "Rejected " + Code.INVALID_ARGUMENT;
                }
                if (!alive.contains(a.leaseId())) {
                    return "Rejected " + Code.NOT_FOUND;
                }
                List<Object> request = List.of(a.key(), a.leaseId(), a.requestId());
                if (a.requestId() != 0 && released.contains(request)) {
                    return "Open";
                }
                if (a.requestId() != 0 && withdrawn.contains(request)) {
                    return "Rejected " + Code.FAILED_PRECONDITION;
                }
                Gate gate = latches.get(a.key());
                if (gate == null) {
                    return "Open";
                }
                if (gate.waiting.containsKey(a.leaseId())) {
                    return "Waiting " + gate.count;
                }
                if (!a.queue()) {
                    return "NotYet " + gate.count;
                }
                gate.waiting.put(a.leaseId(), a.requestId());
                return "Waiting " + gate.count;
            }
            if (command instanceof LatchCancel c) {
                if (c.key().isEmpty()) {
                    return "Rejected " + Code.INVALID_ARGUMENT;
                }
                if (c.requestId() != 0 && !released.contains(List.of(c.key(), c.leaseId(), c.requestId()))) {
                    withdrawn.add(List.of(c.key(), c.leaseId(), c.requestId()));
                }
                Gate gate = latches.get(c.key());
                if (gate == null) {
                    return "Left 0";
                }
                Long request = gate.waiting.remove(c.leaseId());
                if (request != null && request != 0) {
                    withdrawn.add(List.of(c.key(), c.leaseId(), request));
                }
                return "Left " + gate.count;
            }
            throw new IllegalArgumentException("unexpected " + command);
        }

        @Override
        void check(Replica replica, Applied applied, String context) {
            List<Effect.Wake> wakes = Replica.effects(applied, Effect.Wake.class);
            List<WatchEvent> events = Replica.watched(applied);
            if (lastReleased != null) {
                List<LatchResult.Open> woken = wakes.stream().map(w -> (LatchResult.Open) w.result()).toList();
                assertThat(woken).extracting(LatchResult.Open::leaseId).as(context + " the waiters released")
                        .containsExactlyElementsOf(lastReleased);
                assertThat(events).as(context + " a DELETE at zero").singleElement()
                        .satisfies(e -> assertThat(e.type()).isEqualTo(WatchEvent.Type.DELETE));
                woken.forEach(o -> assertThat(o.revision()).as(context + " one revision").isEqualTo(events.get(0).revision()));
            } else if (!events.isEmpty()) {
                // Only a set-count that set and a count-down that left the count above zero change a latch otherwise.
                assertThat(applied.result()).as(context).isInstanceOfAny(LatchResult.CountSet.class, LatchResult.CountedDown.class);
                int count = replica.state.primitive(LatchTable.class).count(lastName);
                assertThat(events).as(context + " a PUT with the count").singleElement().satisfies(e -> {
                    assertThat(e.type()).isEqualTo(WatchEvent.Type.PUT);
                    assertThat(new String(e.kv().metadata(), StandardCharsets.US_ASCII)).isEqualTo(Integer.toString(count));
                });
            }
            if (applied.result() instanceof LatchResult && !(applied.result() instanceof LatchResult.Left)) {
                assertThat(wakes.stream().filter(w -> !(w.result() instanceof LatchResult.Open)).toList())
                        .as(context + " no wait ends but by a release, a withdrawal or a lease's end").isEmpty();
            }
            for (String name : NAMES) {
                LatchView view = replica.state.primitive(LatchTable.class).latch(name);
                Gate gate = latches.get(name);
                if (gate == null) {
                    assertThat(view).as(context + " " + name + " exists").isNull();
                    continue;
                }
                assertThat(view).as(context + " " + name).isNotNull();
                assertThat(view.count()).as(context + " count of " + name).isEqualTo(gate.count).isPositive();
                assertThat(view.waiting()).extracting(LatchView.Waiter::leaseId).as(context + " waiting at " + name)
                        .containsExactlyElementsOf(gate.waiting.keySet());
                view.waiting().forEach(w -> assertThat(alive).as(context + " waiter alive").contains(w.leaseId()));
            }
            lastReleased = null;
        }
    }
}
