package io.tenure.core.kv;

import io.tenure.core.Limits;
import io.tenure.core.SnapshotFormatException;
import io.tenure.core.kernel.ApplyContext;
import io.tenure.core.kernel.Command;
import io.tenure.core.kernel.CommandType;
import io.tenure.core.kernel.Lease;
import io.tenure.core.kernel.Leases;
import io.tenure.core.kernel.Primitive;
import io.tenure.core.kernel.Result;
import io.tenure.core.kernel.Result.Code;
import io.tenure.core.kernel.RetryMemo;
import io.tenure.core.kernel.Transactional;
import io.tenure.core.kernel.TxnCompare;
import io.tenure.core.kernel.TxnResult;
import io.tenure.core.kernel.Wire;
import io.tenure.core.kv.KvResult.CompareFailed;
import io.tenure.core.kv.KvResult.Deleted;
import io.tenure.core.kv.KvResult.Expired;
import io.tenure.core.kv.KvResult.Put;
import io.tenure.core.watch.KeyValue;
import io.tenure.core.watch.WatchEvent;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * A replicated key-value store (etcd's KV, seed 004's {@code kset}/{@code kget}/{@code kdel}/{@code kcas}):
 * keys with byte values, each with the revisions of its creation and latest put, a version (its
 * puts since created), and optionally a lease it is bound to or a time to live. Keys have a
 * namespace of their own: a key may share its name with a lock or a latch.
 *
 * <p><b>Expiry.</b> A key bound to a lease goes when the lease ends (revoked or expired), with its
 * DELETE, in key order. A key with a TTL goes by a {@link KvExpire} the leader proposes once the
 * TTL has passed on its clock since it applied the key's latest put; the expiry names that put's
 * mod revision, so a put in between refreshes the key and the late expiry changes nothing. No
 * member reads a clock while applying (I4).
 *
 * <p><b>Retries.</b> A put, a compare-and-set and a delete that name their request are applied
 * once: a retry (after a lost answer, or a failover) gets the first copy's answer. The last
 * {@value #RECENT_REQUESTS} are remembered, without values: a retried compare-and-set that failed
 * carries the key's current value only while the key is still at the mod revision it answered.
 *
 * <p><b>Reuse.</b> Each change is two steps, a check that changes nothing ({@link #checkPut},
 * {@link #admitPut}, {@link #matches}) and an apply that checks nothing ({@link #put},
 * {@link #delete}), so that a multi-key transaction can check every operation before applying any.
 * A transaction ({@link io.tenure.core.kernel.Txn}) compares a key's value, mod or create revision
 * or version, and puts and deletes keys (unconditionally: its comparisons are its conditions).
 *
 * <p>Watches see a PUT at every put (the value in {@link KeyValue#metadata()}, the previous one in
 * {@code prevKv}) and a DELETE at every delete, expiry and lease end, of kind {@value #NAME}.
 * Stored values are never changed in place: a put stores a copy of its value, which the watch
 * events share rather than copy again (a value is up to {@value #MAX_VALUE_BYTES} bytes, and the
 * event log keeps thousands of events).
 */
public final class KvTable implements Primitive, Transactional {
    /** The largest value, in bytes. */
    public static final int MAX_VALUE_BYTES = 64 * 1024;
    /** The most keys the store holds; a put that would create one more is refused. */
    public static final int MAX_KEYS = 1_000_000;
    /** How many puts, compare-and-sets and deletes are remembered for their retries. */
    public static final int RECENT_REQUESTS = 16_384;
    /** The bound on a field read from the log: above every valid one, so a value over its limit is refused by apply, clearly. */
    private static final int MAX_FIELD_BYTES = 1 << 20;

    /** Its name: the kind of its watch events, and its snapshot section. Never changes. */
    public static final String NAME = "kv";
    /** Its commands' log tags, 40 to 49 (never reuse one). */
    public static final Kind KIND = new Kind(NAME, List.of(
            new CommandType<>(40, KvPut.class, (c, out) -> {
                Wire.writeString(out, c.key());
                Wire.writeBytes(out, c.value());
                out.writeLong(c.leaseId());
                out.writeLong(c.ttlMillis());
                out.writeLong(c.requestId());
            }, in -> new KvPut(Wire.readString(in, MAX_FIELD_BYTES), Wire.readBytes(in, MAX_FIELD_BYTES),
                    in.readLong(), in.readLong(), in.readLong())),
            new CommandType<>(41, KvCompareAndSet.class, (c, out) -> {
                Wire.writeString(out, c.key());
                out.writeLong(c.expectedModRevision());
                // Present or not: an empty expected value is a real comparison, unlike none.
                out.writeBoolean(c.expectedValue() != null);
                if (c.expectedValue() != null) {
                    Wire.writeBytes(out, c.expectedValue());
                }
                Wire.writeBytes(out, c.newValue());
                out.writeLong(c.leaseId());
                out.writeLong(c.ttlMillis());
                out.writeLong(c.requestId());
            }, in -> {
                String key = Wire.readString(in, MAX_FIELD_BYTES);
                long expectedModRevision = in.readLong();
                byte[] expectedValue = in.readBoolean() ? Wire.readBytes(in, MAX_FIELD_BYTES) : null;
                return new KvCompareAndSet(key, expectedModRevision, expectedValue, Wire.readBytes(in, MAX_FIELD_BYTES),
                        in.readLong(), in.readLong(), in.readLong());
            }),
            new CommandType<>(42, KvDelete.class, (c, out) -> {
                Wire.writeString(out, c.key());
                out.writeLong(c.expectedModRevision());
                out.writeLong(c.requestId());
            }, in -> new KvDelete(Wire.readString(in, MAX_FIELD_BYTES), in.readLong(), in.readLong())),
            new CommandType<>(43, KvExpire.class, (c, out) -> {
                Wire.writeString(out, c.key());
                out.writeLong(c.modRevision());
            }, in -> new KvExpire(Wire.readString(in, MAX_FIELD_BYTES), in.readLong()))));

    /**
     * One key's state; the key itself is the map's. The only object per key besides the nodes of
     * the maps that index it (by key; by lease or TTL for the keys that have one).
     */
    private static final class Entry {
        byte[] value;
        long createRevision;
        long modRevision;
        long version;
        long leaseId;
        long ttlMillis;
    }

    /** A client's request on a key: which command ({@code op}) and its request id. */
    private record Request(String key, int op, long requestId) {}

    /**
     * A remembered answer: {@code outcome} says which result; {@code revision} is the put's, the
     * delete's or the mod revision a comparison found; {@code prevModRevision} and {@code version}
     * belong to a put.
     */
    private record Answer(int outcome, long revision, long prevModRevision, long version) {}

    private static final int OP_PUT = 1;
    private static final int OP_COMPARE_AND_SET = 2;
    private static final int OP_DELETE = 3;

    private static final int PUT = 1;
    private static final int COMPARE_FAILED = 2;
    private static final int DELETED = 3;
    private static final int ABSENT = 4;

    private final Leases leases;
    private final int maxKeys;
    private final TreeMap<String, Entry> entries = new TreeMap<>();
    /** Lease id → the keys bound to it, in key order. Looked up, never iterated. */
    private final Map<Long, TreeSet<String>> byLease = new HashMap<>();
    /** The keys with a TTL, in key order: what the leader's expiry loop tracks. */
    private final TreeSet<String> withTtl = new TreeSet<>();
    private final RetryMemo<Request, Answer> recentRequests = new RetryMemo<>(RECENT_REQUESTS);

    public KvTable(Leases leases) {
        this(leases, MAX_KEYS);
    }

    /** A store that holds at most {@code maxKeys} keys (at most {@link #MAX_KEYS}): for tests of the limit. */
    public KvTable(Leases leases, int maxKeys) {
        if (maxKeys < 1 || maxKeys > MAX_KEYS) {
            throw new IllegalArgumentException("maxKeys must be between 1 and " + MAX_KEYS + ", got " + maxKeys);
        }
        this.leases = leases;
        this.maxKeys = maxKeys;
    }

    @Override
    public Kind kind() {
        return KIND;
    }

    @Override
    public Result apply(ApplyContext context, Command command) {
        if (command instanceof KvPut c) {
            return put(context, c);
        } else if (command instanceof KvCompareAndSet c) {
            return compareAndSet(context, c);
        } else if (command instanceof KvDelete c) {
            return delete(context, c);
        } else if (command instanceof KvExpire c) {
            return expire(context, c);
        }
        throw new IllegalArgumentException("not a key-value command: " + command.getClass().getName());
    }

    private Result put(ApplyContext context, KvPut c) {
        String problem = checkPut(c.key(), c.value(), c.leaseId(), c.ttlMillis());
        if (problem != null) {
            return new Result.Rejected(Code.INVALID_ARGUMENT, problem);
        }
        Request request = new Request(c.key(), OP_PUT, c.requestId());
        Result before = recall(request);
        if (before != null) {
            return before;
        }
        Result.Rejected refused = admitPut(c.key(), c.leaseId());
        if (refused != null) {
            return refused;
        }
        return remember(request, put(context, c.key(), c.value(), c.leaseId(), c.ttlMillis()));
    }

    private Result compareAndSet(ApplyContext context, KvCompareAndSet c) {
        String problem = checkPut(c.key(), c.newValue(), c.leaseId(), c.ttlMillis());
        if (problem == null) {
            problem = checkComparison(c.expectedModRevision(), c.expectedValue());
        }
        if (problem != null) {
            return new Result.Rejected(Code.INVALID_ARGUMENT, problem);
        }
        Request request = new Request(c.key(), OP_COMPARE_AND_SET, c.requestId());
        Result before = recall(request);
        if (before != null) {
            return before;
        }
        Result.Rejected refused = admitPut(c.key(), c.leaseId());
        if (refused != null) {
            return refused;
        }
        if (!matches(c.key(), c.expectedModRevision(), c.expectedValue())) {
            return remember(request, compareFailed(c.key()));
        }
        return remember(request, put(context, c.key(), c.newValue(), c.leaseId(), c.ttlMillis()));
    }

    private Result delete(ApplyContext context, KvDelete c) {
        String problem = Limits.checkKey("key", c.key());
        if (problem == null && c.expectedModRevision() < KvDelete.ANY_REVISION) {
            problem = "expected_mod_revision must be -1 (any) or at least 0, got " + c.expectedModRevision();
        }
        if (problem != null) {
            return new Result.Rejected(Code.INVALID_ARGUMENT, problem);
        }
        Request request = new Request(c.key(), OP_DELETE, c.requestId());
        Result before = recall(request);
        if (before != null) {
            return before;
        }
        if (c.expectedModRevision() != KvDelete.ANY_REVISION && !matches(c.key(), c.expectedModRevision(), null)) {
            return remember(request, compareFailed(c.key()));
        }
        return remember(request, delete(context, c.key()));
    }

    private Result expire(ApplyContext context, KvExpire c) {
        String problem = Limits.checkKey("key", c.key());
        if (problem != null) {
            return new Result.Rejected(Code.INVALID_ARGUMENT, problem);
        }
        Entry entry = entries.get(c.key());
        if (entry == null) {
            return new Result.Skipped("key '" + c.key() + "' is already gone");
        }
        if (entry.ttlMillis == 0) {
            return new Result.Skipped("key '" + c.key() + "' has no TTL since its put at " + entry.modRevision);
        }
        if (entry.modRevision != c.modRevision()) {
            return new Result.Skipped("key '" + c.key() + "' was put at " + entry.modRevision
                    + " after the expiry was computed against " + c.modRevision());
        }
        return new Expired(c.key(), remove(context, c.key(), entry));
    }

    // ---- the steps: checks that change nothing, applies that check nothing ---------------------

    /** Null when a put of these fields is well formed, else a message naming the field (INVALID_ARGUMENT). */
    static String checkPut(String key, byte[] value, long leaseId, long ttlMillis) {
        String problem = Limits.checkKey("key", key);
        if (problem != null) {
            return problem;
        }
        if (value != null && value.length > MAX_VALUE_BYTES) {
            return "value must be at most " + MAX_VALUE_BYTES + " bytes, got " + value.length;
        }
        if (ttlMillis < 0 || ttlMillis > Limits.MAX_TTL_MILLIS) {
            return "ttl_millis must be 0 (none) or between 1 and " + Limits.MAX_TTL_MILLIS + ", got " + ttlMillis;
        }
        if (leaseId != 0 && ttlMillis != 0) {
            return "lease_id and ttl_millis are exclusive: a key is bound to a lease or has a TTL, got lease "
                    + leaseId + " and " + ttlMillis + " ms";
        }
        return null;
    }

    /** Null when a comparison of these fields is well formed, else a message naming the field (INVALID_ARGUMENT). */
    static String checkComparison(long expectedModRevision, byte[] expectedValue) {
        if (expectedModRevision < -1) {
            return "expected_mod_revision must be -1 (compare the value) or at least 0, got " + expectedModRevision;
        }
        if (expectedModRevision == -1 && expectedValue == null) {
            return "a compare-and-set needs expected_mod_revision (0 = absent) or expected_value";
        }
        if (expectedValue != null && expectedValue.length > MAX_VALUE_BYTES) {
            return "expected_value must be at most " + MAX_VALUE_BYTES + " bytes, got " + expectedValue.length;
        }
        return null;
    }

    /** Null when this state admits a well-formed put of {@code key} bound to {@code leaseId}, else the refusal. */
    Result.Rejected admitPut(String key, long leaseId) {
        return admitPut(leaseId, !entries.containsKey(key), entries.size());
    }

    /** Null when a put bound to {@code leaseId}, which {@code creates} a key while the store holds {@code keys}, is admitted. */
    private Result.Rejected admitPut(long leaseId, boolean creates, int keys) {
        if (leaseId != 0 && leases.get(leaseId) == null) {
            return new Result.Rejected(Code.NOT_FOUND, Leases.notFound(leaseId));
        }
        if (creates && keys >= maxKeys) {
            return new Result.Rejected(Code.FAILED_PRECONDITION,
                    "key count is at its limit of " + maxKeys + ": delete keys before creating more");
        }
        return null;
    }

    /**
     * Whether {@code key} is as expected: at mod revision {@code expectedModRevision} when it is 0
     * or above (0 = absent), else with exactly the value {@code expectedValue}.
     */
    boolean matches(String key, long expectedModRevision, byte[] expectedValue) {
        Entry entry = entries.get(key);
        if (expectedModRevision >= 0) {
            return (entry == null ? 0 : entry.modRevision) == expectedModRevision;
        }
        return entry != null && expectedValue != null && Arrays.equals(entry.value, expectedValue);
    }

    /** Sets {@code key} (checked and admitted) to a copy of {@code value}, with its PUT. */
    Put put(ApplyContext context, String key, byte[] value, long leaseId, long ttlMillis) {
        long revision = context.stamp();
        Entry entry = entries.get(key);
        KeyValue before = null;
        long prevModRevision = 0;
        if (entry == null) {
            entry = new Entry();
            entry.createRevision = revision;
            entries.put(key, entry);
        } else {
            before = keyValue(key, entry);
            prevModRevision = entry.modRevision;
            unbind(key, entry);
        }
        entry.value = value == null ? new byte[0] : value.clone();
        entry.modRevision = revision;
        entry.version++;
        entry.leaseId = leaseId;
        entry.ttlMillis = ttlMillis;
        bind(key, entry);
        context.emit(new WatchEvent(revision, WatchEvent.Type.PUT, keyValue(key, entry), before, NAME));
        return new Put(key, revision, prevModRevision, entry.version);
    }

    /** Deletes {@code key} if it exists, with its DELETE. */
    Deleted delete(ApplyContext context, String key) {
        Entry entry = entries.get(key);
        if (entry == null) {
            return new Deleted(key, false, 0);
        }
        return new Deleted(key, true, remove(context, key, entry));
    }

    /** The answer to a comparison that failed: the key as it is. */
    private CompareFailed compareFailed(String key) {
        Entry entry = entries.get(key);
        return entry == null ? new CompareFailed(key, 0, null) : new CompareFailed(key, entry.modRevision, entry.value.clone());
    }

    private long remove(ApplyContext context, String key, Entry entry) {
        long revision = context.stamp();
        KeyValue before = keyValue(key, entry);
        entries.remove(key);
        unbind(key, entry);
        context.emit(new WatchEvent(revision, WatchEvent.Type.DELETE, KeyValue.deleted(key, revision), before, NAME));
        return revision;
    }

    private void bind(String key, Entry entry) {
        if (entry.leaseId != 0) {
            byLease.computeIfAbsent(entry.leaseId, id -> new TreeSet<>()).add(key);
        }
        if (entry.ttlMillis != 0) {
            withTtl.add(key);
        }
    }

    private void unbind(String key, Entry entry) {
        if (entry.leaseId != 0) {
            TreeSet<String> keys = byLease.get(entry.leaseId);
            if (keys != null && keys.remove(key) && keys.isEmpty()) {
                byLease.remove(entry.leaseId);
            }
        }
        if (entry.ttlMillis != 0) {
            withTtl.remove(key);
        }
    }

    /** The key as watches see it: the lease's client as holder (empty when unbound), the value shared, never changed. */
    private KeyValue keyValue(String key, Entry entry) {
        Lease lease = entry.leaseId == 0 ? null : leases.get(entry.leaseId);
        return new KeyValue(key, lease == null ? "" : lease.clientId(), entry.value, entry.leaseId,
                entry.createRevision, entry.modRevision, entry.version);
    }

    private Result recall(Request request) {
        Answer answer = request.requestId() == 0 ? null : recentRequests.recall(request);
        if (answer == null) {
            return null;
        }
        String key = request.key();
        return switch (answer.outcome()) {
            case PUT -> new Put(key, answer.revision(), answer.prevModRevision(), answer.version());
            case COMPARE_FAILED -> {
                Entry entry = entries.get(key);
                boolean unchanged = entry != null && entry.modRevision == answer.revision();
                yield new CompareFailed(key, answer.revision(), unchanged ? entry.value.clone() : null);
            }
            case DELETED -> new Deleted(key, true, answer.revision());
            case ABSENT -> new Deleted(key, false, 0);
            default -> throw new IllegalStateException("unknown remembered outcome " + answer.outcome());
        };
    }

    private Result remember(Request request, KvResult result) {
        if (request.requestId() != 0) {
            recentRequests.remember(request, answerOf(result));
        }
        return result;
    }

    private static Answer answerOf(KvResult result) {
        if (result instanceof Put p) {
            return new Answer(PUT, p.revision(), p.prevModRevision(), p.version());
        } else if (result instanceof CompareFailed f) {
            return new Answer(COMPARE_FAILED, f.modRevision(), 0, 0);
        } else if (result instanceof Deleted d) {
            return d.existed() ? new Answer(DELETED, d.revision(), 0, 0) : new Answer(ABSENT, 0, 0, 0);
        }
        throw new IllegalArgumentException("not a remembered answer: " + result);
    }

    /**
     * The lease ended: every key bound to it goes, in key order, each with its DELETE. The keys
     * are not added to {@code released}: they were not held, and a lease may bind many.
     */
    @Override
    public void leaseEnded(ApplyContext context, long leaseId, List<String> released) {
        TreeSet<String> keys = byLease.remove(leaseId);
        if (keys == null) {
            return;
        }
        for (String key : keys) {
            remove(context, key, entries.get(key));
        }
    }

    // ---- transactions --------------------------------------------------------------------------

    @Override
    public String checkCompare(TxnCompare compare) {
        if (compare.target() != TxnCompare.Target.VALUE) {
            return null;
        }
        if (compare.value() == null) {
            return "value is required to compare a key's value";
        }
        return compare.value().length > MAX_VALUE_BYTES
                ? "value must be at most " + MAX_VALUE_BYTES + " bytes, got " + compare.value().length : null;
    }

    @Override
    public boolean compare(TxnCompare compare) {
        Entry entry = entries.get(compare.key());
        return switch (compare.target()) {
            case VALUE -> entry != null && compare.relation().holds(Arrays.compareUnsigned(entry.value, compare.value()));
            case MOD_REVISION -> compare.relation().holds(Long.compare(entry == null ? 0 : entry.modRevision, compare.number()));
            case CREATE_REVISION -> compare.relation().holds(Long.compare(entry == null ? 0 : entry.createRevision, compare.number()));
            case VERSION -> compare.relation().holds(Long.compare(entry == null ? 0 : entry.version, compare.number()));
        };
    }

    @Override
    public String checkOperation(Command operation) {
        if (operation instanceof KvPut p) {
            String problem = Transactional.ownRequestId(p.requestId());
            return problem != null ? problem : checkPut(p.key(), p.value(), p.leaseId(), p.ttlMillis());
        } else if (operation instanceof KvDelete d) {
            if (d.requestId() != 0) {
                return Transactional.ownRequestId(d.requestId());
            }
            return d.expectedModRevision() != KvDelete.ANY_REVISION ? "expected_mod_revision must be -1 in a transaction, got "
                    + d.expectedModRevision() + ": compare the key's mod revision instead" : Limits.checkKey("key", d.key());
        }
        return "a key-value " + operation.getClass().getSimpleName() + " cannot be part of a transaction (puts and deletes can)";
    }

    /** Each put is admitted with the keys the operations before it create and delete counted. */
    @Override
    public Refusal admit(List<Command> operations) {
        HashSet<String> created = new HashSet<>();
        HashSet<String> deleted = new HashSet<>();
        int keys = entries.size();
        for (int i = 0; i < operations.size(); i++) {
            Command operation = operations.get(i);
            String key = operation instanceof KvPut p ? p.key() : ((KvDelete) operation).key();
            boolean present = created.contains(key) || (entries.containsKey(key) && !deleted.contains(key));
            if (operation instanceof KvPut p) {
                Result.Rejected refused = admitPut(p.leaseId(), !present, keys);
                if (refused != null) {
                    return new Refusal(i, refused);
                }
                if (!present) {
                    keys++;
                    created.add(key);
                    deleted.remove(key);
                }
            } else if (present) {
                keys--;
                created.remove(key);
                deleted.add(key);
            }
        }
        return null;
    }

    @Override
    public TxnResult.Done applyOperation(ApplyContext context, Command operation) {
        if (operation instanceof KvPut p) {
            Put put = put(context, p.key(), p.value(), p.leaseId(), p.ttlMillis());
            return new TxnResult.Done(put.revision(), true, put.prevModRevision(), put.version());
        }
        Deleted deleted = delete(context, ((KvDelete) operation).key());
        return new TxnResult.Done(deleted.revision(), deleted.existed(), 0, 0);
    }

    // ---- reads ---------------------------------------------------------------------------------

    /** The key, or null when it is absent. */
    public KvView get(String key) {
        Entry entry = entries.get(key);
        return entry == null ? null : view(key, entry);
    }

    /**
     * Keys that start with {@code prefix} ("" = every key) and come after {@code afterKey}
     * ("" or null = from the first), in key order (Java string order, as every table lists
     * names), at most {@code limit}, and whether more remain.
     *
     * @throws IllegalArgumentException for a limit below 1
     */
    public KvPage page(String prefix, String afterKey, int limit) {
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be at least 1, got " + limit);
        }
        prefix = prefix == null ? "" : prefix;
        var tail = afterKey == null || afterKey.isEmpty() || afterKey.compareTo(prefix) < 0
                ? entries.tailMap(prefix, true) : entries.tailMap(afterKey, false);
        List<KvView> found = new ArrayList<>(Math.min(limit, 64));
        for (Map.Entry<String, Entry> e : tail.entrySet()) {
            if (!e.getKey().startsWith(prefix)) {
                break;
            }
            if (found.size() == limit) {
                return new KvPage(found, true);
            }
            found.add(view(e.getKey(), e.getValue()));
        }
        return new KvPage(found, false);
    }

    public int keyCount() {
        return entries.size();
    }

    /** The most keys this store holds. */
    public int maxKeys() {
        return maxKeys;
    }

    /** Every key with a TTL, in key order, with the put its expiry must name (for the leader's expiry loop). */
    public List<KvTtl> ttlKeys() {
        List<KvTtl> ttls = new ArrayList<>(withTtl.size());
        for (String key : withTtl) {
            Entry entry = entries.get(key);
            ttls.add(new KvTtl(key, entry.modRevision, entry.ttlMillis));
        }
        return ttls;
    }

    /** The keys bound to lease {@code leaseId}, in key order. */
    public List<String> keysOf(long leaseId) {
        TreeSet<String> keys = byLease.get(leaseId);
        return keys == null ? List.of() : List.copyOf(keys);
    }

    private static KvView view(String key, Entry entry) {
        return new KvView(key, entry.value.clone(), entry.createRevision, entry.modRevision, entry.version,
                entry.leaseId, entry.ttlMillis);
    }

    // ---- snapshot section ------------------------------------------------------------------------

    /**
     * Keys in key order (value, create and mod revisions, version, lease, TTL), then the recent
     * requests with their answers, oldest first.
     */
    @Override
    public void writeSnapshot(DataOutputStream out) throws IOException {
        out.writeInt(entries.size());
        for (Map.Entry<String, Entry> e : entries.entrySet()) {
            Entry entry = e.getValue();
            Wire.writeString(out, e.getKey());
            Wire.writeBytes(out, entry.value);
            out.writeLong(entry.createRevision);
            out.writeLong(entry.modRevision);
            out.writeLong(entry.version);
            out.writeLong(entry.leaseId);
            out.writeLong(entry.ttlMillis);
        }
        out.writeInt(recentRequests.size());
        for (Map.Entry<Request, Answer> e : recentRequests.entries().entrySet()) {
            Wire.writeString(out, e.getKey().key());
            out.writeInt(e.getKey().op());
            out.writeLong(e.getKey().requestId());
            out.writeInt(e.getValue().outcome());
            out.writeLong(e.getValue().revision());
            out.writeLong(e.getValue().prevModRevision());
            out.writeLong(e.getValue().version());
        }
    }

    /**
     * Snapshots written before the store have no section for it, and it starts empty. A key that
     * breaks a rule apply keeps (a bad key or size, revisions out of order, a lease that does not
     * exist) is refused, naming the key.
     */
    @Override
    public void readSnapshot(DataInputStream in, int formatVersion, Leases leases) throws IOException {
        if (formatVersion < 3) {
            return; // unframed: written long before the store
        }
        int count = Wire.count(in, "key");
        if (count > MAX_KEYS) {
            throw new SnapshotFormatException("snapshot is corrupt: " + count + " keys, over the limit of " + MAX_KEYS);
        }
        String previous = null;
        for (int i = 0; i < count; i++) {
            String key = Wire.readString(in, MAX_FIELD_BYTES);
            String problem = Limits.checkKey("key", key);
            if (problem == null && previous != null && previous.compareTo(key) >= 0) {
                problem = "keys out of order after '" + previous + "'";
            }
            if (problem != null) {
                throw corrupt(key, problem);
            }
            int length = in.readInt();
            if (length < 0 || length > MAX_VALUE_BYTES) {
                throw corrupt(key, "a value of " + length + " bytes (at most " + MAX_VALUE_BYTES + ")");
            }
            Entry entry = new Entry();
            entry.value = new byte[length];
            in.readFully(entry.value);
            entry.createRevision = in.readLong();
            entry.modRevision = in.readLong();
            entry.version = in.readLong();
            entry.leaseId = in.readLong();
            entry.ttlMillis = in.readLong();
            if (entry.createRevision < 1 || entry.modRevision < entry.createRevision || entry.version < 1) {
                throw corrupt(key, "create revision " + entry.createRevision + ", mod revision " + entry.modRevision
                        + " and version " + entry.version);
            }
            problem = checkPut(key, entry.value, entry.leaseId, entry.ttlMillis);
            if (problem != null) {
                throw corrupt(key, problem);
            }
            if (entry.leaseId != 0 && leases.get(entry.leaseId) == null) {
                throw corrupt(key, "it refers to unknown lease " + entry.leaseId);
            }
            entries.put(key, entry);
            bind(key, entry);
            previous = key;
        }
        int requests = Wire.count(in, "key-value request");
        for (int i = 0; i < requests; i++) {
            Request request = new Request(Wire.readString(in, MAX_FIELD_BYTES), in.readInt(), in.readLong());
            Answer answer = new Answer(in.readInt(), in.readLong(), in.readLong(), in.readLong());
            if (request.op() < OP_PUT || request.op() > OP_DELETE || answer.outcome() < PUT || answer.outcome() > ABSENT) {
                throw corrupt(request.key(), "a remembered request of kind " + request.op() + " answered " + answer.outcome());
            }
            recentRequests.remember(request, answer);
        }
    }

    private static SnapshotFormatException corrupt(String key, String problem) {
        return new SnapshotFormatException("snapshot is corrupt: key-value key '" + key + "': " + problem);
    }
}
