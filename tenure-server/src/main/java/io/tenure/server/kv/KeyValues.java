package io.tenure.server.kv;

import io.tenure.core.Limits;
import io.tenure.core.TenureState;
import io.tenure.core.access.Level;
import io.tenure.core.kernel.Command;
import io.tenure.core.kernel.Result;
import io.tenure.core.kernel.Txn;
import io.tenure.core.kernel.TxnResult;
import io.tenure.core.kv.KvCompareAndSet;
import io.tenure.core.kv.KvDelete;
import io.tenure.core.kv.KvPage;
import io.tenure.core.kv.KvPut;
import io.tenure.core.kv.KvResult;
import io.tenure.core.kv.KvTable;
import io.tenure.core.kv.KvView;
import io.tenure.server.Admission;
import io.tenure.server.Overloaded;
import io.tenure.server.PermissionDenied;
import io.tenure.server.RequestRejected;
import io.tenure.server.metrics.ServerMetrics;
import io.tenure.server.raft.Proposer;
import io.tenure.server.raft.TenureStateMachine;
import io.tenure.server.security.Permissions;
import io.tenure.server.security.Principal;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * The key-value store's operations, for every front end. A change is validated here (each refusal
 * names its field), admitted unless the member is behind, proposed through the log, and answered
 * with what apply decided; a change that names its request is applied once however often it is
 * retried. Reads are linearizable (after a read barrier). Keys with a TTL are expired by
 * {@link KeyExpiry}.
 */
public final class KeyValues {
    /** The most keys one list answers. */
    public static final int MAX_LIST = Limits.MAX_LIST;
    /**
     * The largest transaction, in bytes as written to the log: one log entry's worth (etcd's
     * request limit is of the same order), so that one transaction never crowds the Raft messages.
     */
    public static final int MAX_TXN_BYTES = 1 << 20;

    /** What a compare-and-set compares the key with. */
    public enum Compare {
        /** The key must be absent: a create-if-absent. */
        ABSENT,
        /** The key's mod revision must be the expected one (at least 1). */
        MOD_REVISION,
        /** The key must exist with exactly the expected value. */
        VALUE
    }

    /**
     * What a put answered: its revision, the mod revision of the value it replaced (0 when it
     * created the key) and the key's version after it.
     */
    public record Written(String key, long revision, long prevModRevision, long version) {
        public boolean created() {
            return prevModRevision == 0;
        }
    }

    /**
     * What a compare-and-set answered. Swapped: {@code modRevision} is the put's, with
     * {@code prevModRevision} and {@code version}. Not swapped: {@code modRevision} is the key's (0
     * when absent) and {@code value} its value, null when absent or, for the retry of one that
     * failed, when the key changed since.
     */
    public record Swap(String key, boolean swapped, long modRevision, long prevModRevision, long version, byte[] value) {}

    /**
     * What a delete answered: {@code deleted} at {@code revision}; or nothing changed, with
     * {@code compareFailed} when the expected mod revision did not match ({@code revision} is then
     * the key's mod revision, 0 when absent).
     */
    public record Removal(String key, boolean deleted, long revision, boolean compareFailed) {}

    /**
     * What a transaction answered: whether every comparison held ({@code succeeded}: the success
     * operations were applied, otherwise the failure ones), the operations of that branch with
     * what each did, in order, and the store's revision after it.
     */
    public record Transacted(boolean succeeded, List<Command> applied, List<TxnResult.Done> results, long revision) {}

    /** A key read from one state: {@code entry} is null when it is absent; {@code revision} is that state's. */
    public record Read(String key, KvView entry, long revision) {}

    /** Keys read from one state, in key order; {@code more} when others with the prefix follow {@code nextAfterKey}. */
    public record Listing(List<KvView> entries, boolean more, String nextAfterKey, long revision) {}

    private final Proposer proposer;
    private final TenureStateMachine stateMachine;
    private final Admission admission;
    private final ServerMetrics metrics;
    private final KeyExpiry expiry;
    private final Permissions permissions;
    /** The kind its permissions name. */
    private static final String KIND = Permissions.kind(KvTable.NAME);

    public KeyValues(Proposer proposer, TenureStateMachine stateMachine, Permissions permissions, Admission admission, ServerMetrics metrics, KeyExpiry expiry) {
        this.proposer = proposer;
        this.stateMachine = stateMachine;
        this.permissions = permissions;
        this.admission = admission;
        this.metrics = metrics;
        this.expiry = expiry;
    }

    /** The leader's expiry of keys with a TTL, and every member's deadlines for them. */
    public KeyExpiry expiry() {
        return expiry;
    }

    /**
     * Sets {@code key} to {@code value}, bound to lease {@code leaseId} (0 = none) or with a TTL of
     * {@code ttlMillis} (0 = none), not both.
     *
     * @param requestId the client's id for this put, the same on its retries (0 = none)
     */
    public CompletableFuture<Written> put(Principal caller, String key, byte[] value, long leaseId, long ttlMillis, long requestId) {
        String[] problem = checkPut(key, value, leaseId, ttlMillis);
        return change("put", problem, () -> requireWrite(caller, key, leaseId), new KvPut(key, value, leaseId, ttlMillis, requestId), result -> {
            if (result instanceof KvResult.Put p) {
                return new Written(p.key(), p.revision(), p.prevModRevision(), p.version());
            }
            return null;
        }, written -> "put");
    }

    /**
     * Sets {@code key} to {@code value}, as {@link #put} does, if it is as {@code compare} expects:
     * absent; at mod revision {@code expectedModRevision}; or with value {@code expectedValue}.
     */
    public CompletableFuture<Swap> compareAndSet(Principal caller, String key, Compare compare, long expectedModRevision, byte[] expectedValue,
                                                 byte[] value, long leaseId, long ttlMillis, long requestId) {
        String[] problem = checkPut(key, value, leaseId, ttlMillis);
        if (problem == null) {
            problem = checkComparison(compare, expectedModRevision, expectedValue);
        }
        long revision = compare == Compare.ABSENT ? 0 : compare == Compare.MOD_REVISION ? expectedModRevision : -1;
        KvCompareAndSet command = new KvCompareAndSet(key, revision, compare == Compare.VALUE ? expectedValue : null, value,
                leaseId, ttlMillis, requestId);
        return change("compare_and_set", problem, () -> requireWrite(caller, key, leaseId), command, result -> {
            if (result instanceof KvResult.Put p) {
                return new Swap(p.key(), true, p.revision(), p.prevModRevision(), p.version(), null);
            } else if (result instanceof KvResult.CompareFailed f) {
                return new Swap(f.key(), false, f.modRevision(), 0, 0, f.value());
            }
            return null;
        }, swap -> swap.swapped() ? "put" : "compare_failed");
    }

    /** Deletes {@code key}: always with {@code expectedModRevision} -1, else only at that mod revision (0: only when absent). */
    public CompletableFuture<Removal> delete(Principal caller, String key, long expectedModRevision, long requestId) {
        String[] problem = field("key", Limits.checkKey("key", key));
        if (problem == null && expectedModRevision < KvDelete.ANY_REVISION) {
            problem = new String[] {"expected_mod_revision", "expected_mod_revision must be at least 0 (0 = the key must be absent), got "
                    + expectedModRevision};
        }
        return change("delete", problem, () -> permissions.require(caller, KIND, key, Level.WRITE), new KvDelete(key, expectedModRevision, requestId), result -> {
            if (result instanceof KvResult.Deleted d) {
                return new Removal(d.key(), d.existed(), d.revision(), false);
            } else if (result instanceof KvResult.CompareFailed f) {
                return new Removal(f.key(), false, f.modRevision(), true);
            }
            return null;
        }, removal -> removal.deleted() ? "deleted" : removal.compareFailed() ? "compare_failed" : "absent");
    }

    /**
     * Applies transaction {@code txn} (its comparisons of keys and counters, then one branch of
     * puts, deletes, adds and sets), all or nothing. Bad input is refused here, before the log, by
     * the check apply makes: the message names the comparison or operation and its field.
     */
    public CompletableFuture<Transacted> transact(Principal caller, Txn txn) {
        // A put's fields first, as a put's own are checked (named as the front ends name them).
        String[] refused = checkPuts(txn.success(), "success");
        if (refused == null) {
            refused = checkPuts(txn.failure(), "failure");
        }
        if (refused == null) {
            String problem = stateMachine.read(s -> s.checkTransaction(txn));
            // The message starts with where the problem is: "compare[2].key ...", "success[0] (KvPut): ...".
            refused = problem == null ? null : new String[] {problem.split("[ :]", 2)[0], problem};
        }
        if (refused == null) {
            int bytes = TenureState.CODEC.encode(txn).length;
            if (bytes > MAX_TXN_BYTES) {
                refused = new String[] {"request", "the transaction is " + bytes + " bytes as written to the log, over the limit of "
                        + MAX_TXN_BYTES + ": split it"};
            }
        }
        return change("txn", refused, () -> requireAll(caller, txn), txn, result -> {
            if (result instanceof TxnResult r) {
                return new Transacted(r.succeeded(), r.succeeded() ? txn.success() : txn.failure(), r.operations(), r.revision());
            }
            return null;
        }, transacted -> transacted.succeeded() ? "succeeded" : "failed");
    }

    /** Checks that {@code caller} may write {@code key}, with lease {@code leaseId} when one (0: none) is bound to it. */
    private void requireWrite(Principal caller, String key, long leaseId) {
        if (leaseId == 0) {
            permissions.require(caller, KIND, key, Level.WRITE);
        } else {
            permissions.requireWithLease(caller, leaseId, KIND, key);
        }
    }

    /** Checks that {@code caller} may read every key the transaction compares and write every one it may change. */
    private void requireAll(Principal caller, Txn txn) {
        for (io.tenure.core.kernel.TxnCompare compare : txn.compares()) {
            permissions.require(caller, Permissions.kind(compare.kind()), compare.key(), Level.READ);
        }
        for (List<Command> branch : List.of(txn.success(), txn.failure())) {
            for (Command operation : branch) {
                if (operation instanceof KvPut put) {
                    requireWrite(caller, put.key(), put.leaseId());
                } else if (operation instanceof KvDelete delete) {
                    permissions.require(caller, KIND, delete.key(), Level.WRITE);
                } else if (operation instanceof io.tenure.core.counter.CounterAdd add) {
                    permissions.require(caller, Permissions.kind(io.tenure.core.counter.CounterTable.NAME), add.key(), Level.WRITE);
                } else if (operation instanceof io.tenure.core.counter.CounterSet set) {
                    permissions.require(caller, Permissions.kind(io.tenure.core.counter.CounterTable.NAME), set.key(), Level.WRITE);
                } else if (operation instanceof io.tenure.core.counter.CounterCompareAndSet cas) {
                    permissions.require(caller, Permissions.kind(io.tenure.core.counter.CounterTable.NAME), cas.key(), Level.WRITE);
                } else {
                    permissions.require(caller, Permissions.EVERY_KIND, "", Level.WRITE);
                }
            }
        }
    }

    /**
     * Proposes {@code command} once its input is well formed ({@code problem} null) and
     * {@code permitted} did not throw {@link PermissionDenied}.
     */
    private <T> CompletableFuture<T> change(String op, String[] problem, Runnable permitted, Command command, Function<Result, T> answer,
                                            Function<T, String> outcome) {
        long started = System.nanoTime();
        CompletableFuture<T> result = (problem == null ? CompletableFuture.<Void>completedFuture(null)
                : CompletableFuture.<Void>failedFuture(RequestRejected.invalid(problem[0], problem[1])))
                .thenCompose(ok -> {
                    try {
                        permitted.run();
                        admission.admit("kv");
                    } catch (Overloaded | PermissionDenied e) {
                        return CompletableFuture.failedFuture(e);
                    }
                    return proposer.propose(command);
                })
                .thenApply(applied -> {
                    T answered = answer.apply(applied.result());
                    if (answered == null) {
                        throw RequestRejected.of(applied);
                    }
                    return answered;
                });
        result.whenComplete((answered, error) -> {
            metrics.latency("kv_" + op, System.nanoTime() - started);
            metrics.kvChange(op, error != null ? ServerMetrics.failureResult(error) : outcome.apply(answered));
        });
        return result;
    }

    /** The field at fault and the problem, or null: a put's fields, checked as apply checks them. */
    private static String[] checkPut(String key, byte[] value, long leaseId, long ttlMillis) {
        String[] problem = field("key", Limits.checkKey("key", key));
        if (problem != null) {
            return problem;
        }
        if (value != null && value.length > KvTable.MAX_VALUE_BYTES) {
            return new String[] {"value", "value must be at most " + KvTable.MAX_VALUE_BYTES + " bytes, got " + value.length};
        }
        if (leaseId < 0) {
            return new String[] {"lease_id", "lease_id must be a lease's id (positive) or 0 (none), got " + leaseId};
        }
        if (ttlMillis < 0 || ttlMillis > Limits.MAX_TTL_MILLIS) {
            return new String[] {"ttl_ms", "ttl_ms must be 0 (none) or between 1 and " + Limits.MAX_TTL_MILLIS + ", got " + ttlMillis};
        }
        if (leaseId != 0 && ttlMillis != 0) {
            return new String[] {"ttl_ms", "ttl_ms and lease_id are exclusive: a key is bound to a lease or has a TTL, got lease "
                    + leaseId + " and " + ttlMillis + " ms"};
        }
        return null;
    }

    /** The first put of a transaction's branch whose fields are not well formed, named {@code success[2].put.ttl_ms}. */
    private static String[] checkPuts(List<Command> operations, String branch) {
        for (int i = 0; i < operations.size(); i++) {
            if (operations.get(i) instanceof KvPut p) {
                String[] problem = checkPut(p.key(), p.value(), p.leaseId(), p.ttlMillis());
                if (problem != null) {
                    return new String[] {branch + "[" + i + "].put." + problem[0], branch + "[" + i + "] (KvPut): " + problem[1]};
                }
            }
        }
        return null;
    }

    private static String[] checkComparison(Compare compare, long expectedModRevision, byte[] expectedValue) {
        if (compare == null) {
            return new String[] {"compare", "compare must say what to compare: absent, mod_revision or value"};
        }
        return switch (compare) {
            case ABSENT -> null;
            case MOD_REVISION -> expectedModRevision < 1 ? new String[] {"expected_mod_revision", "expected_mod_revision must be at least 1"
                    + " (compare with absent for a key that must not exist), got " + expectedModRevision} : null;
            case VALUE -> expectedValue == null ? new String[] {"expected_value", "expected_value is required to compare the value"}
                    : expectedValue.length > KvTable.MAX_VALUE_BYTES ? new String[] {"expected_value", "expected_value must be at most "
                    + KvTable.MAX_VALUE_BYTES + " bytes, got " + expectedValue.length} : null;
        };
    }

    private static String[] field(String field, String problem) {
        return problem == null ? null : new String[] {field, problem};
    }

    /** Key {@code key}, read linearizably. */
    public CompletableFuture<Read> read(Principal caller, String key) {
        return RequestRejected.unless("key", Limits.checkKey("key", key))
                .thenCompose(ok -> permissions.allowed(caller, KIND, key, Level.READ))
                .thenCompose(ok -> admission.admitRead(proposer::readBarrier))
                .thenApply(ignored -> stateMachine.read(s -> new Read(key, s.primitive(KvTable.class).get(key), s.revision())));
    }

    /**
     * Keys that start with {@code prefix} and come after {@code afterKey} ("" = from the first),
     * read linearizably, in key order.
     *
     * @param limit 1 to {@value #MAX_LIST}; 0 means {@link Limits#DEFAULT_LIST}
     */
    public CompletableFuture<Listing> list(Principal caller, String prefix, String afterKey, int limit) {
        return RequestRejected.unless("limit", Limits.checkListLimit("limit", limit))
                .thenCompose(ok -> permissions.allowed(caller, KIND, prefix == null ? "" : prefix, Level.READ))
                .thenCompose(ok -> admission.admitRead(proposer::readBarrier))
                .thenApply(ignored -> stateMachine.read(s -> {
                    KvPage page = s.primitive(KvTable.class).page(prefix, afterKey, Limits.listLimit(limit));
                    return new Listing(page.entries(), page.more(), page.lastKey(), s.revision());
                }));
    }
}
