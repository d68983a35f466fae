package io.tenure.core;

import io.tenure.core.counter.CounterAdd;
import io.tenure.core.counter.CounterCommand;
import io.tenure.core.counter.CounterCompareAndSet;
import io.tenure.core.counter.CounterResult;
import io.tenure.core.counter.CounterSet;
import io.tenure.core.counter.CounterTable;
import io.tenure.core.counter.CounterView;
import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.Command;
import io.tenure.core.kernel.IdleForget;
import io.tenure.core.kernel.IdleName;
import io.tenure.core.kernel.Result;
import io.tenure.core.kernel.Result.Code;
import io.tenure.core.watch.WatchEvent;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Counters against a plain {@link HashMap} of longs, over thousands of seeded command sequences
 * (adds near both ends of the 64-bit range, sets, compare-and-sets that match or not, retries of
 * any of them with the same request id, and the leader's forgetting of idle counters, stale or
 * not). At every applied index: the same value for every name as the model (absent = 0); an
 * overflow refused and nothing changed; a retry answered as its first copy and applied once; a
 * PUT with the new value at every change and nothing else; a counter idle exactly while it is 0,
 * and forgotten only then; and every 25 commands a snapshot that restores to byte-identical state
 * ({@link ModelRun}).
 */
class CounterModelTest {
    private static final String[] NAMES = {"seq/a", "seq/b", "seq/c"};
    private static final long[] DELTAS = {1, -1, 2, -3, Long.MAX_VALUE, Long.MIN_VALUE, Long.MAX_VALUE / 2 + 1};

    @Test
    void everyAppliedIndexMatchesTheReferenceModel() {
        ModelRun.run(1_000, 120, new long[0], Model::new);
    }

    private static final class Model extends ModelRun.Model {
        final Map<String, Long> values = new HashMap<>();
        /** The first answer of each request id, rendered; and the commands sent with one, for retries. */
        final Map<Long, String> answered = new HashMap<>();
        final List<CounterCommand> sent = new ArrayList<>();
        long nextRequest = 1;
        Command last;

        @Override
        Command next(Random random, Replica replica, int step) {
            int dice = random.nextInt(100);
            String name = NAMES[random.nextInt(NAMES.length)];
            long requestId = random.nextInt(3) == 0 ? 0 : nextRequest++;
            if (dice < 10 && !sent.isEmpty()) {
                last = sent.get(random.nextInt(sent.size())); // a retry
            } else if (dice < 15) {
                // The leader's forgetting: of what is idle now, or of a mark that may be stale.
                List<IdleName> idle = replica.state.idleAfter(0, 10);
                List<IdleName> named = new ArrayList<>(idle);
                if (random.nextBoolean()) {
                    named.add(new IdleName(CounterTable.NAME, name, Math.max(1, replica.lastPosition() - random.nextInt(5))));
                }
                last = new IdleForget(named);
            } else if (dice < 55) {
                long delta = DELTAS[random.nextInt(DELTAS.length)];
                last = new CounterAdd(name, delta, requestId);
            } else if (dice < 70) {
                last = new CounterSet(name, random.nextInt(4) == 0 ? 0 : random.nextInt(21) - 10, requestId);
            } else {
                long current = values.getOrDefault(name, 0L);
                long expected = random.nextBoolean() ? current : current + 1;
                last = new CounterCompareAndSet(name, expected, random.nextInt(3) - 1, requestId);
            }
            retried = last instanceof CounterCommand c && c.requestId() != 0 && answered.containsKey(c.requestId());
            if (last instanceof CounterCommand c && c.requestId() != 0 && !sent.contains(c)) {
                sent.add(c);
            }
            return last;
        }

        @Override
        String applyOwn(Command command) {
            if (command instanceof IdleForget forget) {
                return "Forgotten";
            }
            CounterCommand c = (CounterCommand) command;
            if (c.requestId() != 0 && answered.containsKey(c.requestId())) {
                return answered.get(c.requestId()).split(" ")[0];
            }
            long current = values.getOrDefault(c.key(), 0L);
            String outcome;
            if (c instanceof CounterAdd add) {
                long sum = current + add.delta();
                boolean overflow = ((current ^ sum) & (add.delta() ^ sum)) < 0;
                if (overflow) {
                    return "Rejected " + Code.FAILED_PRECONDITION; // not remembered: nothing changed
                }
                values.put(c.key(), sum);
                outcome = "Changed " + current + " " + sum;
            } else if (c instanceof CounterSet set) {
                values.put(c.key(), set.value());
                outcome = "Changed " + current + " " + set.value();
            } else {
                CounterCompareAndSet cas = (CounterCompareAndSet) c;
                if (cas.expected() != current) {
                    outcome = "CompareFailed " + current;
                } else {
                    values.put(c.key(), cas.value());
                    outcome = "Changed " + current + " " + cas.value();
                }
            }
            if (c.requestId() != 0) {
                answered.put(c.requestId(), outcome);
            }
            return outcome.split(" ")[0];
        }

        @Override
        void leaseEnded(long leaseId) {
        }

        @Override
        void check(Replica replica, Applied applied, String context) {
            CounterTable table = replica.state.primitive(CounterTable.class);
            for (String name : NAMES) {
                long expected = values.getOrDefault(name, 0L);
                assertThat(table.value(name)).as(context + " value of " + name).isEqualTo(expected);
                CounterView view = table.counter(name);
                if (view != null) {
                    assertThat(view.idleSince() > 0).as(context + " " + name + " idle exactly while at 0").isEqualTo(view.value() == 0);
                }
            }
            Result result = applied.result();
            if (last instanceof CounterCommand c && c.requestId() != 0 && answered.containsKey(c.requestId())) {
                String[] first = answered.get(c.requestId()).split(" ");
                if (result instanceof CounterResult.Changed changed) {
                    assertThat(first[0]).isEqualTo("Changed");
                    assertThat(changed.previous() + " " + changed.value()).as(context + " answered as the first copy")
                            .isEqualTo(first[1] + " " + first[2]);
                } else if (result instanceof CounterResult.CompareFailed failed) {
                    assertThat(failed.value()).as(context + " answered as the first copy").isEqualTo(Long.parseLong(first[1]));
                }
            }
            List<WatchEvent> events = Replica.watched(applied);
            boolean changedNow = result instanceof CounterResult.Changed && !retried;
            if (changedNow) {
                CounterResult.Changed changed = (CounterResult.Changed) result;
                assertThat(events).as(context + " one PUT with the new value").singleElement().satisfies(e -> {
                    assertThat(e.type()).isEqualTo(WatchEvent.Type.PUT);
                    assertThat(new String(e.kv().metadata(), StandardCharsets.US_ASCII)).isEqualTo(Long.toString(changed.value()));
                    assertThat(e.revision()).isEqualTo(changed.revision());
                });
            } else {
                assertThat(events).as(context + " nothing watched").isEmpty();
            }
        }

        /** Whether the last command repeats a request id already answered (a retry, answered from the memo). */
        boolean retried;
    }
}
