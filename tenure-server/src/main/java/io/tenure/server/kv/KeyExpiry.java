package io.tenure.server.kv;

import io.tenure.core.Limits;
import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.Command;
import io.tenure.core.kernel.Result;
import io.tenure.core.kernel.Txn;
import io.tenure.core.kernel.TxnResult;
import io.tenure.core.kv.KvCompareAndSet;
import io.tenure.core.kv.KvDelete;
import io.tenure.core.kv.KvExpire;
import io.tenure.core.kv.KvPut;
import io.tenure.core.kv.KvResult;
import io.tenure.core.kv.KvTable;
import io.tenure.core.kv.KvTtl;
import io.tenure.core.kv.KvView;
import io.tenure.server.metrics.ServerMetrics;
import io.tenure.server.raft.Entry;
import io.tenure.server.raft.Proposer;
import io.tenure.server.raft.TenureStateMachine;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * Expires keys whose time to live passed, exactly as leases expire: on the leader's monotonic
 * clock, through the log (I4). Every member records, as it applies a put or compare-and-set with
 * a TTL, when it applied it ({@link KeyDeadlines}); the ready leader proposes, every
 * {@link #SWEEP_MILLIS}, a {@link KvExpire} naming the put's mod revision for each key whose TTL
 * has passed since. The expiry is conditional on that revision, so a put in between refreshes
 * the key and the late expiry changes nothing; an expiry proposed by the leader of an earlier
 * term is skipped when it commits in a later one (the new leader has its own deadlines), and a
 * key still there {@link #RETRY_NANOS} later is proposed again. A new leader starts counting now
 * for every key with a TTL it has no deadline for, so a key never goes early, and goes at most
 * one TTL plus a sweep late after a failover.
 */
public final class KeyExpiry implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(KeyExpiry.class);
    /** How often the leader looks for keys whose TTL passed: a key goes at most this late (after its TTL). */
    static final long SWEEP_MILLIS = 100;
    /** How long before an expiry that did not take effect is proposed again. */
    static final long RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

    private final Proposer proposer;
    private final TenureStateMachine stateMachine;
    private final BooleanSupplier leading;
    private final LongSupplier nanoClock;
    private final ServerMetrics metrics;
    /** Guarded by itself: the apply thread records, the sweep reads, the leader's scan adds. */
    private final KeyDeadlines deadlines = new KeyDeadlines();
    private final ScheduledFuture<?> loop;

    public KeyExpiry(Proposer proposer, TenureStateMachine stateMachine, BooleanSupplier leading, LongSupplier nanoClock,
                     ServerMetrics metrics, ScheduledExecutorService timer) {
        this.proposer = proposer;
        this.stateMachine = stateMachine;
        this.leading = leading;
        this.nanoClock = nanoClock;
        this.metrics = metrics;
        this.loop = timer == null ? null
                : timer.scheduleWithFixedDelay(this::sweep, SWEEP_MILLIS, SWEEP_MILLIS, TimeUnit.MILLISECONDS);
    }

    /** One without its loop, proposing nothing: for tests that call {@link #due()} with a fake clock. */
    static KeyExpiry unscheduled(TenureStateMachine stateMachine, BooleanSupplier leading, LongSupplier nanoClock) {
        return new KeyExpiry(null, stateMachine, leading, nanoClock, null, null);
    }

    /**
     * An entry was applied here (on every member, leader or not): records when each put with a TTL
     * was applied, and forgets the deadline of each key that was deleted, expired or put without one.
     */
    public void applied(Entry entry, List<Applied> results) {
        long now = nanoClock.getAsLong();
        List<Command> commands = entry.commands();
        synchronized (deadlines) {
            for (int slot = 0; slot < results.size(); slot++) {
                Result result = results.get(slot).result();
                if (result instanceof KvResult.Put put) {
                    put(put.key(), put.revision(), ttlOf(commands.get(slot)), now);
                } else if (result instanceof KvResult.Deleted deleted && deleted.existed()) {
                    deadlines.forget(deleted.key(), deleted.revision());
                } else if (result instanceof KvResult.Expired expired) {
                    deadlines.forget(expired.key(), expired.revision());
                } else if (result instanceof TxnResult txn && commands.get(slot) instanceof Txn sent) {
                    applied(txn, txn.succeeded() ? sent.success() : sent.failure(), now);
                }
            }
        }
    }

    /** The puts and deletes of a transaction's branch that was applied, as if each came on its own. */
    private void applied(TxnResult txn, List<Command> branch, long now) {
        for (int i = 0; i < txn.operations().size(); i++) {
            TxnResult.Done done = txn.operations().get(i);
            if (branch.get(i) instanceof KvPut put) {
                put(put.key(), done.revision(), put.ttlMillis(), now);
            } else if (branch.get(i) instanceof KvDelete delete && done.changed()) {
                deadlines.forget(delete.key(), done.revision());
            }
        }
    }

    private void put(String key, long revision, long ttl, long now) {
        if (ttl > 0) {
            deadlines.put(key, revision, ttl, now);
        } else {
            deadlines.forget(key, revision);
        }
    }

    private static long ttlOf(Command command) {
        if (command instanceof KvPut put) {
            return put.ttlMillis();
        } else if (command instanceof KvCompareAndSet cas) {
            return cas.ttlMillis();
        }
        return 0;
    }

    /** This member became the ready leader ({@code true}) or stopped leading: a new leader counts unknown keys from now. */
    public void leadership(boolean ready) {
        if (ready) {
            countUnknownKeysFromNow();
        }
    }

    /** Keys with a TTL this member has no deadline for start counting now (the new leader's rule, as for leases). */
    void countUnknownKeysFromNow() {
        List<KvTtl> ttls = stateMachine.read(s -> s.primitive(KvTable.class).ttlKeys());
        long now = nanoClock.getAsLong();
        synchronized (deadlines) {
            for (KvTtl ttl : ttls) {
                deadlines.startIfUnknown(ttl.key(), ttl.modRevision(), ttl.ttlMillis(), now);
            }
        }
    }

    /**
     * The expiries the leader should propose now: keys whose deadline passed and that are still at
     * the put the deadline counts from (read from the applied state). A deadline whose key moved on
     * unseen (a snapshot installed here) is dropped, and a newer put with a TTL starts counting now.
     * Empty unless this member is the ready leader.
     */
    List<KvExpire> due() {
        if (!leading.getAsBoolean()) {
            return List.of();
        }
        long now = nanoClock.getAsLong();
        List<KeyDeadlines.Due> due;
        synchronized (deadlines) {
            due = deadlines.due(now, RETRY_NANOS, Limits.MAX_BATCH);
        }
        if (due.isEmpty()) {
            return List.of();
        }
        List<KvExpire> expiries = new ArrayList<>(due.size());
        stateMachine.read(state -> {
            KvTable table = state.primitive(KvTable.class);
            synchronized (deadlines) {
                for (KeyDeadlines.Due d : due) {
                    KvView key = table.get(d.key());
                    if (key != null && key.modRevision() == d.modRevision() && key.ttlMillis() > 0) {
                        expiries.add(new KvExpire(d.key(), d.modRevision()));
                        continue;
                    }
                    deadlines.drop(d.key(), d.modRevision());
                    if (key != null && key.ttlMillis() > 0) {
                        deadlines.startIfUnknown(key.key(), key.modRevision(), key.ttlMillis(), now);
                    }
                }
            }
            return null;
        });
        return expiries;
    }

    private void sweep() {
        try {
            for (KvExpire expire : due()) {
                proposer.propose(expire).whenComplete((applied, error) -> {
                    if (error != null) {
                        LOG.debug("event=key_expiry_not_committed key=\"{}\" reason=\"{}\"", expire.key(), error.getMessage());
                        return;
                    }
                    boolean expired = applied.result() instanceof KvResult.Expired;
                    if (metrics != null) {
                        metrics.kvChange("expire", expired ? "expired" : "skipped");
                    }
                    if (expired) {
                        LOG.debug("event=key_expired key=\"{}\" mod_revision={}", expire.key(), expire.modRevision());
                    }
                });
            }
        } catch (RuntimeException e) {
            LOG.warn("event=key_expiry_loop_error reason=\"{}\"", e.toString());
        }
    }

    /**
     * Milliseconds until this member could expire the key's put at {@code modRevision}, or -1 when
     * it has no deadline for it (a follower that restarted, a key without a TTL).
     */
    public long remainingMillis(String key, long modRevision) {
        synchronized (deadlines) {
            return deadlines.knows(key, modRevision)
                    ? TimeUnit.NANOSECONDS.toMillis(deadlines.remaining(key, nanoClock.getAsLong())) : -1;
        }
    }

    /** Keys with a TTL this member keeps a deadline for. */
    public int known() {
        synchronized (deadlines) {
            return deadlines.size();
        }
    }

    @Override
    public void close() {
        if (loop != null) {
            loop.cancel(false);
        }
    }
}
