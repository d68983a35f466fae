package io.tenure.core;

import io.tenure.core.counter.CounterAdd;
import io.tenure.core.counter.CounterSet;
import io.tenure.core.counter.CounterTable;
import io.tenure.core.counter.CounterView;
import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.Command;
import io.tenure.core.kernel.Result;
import io.tenure.core.kernel.Result.Code;
import io.tenure.core.kernel.Txn;
import io.tenure.core.kernel.TxnCompare;
import io.tenure.core.kernel.TxnCompare.Relation;
import io.tenure.core.kernel.TxnCompare.Target;
import io.tenure.core.kernel.TxnResult;
import io.tenure.core.kv.KvDelete;
import io.tenure.core.kv.KvPut;
import io.tenure.core.kv.KvTable;
import io.tenure.core.kv.KvView;
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
 * Transactions over key-value and counters against plain {@link HashMap}s, over hundreds of
 * seeded sequences: comparisons of values, versions and mod revisions that hold or not, branches
 * of puts, deletes, adds (some out of the 64-bit range) and sets on a few names, malformed
 * operations, and retries with the same request id. At every applied index: the same keys and
 * counters as the model; a refused transaction changes nothing; a retry is answered as its first
 * copy and applied once; one watch event per change, revisions strictly increasing, the last one
 * the transaction's revision; and every 25 commands a snapshot that restores to byte-identical
 * state ({@link ModelRun}).
 */
class TxnModelTest {
    private static final String[] KEYS = {"k/a", "k/b", "k/c"};
    private static final String[] VALUES = {"a", "b", "c"};
    private static final String[] COUNTERS = {"n/a", "n/b"};
    private static final long[] DELTAS = {1, -1, 5, Long.MAX_VALUE, Long.MIN_VALUE};

    @Test
    void everyAppliedIndexMatchesTheReferenceModel() {
        ModelRun.run(300, 75, new long[0], Model::new);
    }

    /** A key as the model holds it: value, version, and the mod revision the replica answered for its latest put. */
    private record Key(String value, long version, long modRevision) {}

    private static final class Model extends ModelRun.Model {
        Map<String, Key> keys = new HashMap<>();
        Map<String, Long> counters = new HashMap<>();
        /** The first answer of each request id, rendered; and the transactions sent with one, for retries. */
        final Map<Long, String> answered = new HashMap<>();
        final List<Txn> sent = new ArrayList<>();
        long nextRequest = 1;
        Txn last;
        /** The operations the model applied for the last command (none when refused or retried), and its predicted answer. */
        List<Command> applied = List.of();
        String predicted;
        boolean retried;

        @Override
        Command next(Random random, Replica replica, int step) {
            if (random.nextInt(10) == 0 && !sent.isEmpty()) {
                last = sent.get(random.nextInt(sent.size()));
            } else {
                List<TxnCompare> compares = new ArrayList<>();
                for (int i = random.nextInt(3); i > 0; i--) {
                    compares.add(compare(random));
                }
                long requestId = random.nextInt(3) == 0 ? 0 : nextRequest++;
                last = new Txn(compares, operations(random), operations(random), requestId);
                if (requestId != 0) {
                    sent.add(last);
                }
            }
            return last;
        }

        private TxnCompare compare(Random random) {
            Relation relation = Relation.values()[random.nextInt(Relation.values().length)];
            if (random.nextBoolean()) {
                String name = COUNTERS[random.nextInt(COUNTERS.length)];
                return TxnCompare.of("counter", name, Target.VALUE, relation, counters.getOrDefault(name, 0L) + random.nextInt(3) - 1);
            }
            String key = KEYS[random.nextInt(KEYS.length)];
            Key now = keys.get(key);
            return switch (random.nextInt(3)) {
                case 0 -> TxnCompare.ofValue("kv", key, relation, bytes(VALUES[random.nextInt(VALUES.length)]));
                case 1 -> TxnCompare.of("kv", key, Target.VERSION, relation, (now == null ? 0 : now.version()) + random.nextInt(3) - 1);
                default -> TxnCompare.of("kv", key, Target.MOD_REVISION, relation, (now == null ? 0 : now.modRevision()) + random.nextInt(2));
            };
        }

        private List<Command> operations(Random random) {
            List<Command> operations = new ArrayList<>();
            for (int i = random.nextInt(4); i > 0; i--) {
                String key = KEYS[random.nextInt(KEYS.length)];
                String name = COUNTERS[random.nextInt(COUNTERS.length)];
                int dice = random.nextInt(100);
                if (dice < 2) {
                    operations.add(new KvPut(key, new byte[KvTable.MAX_VALUE_BYTES + 1], 0, 0, 0)); // malformed
                } else if (dice < 35) {
                    operations.add(new KvPut(key, bytes(VALUES[random.nextInt(VALUES.length)]), 0, 0, 0));
                } else if (dice < 50) {
                    operations.add(new KvDelete(key, KvDelete.ANY_REVISION, 0));
                } else if (dice < 85) {
                    operations.add(new CounterAdd(name, DELTAS[random.nextInt(DELTAS.length)], 0));
                } else {
                    operations.add(new CounterSet(name, random.nextInt(5) - 2, 0));
                }
            }
            return operations;
        }

        @Override
        String applyOwn(Command command) {
            Txn txn = (Txn) command;
            applied = List.of();
            retried = txn.requestId() != 0 && answered.containsKey(txn.requestId());
            if (retried) {
                predicted = answered.get(txn.requestId());
                return "TxnResult";
            }
            for (List<Command> branch : List.of(txn.success(), txn.failure())) {
                if (branch.stream().anyMatch(op -> op instanceof KvPut p && p.value().length > KvTable.MAX_VALUE_BYTES)) {
                    return "Rejected " + Code.INVALID_ARGUMENT;
                }
            }
            boolean succeeded = txn.compares().stream().allMatch(this::holds);
            List<Command> chosen = succeeded ? txn.success() : txn.failure();
            Map<String, Key> nextKeys = new HashMap<>(keys);
            Map<String, Long> nextCounters = new HashMap<>(counters);
            StringBuilder answer = new StringBuilder(succeeded ? "succeeded" : "failed");
            for (Command op : chosen) {
                if (op instanceof KvPut p) {
                    Key before = nextKeys.get(p.key());
                    nextKeys.put(p.key(), new Key(text(p.value()), before == null ? 1 : before.version() + 1, -1));
                    answer.append(" put v").append(before == null ? 1 : before.version() + 1);
                } else if (op instanceof KvDelete d) {
                    answer.append(" delete ").append(nextKeys.remove(d.key()) != null);
                } else if (op instanceof CounterAdd add) {
                    long current = nextCounters.getOrDefault(add.key(), 0L);
                    long sum = current + add.delta();
                    if (((current ^ sum) & (add.delta() ^ sum)) < 0) {
                        return "Rejected " + Code.FAILED_PRECONDITION; // not remembered: nothing changed
                    }
                    nextCounters.put(add.key(), sum);
                    answer.append(" counter ").append(current).append("->").append(sum);
                } else {
                    CounterSet set = (CounterSet) op;
                    answer.append(" counter ").append(nextCounters.getOrDefault(set.key(), 0L)).append("->").append(set.value());
                    nextCounters.put(set.key(), set.value());
                }
            }
            keys = nextKeys;
            counters = nextCounters;
            applied = chosen;
            predicted = answer.toString();
            if (txn.requestId() != 0) {
                answered.put(txn.requestId(), predicted);
            }
            return "TxnResult";
        }

        private boolean holds(TxnCompare compare) {
            if (compare.kind().equals("counter")) {
                return compare.relation().holds(Long.compare(counters.getOrDefault(compare.key(), 0L), compare.number()));
            }
            Key key = keys.get(compare.key());
            return switch (compare.target()) {
                case VALUE -> key != null && compare.relation().holds(Integer.signum(key.value().compareTo(text(compare.value()))));
                case VERSION -> compare.relation().holds(Long.compare(key == null ? 0 : key.version(), compare.number()));
                case MOD_REVISION -> compare.relation().holds(Long.compare(key == null ? 0 : key.modRevision(), compare.number()));
                case CREATE_REVISION -> throw new AssertionError("not generated");
            };
        }

        @Override
        void leaseEnded(long leaseId) {
        }

        @Override
        void check(Replica replica, Applied result, String context) {
            Result answer = result.result();
            if (answer instanceof TxnResult txn) {
                assertThat(render(txn)).as(context + " answered as the model predicts (a retry as its first copy)").isEqualTo(predicted);
                learnRevisions(txn);
            }
            KvTable kv = replica.state.primitive(KvTable.class);
            for (String key : KEYS) {
                KvView view = kv.get(key);
                Key expected = keys.get(key);
                assertThat(view == null ? null : text(view.value()) + " v" + view.version()).as(context + " key " + key)
                        .isEqualTo(expected == null ? null : expected.value() + " v" + expected.version());
                if (view != null) {
                    assertThat(view.modRevision()).as(context + " mod revision of " + key).isEqualTo(expected.modRevision());
                }
            }
            CounterTable table = replica.state.primitive(CounterTable.class);
            for (String name : COUNTERS) {
                assertThat(table.value(name)).as(context + " counter " + name).isEqualTo(counters.getOrDefault(name, 0L));
                CounterView view = table.counter(name);
                if (view != null) {
                    assertThat(view.idleSince() > 0).as(context + " " + name + " idle exactly while at 0").isEqualTo(view.value() == 0);
                }
            }
            List<WatchEvent> events = Replica.watched(result);
            if (answer instanceof TxnResult txn && !retried) {
                assertThat(events).as(context + " one event per change").hasSize((int) (applied.size() - countAbsentDeletes(txn)));
                for (int i = 1; i < events.size(); i++) {
                    assertThat(events.get(i).revision()).as(context + " revisions increase").isGreaterThan(events.get(i - 1).revision());
                }
                if (!events.isEmpty()) {
                    assertThat(events.get(0).revision()).as(context + " the first at the log position").isEqualTo(replica.lastPosition());
                    assertThat(events.get(events.size() - 1).revision()).as(context + " the transaction's revision").isEqualTo(txn.revision());
                }
            } else {
                assertThat(events).as(context + " a refusal or a retry changes nothing").isEmpty();
            }
        }

        private long countAbsentDeletes(TxnResult txn) {
            long absent = 0;
            for (int i = 0; i < applied.size(); i++) {
                if (applied.get(i) instanceof KvDelete && !txn.operations().get(i).changed()) {
                    absent++;
                }
            }
            return absent;
        }

        /** The model takes the mod revisions the replica stamped on its puts, to compare with them later. */
        private void learnRevisions(TxnResult txn) {
            for (int i = 0; i < applied.size(); i++) {
                if (applied.get(i) instanceof KvPut p) {
                    Key key = keys.get(p.key());
                    if (key != null) { // else deleted later in the same transaction
                        keys.put(p.key(), new Key(key.value(), key.version(), txn.operations().get(i).revision()));
                    }
                }
            }
        }

        /** The answer in the model's words: the kind of each operation is the model's, from the transaction sent. */
        private String render(TxnResult txn) {
            StringBuilder out = new StringBuilder(txn.succeeded() ? "succeeded" : "failed");
            List<Command> branch = txn.succeeded() ? last.success() : last.failure();
            for (int i = 0; i < txn.operations().size(); i++) {
                TxnResult.Done done = txn.operations().get(i);
                Command op = branch.get(i);
                if (op instanceof KvPut) {
                    out.append(" put v").append(done.value());
                } else if (op instanceof KvDelete) {
                    out.append(" delete ").append(done.changed());
                } else {
                    out.append(" counter ").append(done.previous()).append("->").append(done.value());
                }
            }
            return out.toString();
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String text(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }
}
