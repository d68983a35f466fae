package io.tenure.core.counter;

import io.tenure.core.Limits;
import io.tenure.core.SnapshotFormatException;
import io.tenure.core.counter.CounterResult.Changed;
import io.tenure.core.counter.CounterResult.CompareFailed;
import io.tenure.core.kernel.ApplyContext;
import io.tenure.core.kernel.Command;
import io.tenure.core.kernel.CommandType;
import io.tenure.core.kernel.Leases;
import io.tenure.core.kernel.Names;
import io.tenure.core.kernel.Primitive;
import io.tenure.core.kernel.Result;
import io.tenure.core.kernel.Result.Code;
import io.tenure.core.kernel.RetryMemo;
import io.tenure.core.kernel.Ties;
import io.tenure.core.kernel.Transactional;
import io.tenure.core.kernel.TxnCompare;
import io.tenure.core.kernel.TxnResult;
import io.tenure.core.kernel.Wire;
import io.tenure.core.watch.KeyValue;
import io.tenure.core.watch.WatchEvent;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Counters (Hazelcast CP's IAtomicLong, Curator's DistributedAtomicLong, dflockd's {@code incr}):
 * a name with a signed 64-bit value, changed by {@link CounterAdd}, {@link CounterSet} and
 * {@link CounterCompareAndSet}. A counter that does not exist reads 0; one comes into being at
 * its first change. A counter is bound to no lease. Counters have a namespace of their own: a
 * counter may share its name with a lock or a latch.
 *
 * <p>A counter left at 0 is idle from that position ({@link Names#idle}); the leader forgets it
 * after its idle time, as it forgets idle semaphores, so memory holds only counters in use. A
 * counter that is not 0 is never dropped.
 *
 * <p>A change that names its request is applied once: a retry of it (after a lost answer, or a
 * failover) gets the first copy's answer, among the last {@value #RECENT_REQUESTS} changes. An
 * increment is therefore neither lost nor doubled when its client retries within that window.
 *
 * <p>Each change is two steps, a check that changes nothing ({@link #added}) and an apply that
 * checks nothing ({@link #change}), so that a transaction ({@link io.tenure.core.kernel.Txn}) can
 * check every operation before applying any: it compares a counter's value, revisions or version,
 * and applies adds and sets.
 *
 * <p>Watches see a PUT at every change, whose value is the counter in decimal.
 */
public final class CounterTable implements Primitive, Transactional {
    /** How many changes are remembered with their answers, for their retries. */
    public static final int RECENT_REQUESTS = 65_536;
    private static final int MAX_FIELD_BYTES = 1 << 20;

    /** Its name: the kind of its names, and its snapshot section. */
    public static final String NAME = "counter";
    /** Its commands' log tags (never reuse one). */
    public static final Kind KIND = new Kind(NAME, List.of(
            new CommandType<>(32, CounterAdd.class, (c, out) -> {
                Wire.writeString(out, c.key());
                out.writeLong(c.delta());
                out.writeLong(c.requestId());
            }, in -> new CounterAdd(Wire.readString(in, MAX_FIELD_BYTES), in.readLong(), in.readLong())),
            new CommandType<>(33, CounterSet.class, (c, out) -> {
                Wire.writeString(out, c.key());
                out.writeLong(c.value());
                out.writeLong(c.requestId());
            }, in -> new CounterSet(Wire.readString(in, MAX_FIELD_BYTES), in.readLong(), in.readLong())),
            new CommandType<>(34, CounterCompareAndSet.class, (c, out) -> {
                Wire.writeString(out, c.key());
                out.writeLong(c.expected());
                out.writeLong(c.value());
                out.writeLong(c.requestId());
            }, in -> new CounterCompareAndSet(Wire.readString(in, MAX_FIELD_BYTES), in.readLong(), in.readLong(), in.readLong()))));

    private static final class Counter {
        final String key;
        final long createRevision;
        long value;
        long modRevision;
        long version;

        Counter(String key, long createRevision) {
            this.key = key;
            this.createRevision = createRevision;
        }
    }

    /** One change of one client: a retry names the same. */
    private record Request(String key, long requestId) {}

    private final Names names;
    private final TreeMap<String, Counter> counters = new TreeMap<>();
    private final RetryMemo<Request, CounterResult> recentRequests = new RetryMemo<>(RECENT_REQUESTS);

    /** @param names the counters' own namespace, sharing the state's idle names ({@link Names#newNamespace}) */
    public CounterTable(Names names) {
        this.names = names;
    }

    @Override
    public Kind kind() {
        return KIND;
    }

    @Override
    public Result apply(ApplyContext context, Command command) {
        if (!(command instanceof CounterCommand c)) {
            throw new IllegalArgumentException("not a counter command: " + command.getClass().getName());
        }
        String problem = Limits.checkKey("name", c.key());
        if (problem != null) {
            return new Result.Rejected(Code.INVALID_ARGUMENT, problem);
        }
        Request request = new Request(c.key(), c.requestId());
        CounterResult before = c.requestId() == 0 ? null : recentRequests.recall(request);
        if (before != null) {
            return before;
        }
        long current = value(c.key());
        long next;
        if (c instanceof CounterAdd add) {
            Result.Rejected overflow = added(c.key(), current, add.delta());
            if (overflow != null) {
                // Not remembered: nothing changed, and a retry is refused the same way while the value stays.
                return overflow;
            }
            next = current + add.delta();
        } else if (c instanceof CounterSet set) {
            next = set.value();
        } else {
            CounterCompareAndSet cas = (CounterCompareAndSet) c;
            if (current != cas.expected()) {
                CompareFailed failed = new CompareFailed(c.key(), current);
                remember(request, failed);
                return failed;
            }
            next = cas.value();
        }
        Changed changed = change(context, c.key(), next);
        remember(request, changed);
        return changed;
    }

    // ---- the steps: a check that changes nothing, an apply that checks nothing -----------------

    /** Null when adding {@code delta} to counter {@code key}, at {@code current}, stays in range; else the refusal. */
    private static Result.Rejected added(String key, long current, long delta) {
        long sum = current + delta;
        if (((current ^ sum) & (delta ^ sum)) >= 0) {
            return null;
        }
        return new Result.Rejected(Code.FAILED_PRECONDITION, "counter '" + key + "' is " + current + "; adding " + delta
                + " would leave the signed 64-bit range [" + Long.MIN_VALUE + ", " + Long.MAX_VALUE + "]");
    }

    /** Sets counter {@code key} to {@code next}, creating it, with its PUT; idle from now when {@code next} is 0. */
    private Changed change(ApplyContext context, String key, long next) {
        Counter counter = counters.get(key);
        long current = counter == null ? 0 : counter.value;
        long revision = context.stamp();
        if (counter == null) {
            counter = new Counter(key, revision);
            counters.put(key, counter);
        }
        counter.value = next;
        counter.modRevision = revision;
        counter.version++;
        names.take(key, NAME);
        if (next == 0) {
            names.idle(key, NAME, context.position());
        }
        byte[] value = Long.toString(next).getBytes(StandardCharsets.US_ASCII);
        context.emit(new WatchEvent(revision, WatchEvent.Type.PUT,
                new KeyValue(counter.key, "", value, 0, counter.createRevision, revision, counter.version), null, NAME));
        return new Changed(key, current, next, revision);
    }

    // ---- transactions --------------------------------------------------------------------------

    /** Every target is a number; a counter that does not exist reads 0 for each. */
    @Override
    public String checkCompare(TxnCompare compare) {
        return compare.value() != null ? "a counter is compared with a number, not bytes" : null;
    }

    @Override
    public boolean compare(TxnCompare compare) {
        Counter counter = counters.get(compare.key());
        long actual = counter == null ? 0 : switch (compare.target()) {
            case VALUE -> counter.value;
            case MOD_REVISION -> counter.modRevision;
            case CREATE_REVISION -> counter.createRevision;
            case VERSION -> counter.version;
        };
        return compare.relation().holds(Long.compare(actual, compare.number()));
    }

    @Override
    public String checkOperation(Command operation) {
        if (!(operation instanceof CounterAdd) && !(operation instanceof CounterSet)) {
            return "a counter " + operation.getClass().getSimpleName() + " cannot be part of a transaction (adds and sets can;"
                    + " compare the value instead)";
        }
        CounterCommand c = (CounterCommand) operation;
        String problem = Transactional.ownRequestId(c.requestId());
        return problem != null ? problem : Limits.checkKey("name", c.key());
    }

    /** Each add is checked against the value the operations before it leave. */
    @Override
    public Refusal admit(List<Command> operations) {
        HashMap<String, Long> values = new HashMap<>(); // looked up, never iterated
        for (int i = 0; i < operations.size(); i++) {
            CounterCommand c = (CounterCommand) operations.get(i);
            long current = values.containsKey(c.key()) ? values.get(c.key()) : value(c.key());
            if (c instanceof CounterAdd add) {
                Result.Rejected overflow = added(c.key(), current, add.delta());
                if (overflow != null) {
                    return new Refusal(i, overflow);
                }
                values.put(c.key(), current + add.delta());
            } else {
                values.put(c.key(), ((CounterSet) c).value());
            }
        }
        return null;
    }

    @Override
    public TxnResult.Done applyOperation(ApplyContext context, Command operation) {
        String key = ((CounterCommand) operation).key();
        long next = operation instanceof CounterAdd add ? value(key) + add.delta() : ((CounterSet) operation).value();
        Changed changed = change(context, key, next);
        return new TxnResult.Done(changed.revision(), true, changed.previous(), changed.value());
    }

    private void remember(Request request, CounterResult answer) {
        if (request.requestId() != 0) {
            recentRequests.remember(request, answer);
        }
    }

    /** Counter {@code name}, idle at 0 for the leader's idle time, goes. */
    @Override
    public void forget(String name) {
        Counter counter = counters.get(name);
        if (counter == null || counter.value != 0) {
            throw new IllegalStateException("counter '" + name + "' is not idle at 0");
        }
        counters.remove(name);
        names.free(name, NAME);
    }

    // ---- reads ---------------------------------------------------------------------------------

    /** The value of counter {@code key}: 0 when it does not exist. */
    public long value(String key) {
        Counter counter = counters.get(key);
        return counter == null ? 0 : counter.value;
    }

    /** The counter, or null when it does not exist (it reads 0). */
    public CounterView counter(String key) {
        Counter counter = counters.get(key);
        return counter == null ? null : view(counter);
    }

    /** Counters whose name starts with {@code prefix}, in name order, at most {@code limit}. */
    public List<CounterView> counters(String prefix, int limit) {
        return Ties.prefixed(counters, prefix, limit, this::view);
    }

    /** How many counters exist, idle ones at 0 included. */
    public int counterCount() {
        return counters.size();
    }

    private CounterView view(Counter counter) {
        return new CounterView(counter.key, counter.value, counter.createRevision, counter.modRevision, counter.version,
                counter.value == 0 ? names.idleSinceOf(counter.key) : 0);
    }

    // ---- snapshot section ------------------------------------------------------------------------

    private static final byte CHANGED = 0;
    private static final byte COMPARE_FAILED = 1;

    /**
     * Counters by name (value, revisions, version, and for one at 0 the position it became idle
     * at), then the recent changes with their answers, oldest first.
     */
    @Override
    public void writeSnapshot(DataOutputStream out) throws IOException {
        out.writeInt(counters.size());
        for (Counter counter : counters.values()) {
            Wire.writeString(out, counter.key);
            out.writeLong(counter.value);
            out.writeLong(counter.createRevision);
            out.writeLong(counter.modRevision);
            out.writeLong(counter.version);
            out.writeLong(counter.value == 0 ? names.idleSinceOf(counter.key) : 0);
        }
        out.writeInt(recentRequests.size());
        for (Map.Entry<Request, CounterResult> e : recentRequests.entries().entrySet()) {
            Wire.writeString(out, e.getKey().key());
            out.writeLong(e.getKey().requestId());
            if (e.getValue() instanceof Changed changed) {
                out.writeByte(CHANGED);
                out.writeLong(changed.previous());
                out.writeLong(changed.value());
                out.writeLong(changed.revision());
            } else {
                out.writeByte(COMPARE_FAILED);
                out.writeLong(((CompareFailed) e.getValue()).value());
            }
        }
    }

    /** Snapshots written before counters have no section for them, and the counters start empty. */
    @Override
    public void readSnapshot(DataInputStream in, int formatVersion, Leases leases) throws IOException {
        if (formatVersion < 3) {
            return; // unframed: written long before counters
        }
        int count = Wire.count(in, "counter");
        for (int i = 0; i < count; i++) {
            String key = Wire.readString(in, Limits.MAX_METADATA_BYTES);
            long value = in.readLong();
            Counter read = new Counter(key, in.readLong());
            read.value = value;
            read.modRevision = in.readLong();
            read.version = in.readLong();
            long idleSince = in.readLong();
            if (read.version < 1 || read.modRevision < read.createRevision || (read.value == 0) != (idleSince > 0)) {
                throw new SnapshotFormatException("snapshot is corrupt: counter '" + key + "' has value " + read.value + ", version "
                        + read.version + ", revisions " + read.createRevision + "-" + read.modRevision + ", idle since " + idleSince);
            }
            counters.put(key, read);
            names.take(key, NAME);
            if (idleSince > 0) {
                names.idle(key, NAME, idleSince);
            }
        }
        int requests = Wire.count(in, "counter request");
        for (int i = 0; i < requests; i++) {
            Request request = new Request(Wire.readString(in, Limits.MAX_METADATA_BYTES), in.readLong());
            byte tag = in.readByte();
            CounterResult answer = switch (tag) {
                case CHANGED -> new Changed(request.key(), in.readLong(), in.readLong(), in.readLong());
                case COMPARE_FAILED -> new CompareFailed(request.key(), in.readLong());
                default -> throw new SnapshotFormatException("snapshot is corrupt: counter request answer tag " + tag);
            };
            recentRequests.remember(request, answer);
        }
    }
}
