package io.tenure.client;

import com.google.protobuf.ByteString;
import io.tenure.proto.v1.KvServiceGrpc;
import io.tenure.proto.v1.KvTxnAdd;
import io.tenure.proto.v1.KvTxnCompare;
import io.tenure.proto.v1.KvTxnDelete;
import io.tenure.proto.v1.KvTxnKind;
import io.tenure.proto.v1.KvTxnOp;
import io.tenure.proto.v1.KvTxnOpResult;
import io.tenure.proto.v1.KvTxnPut;
import io.tenure.proto.v1.KvTxnRelation;
import io.tenure.proto.v1.KvTxnRequest;
import io.tenure.proto.v1.KvTxnResponse;
import io.tenure.proto.v1.KvTxnSet;
import io.tenure.proto.v1.KvTxnTarget;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * A transaction over keys and counters (etcd's Txn), as {@link TenureKv#txn()} starts it: the
 * {@code if...} comparisons, then the {@code then...} operations applied when every comparison
 * holds, or the {@code else...} operations when one does not; all of them or none, at one point
 * of the log, each change with its usual watch event.
 *
 * <pre>{@code
 * KvTransaction.Outcome outcome = kv.txn()
 *         .ifModRevision("config/mode", Relation.EQUAL, seen.modRevision())
 *         .ifCounter("config/epoch", Relation.LESS, 10)
 *         .thenPut("config/mode", "draining")
 *         .thenDelete("config/lock-hint")
 *         .thenAdd("config/epoch", 1)
 *         .elseAdd("config/conflicts", 1)
 *         .commit();
 * if (outcome.succeeded()) { ... }
 * }</pre>
 *
 * <p>A comparison of something that does not exist sees revisions and a version of 0 (and a
 * counter that does not exist reads 0); the value of an absent key never matches. A transaction
 * is applied once even when its call is retried after a lost answer or on another member after a
 * failover. At most 128 comparisons and 128 operations per branch. Refused, changing nothing:
 * {@link InvalidArgumentException} for bad input (naming the comparison or operation and its
 * field), {@link LeaseNotFoundException} for a put bound to a lease that ended,
 * {@link FailedPreconditionException} for an operation the store refuses (a new key over its key
 * limit, an add that leaves the 64-bit range).
 *
 * <p>A builder: not thread-safe; {@link #commit()} may be called again, as another transaction.
 */
public final class KvTransaction {
    /** The most comparisons, and the most operations in each branch. */
    public static final int MAX_ENTRIES = 128;

    /** How the compared target stands to the operand for a comparison to hold. */
    public enum Relation {
        EQUAL, NOT_EQUAL, LESS, GREATER
    }

    /** What a transaction did: whether every comparison held, the store's revision after it, and one result per applied operation. */
    public record Outcome(boolean succeeded, long revision, List<Result> results) {}

    /** What one applied operation did. */
    public sealed interface Result {}

    /** A put: its revision (the key's mod revision now), the mod revision replaced (0 = created) and the key's version. */
    public record Put(long revision, long prevModRevision, long version) implements Result {}

    /** A delete: {@code deleted} when the key existed, at {@code revision} (0 otherwise). */
    public record Delete(boolean deleted, long revision) implements Result {}

    /** An add or a set of a counter: its value before and after, at {@code revision}. */
    public record CounterChange(long previous, long value, long revision) implements Result {}

    private final TenureClient client;
    private final List<KvTxnCompare> compares = new ArrayList<>();
    private final List<KvTxnOp> success = new ArrayList<>();
    private final List<KvTxnOp> failure = new ArrayList<>();

    KvTransaction(TenureClient client) {
        this.client = client;
    }

    /** Holds when key {@code key}'s value stands in {@code relation} to {@code value} (bytes compared unsigned, as etcd's). */
    public KvTransaction ifValue(String key, Relation relation, byte[] value) {
        TenureKv.checkValue("value", value);
        return compare(KvTxnKind.KV_TXN_KIND_KV, key, KvTxnTarget.KV_TXN_TARGET_VALUE, relation, 0, value);
    }

    /** {@link #ifValue(String, Relation, byte[])} of the value's UTF-8 bytes. */
    public KvTransaction ifValue(String key, Relation relation, String value) {
        return ifValue(key, relation, TenureKv.utf8(value));
    }

    /** Holds when key {@code key}'s mod revision (0 = absent) stands in {@code relation} to {@code modRevision}. */
    public KvTransaction ifModRevision(String key, Relation relation, long modRevision) {
        return compare(KvTxnKind.KV_TXN_KIND_KV, key, KvTxnTarget.KV_TXN_TARGET_MOD_REVISION, relation, modRevision, null);
    }

    /** Holds when key {@code key}'s create revision (0 = absent) stands in {@code relation} to {@code createRevision}. */
    public KvTransaction ifCreateRevision(String key, Relation relation, long createRevision) {
        return compare(KvTxnKind.KV_TXN_KIND_KV, key, KvTxnTarget.KV_TXN_TARGET_CREATE_REVISION, relation, createRevision, null);
    }

    /** Holds when key {@code key}'s version (0 = absent) stands in {@code relation} to {@code version}. */
    public KvTransaction ifVersion(String key, Relation relation, long version) {
        return compare(KvTxnKind.KV_TXN_KIND_KV, key, KvTxnTarget.KV_TXN_TARGET_VERSION, relation, version, null);
    }

    /** Holds when counter {@code name}'s value (0 when it does not exist) stands in {@code relation} to {@code value}. */
    public KvTransaction ifCounter(String name, Relation relation, long value) {
        return compare(KvTxnKind.KV_TXN_KIND_COUNTER, name, KvTxnTarget.KV_TXN_TARGET_VALUE, relation, value, null);
    }

    private KvTransaction compare(KvTxnKind kind, String key, KvTxnTarget target, Relation relation, long number, byte[] value) {
        TenureKv.checkKey(key);
        Objects.requireNonNull(relation, "relation");
        KvTxnCompare.Builder compare = KvTxnCompare.newBuilder().setKind(kind).setKey(key).setTarget(target)
                .setRelation(switch (relation) {
                    case EQUAL -> KvTxnRelation.KV_TXN_RELATION_EQUAL;
                    case NOT_EQUAL -> KvTxnRelation.KV_TXN_RELATION_NOT_EQUAL;
                    case LESS -> KvTxnRelation.KV_TXN_RELATION_LESS;
                    case GREATER -> KvTxnRelation.KV_TXN_RELATION_GREATER;
                }).setNumber(number);
        if (value != null) {
            compare.setValue(ByteString.copyFrom(value));
        }
        compares.add(compare.build());
        return this;
    }

    /** When every comparison holds: sets {@code key} to {@code value}, with no lease and no TTL. */
    public KvTransaction thenPut(String key, String value) {
        return add(success, put(key, TenureKv.utf8(value), 0, 0));
    }

    /** When every comparison holds: sets {@code key} to {@code value}, with no lease and no TTL. */
    public KvTransaction thenPut(String key, byte[] value) {
        return add(success, put(key, value, 0, 0));
    }

    /** When every comparison holds: sets {@code key} to {@code value}, to go {@code ttl} after (1 ms to 24 h). */
    public KvTransaction thenPut(String key, byte[] value, Duration ttl) {
        return add(success, put(key, value, 0, TenureKv.ttlMillis(ttl)));
    }

    /** When every comparison holds: sets {@code key} to {@code value}, bound to {@code lease}. */
    public KvTransaction thenPut(String key, byte[] value, Lease lease) {
        return add(success, put(key, value, Objects.requireNonNull(lease, "lease").id(), 0));
    }

    /** When every comparison holds: deletes {@code key}, whatever it is. */
    public KvTransaction thenDelete(String key) {
        return add(success, delete(key));
    }

    /** When every comparison holds: adds {@code delta} to counter {@code name}. */
    public KvTransaction thenAdd(String name, long delta) {
        return add(success, counterAdd(name, delta));
    }

    /** When every comparison holds: sets counter {@code name} to {@code value}. */
    public KvTransaction thenSet(String name, long value) {
        return add(success, counterSet(name, value));
    }

    /** When a comparison does not hold: sets {@code key} to {@code value}, with no lease and no TTL. */
    public KvTransaction elsePut(String key, String value) {
        return add(failure, put(key, TenureKv.utf8(value), 0, 0));
    }

    /** When a comparison does not hold: sets {@code key} to {@code value}, with no lease and no TTL. */
    public KvTransaction elsePut(String key, byte[] value) {
        return add(failure, put(key, value, 0, 0));
    }

    /** When a comparison does not hold: deletes {@code key}, whatever it is. */
    public KvTransaction elseDelete(String key) {
        return add(failure, delete(key));
    }

    /** When a comparison does not hold: adds {@code delta} to counter {@code name}. */
    public KvTransaction elseAdd(String name, long delta) {
        return add(failure, counterAdd(name, delta));
    }

    /** When a comparison does not hold: sets counter {@code name} to {@code value}. */
    public KvTransaction elseSet(String name, long value) {
        return add(failure, counterSet(name, value));
    }

    private KvTransaction add(List<KvTxnOp> branch, KvTxnOp op) {
        branch.add(op);
        return this;
    }

    private static KvTxnOp put(String key, byte[] value, long leaseId, long ttlMillis) {
        TenureKv.checkKey(key);
        TenureKv.checkValue("value", value);
        return KvTxnOp.newBuilder().setPut(KvTxnPut.newBuilder().setKey(key).setValue(ByteString.copyFrom(value))
                .setLeaseId(leaseId).setTtlMs(ttlMillis)).build();
    }

    private static KvTxnOp delete(String key) {
        TenureKv.checkKey(key);
        return KvTxnOp.newBuilder().setDelete(KvTxnDelete.newBuilder().setKey(key)).build();
    }

    private static KvTxnOp counterAdd(String name, long delta) {
        TenureKv.checkKey(name);
        return KvTxnOp.newBuilder().setAdd(KvTxnAdd.newBuilder().setCounter(name).setDelta(delta)).build();
    }

    private static KvTxnOp counterSet(String name, long value) {
        TenureKv.checkKey(name);
        return KvTxnOp.newBuilder().setSet(KvTxnSet.newBuilder().setCounter(name).setValue(value)).build();
    }

    /** Applies the transaction and waits for its outcome. */
    public Outcome commit() {
        return Futures.await(commit(FailoverCall.ON_TRANSPORT_THREAD), "transaction");
    }

    /**
     * {@link #commit()}, without blocking. The request names itself once: its retries, on this
     * member or another after a failover, are applied once and answered as the first.
     *
     * @throws IllegalArgumentException at once, for more than {@value #MAX_ENTRIES} comparisons or operations in a branch
     */
    public CompletableFuture<Outcome> commitAsync() {
        return commit(null);
    }

    /** {@code answers}: {@link FailoverCall#ON_TRANSPORT_THREAD} for {@link #commit()}, which only blocks on the result. */
    private CompletableFuture<Outcome> commit(Executor answers) {
        checkCount("comparisons", compares.size());
        checkCount("success operations", success.size());
        checkCount("failure operations", failure.size());
        KvTxnRequest request = KvTxnRequest.newBuilder().addAllCompare(compares).addAllSuccess(success).addAllFailure(failure)
                .setRequestId(client.nextAcquireRequest()).build();
        return client.call(KvServiceGrpc.getTxnMethod(), request, answers).thenApply(KvTransaction::outcome);
    }

    private static Outcome outcome(KvTxnResponse response) {
        List<Result> results = new ArrayList<>(response.getResultsCount());
        for (KvTxnOpResult r : response.getResultsList()) {
            results.add(switch (r.getResultCase()) {
                case PUT -> new Put(r.getPut().getRevision(), r.getPut().getPrevModRevision(), r.getPut().getVersion());
                case DELETE -> new Delete(r.getDelete().getDeleted(), r.getDelete().getRevision());
                case COUNTER -> new CounterChange(r.getCounter().getPrevious(), r.getCounter().getValue(), r.getCounter().getRevision());
                case RESULT_NOT_SET -> throw new IllegalStateException("the server answered an operation without its result");
            });
        }
        return new Outcome(response.getSucceeded(), response.getHeader().getRevision(), List.copyOf(results));
    }

    private static void checkCount(String what, int count) {
        if (count > MAX_ENTRIES) {
            throw new IllegalArgumentException("a transaction has at most " + MAX_ENTRIES + " " + what + ", got " + count);
        }
    }

}
