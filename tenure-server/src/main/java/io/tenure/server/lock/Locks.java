package io.tenure.server.lock;

import io.tenure.core.Limits;
import io.tenure.core.kernel.LeaseView;
import io.tenure.core.kernel.Result;
import io.tenure.core.lock.LockAcquire;
import io.tenure.core.lock.LockCancel;
import io.tenure.core.lock.LockDowngrade;
import io.tenure.core.lock.LockRelease;
import io.tenure.core.lock.LockResult;
import io.tenure.core.lock.LockTable;
import io.tenure.core.lock.LockView;
import io.tenure.server.Acquires;
import io.tenure.server.Admission;
import io.tenure.server.RequestIds;
import io.tenure.server.PermissionDenied;
import io.tenure.server.RequestRejected;
import io.tenure.server.security.Permissions;
import io.tenure.server.security.Principal;
import io.tenure.core.access.Level;
import io.tenure.server.ServerLimits;
import io.tenure.server.Waits;
import io.tenure.server.metrics.ServerMetrics;
import io.tenure.server.raft.Proposer;
import io.tenure.server.raft.TenureStateMachine;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;

/**
 * The lock's operations, for every front end: validation (once, against the core's limits), the
 * member's guards, the command proposed through the log, and the blocking wait of
 * ARCHITECTURE.md "The path of one Lock call". Front ends translate; they decide nothing.
 *
 * <p>A queued acquire parks its call in the member's {@link Waits}, under (lock, lease), on the
 * apply thread, by the answer of the command that queued it ({@link Acquires}, the path every
 * waiting primitive shares). Only the log answers it then: the grant that hands the lock over,
 * the withdrawal its timeout proposes ({@code LockCancel}; if the grant won that race the caller
 * gets the lock), or the end of its lease.
 *
 * <p>A call whose caller went away (cancelled, connection broken) is only forgotten here: nothing
 * goes through the log for it. A member cannot tell a caller that gave up from one that is
 * re-attaching the same wait on another member, or that already received the same grant through
 * another call (a retried acquire returns the same grant). Withdrawing that lease's wait, or
 * releasing "its undelivered grant", would then take the lock from a holder that goes on working
 * with its fencing token. What the lease waits for or holds stays bound to the lease: its client
 * withdraws explicitly ({@link #cancel}), releases, or stops keeping the lease alive.
 */
public final class Locks {
    private static final Logger LOG = LoggerFactory.getLogger(Locks.class);

    /** What a lock request returned: acquired with a token, or not, with the holder at the time. */
    public record Outcome(String key, boolean acquired, long fencingToken, String holder, int waiters) implements Acquires.Outcome {
        static Outcome granted(String key, long token) {
            return new Outcome(key, true, token, "", 0);
        }

        static Outcome of(LockResult.Cancelled withdrawn) {
            return new Outcome(withdrawn.key(), false, 0, withdrawn.holder(), withdrawn.waiters());
        }
    }

    private final Proposer proposer;
    private final TenureStateMachine stateMachine;
    private final Admission admission;
    private final ServerMetrics metrics;
    private final Acquires<Outcome> acquires;
    private final Permissions permissions;
    /** The kind its permissions name. */
    private static final String KIND = Permissions.kind(LockTable.NAME);

    public Locks(Proposer proposer, TenureStateMachine stateMachine, Permissions permissions, Waits waits, Admission admission, ScheduledExecutorService timer,
                 ServerMetrics metrics, ServerLimits limits) {
        this.admission = admission;
        this.proposer = proposer;
        this.stateMachine = stateMachine;
        this.metrics = metrics;
        this.permissions = permissions;
        this.acquires = new Acquires<>(new Acquires.Kind<>(LockTable.class, LockTable::waiterCount, LockCancel::new, Locks::decide,
                new Acquires.Wording("lock", "a lock", "locks")), new LockJournal(), proposer, stateMachine, permissions.userHolds(), waits, admission, timer, limits, metrics);
    }

    /**
     * Acquires {@code name} for the lease, waiting in the lock's FIFO queue.
     *
     * @param timeoutMs 0 = do not wait, positive = wait at most that long, -1 = until granted or the lease ends
     */
    public Acquires.Wait<Outcome> lock(Principal caller, String name, long leaseId, byte[] metadata, long timeoutMs) {
        return lock(caller, name, leaseId, metadata, timeoutMs, 0);
    }

    /**
     * {@link #lock(String, long, byte[], long)} for the client's acquire {@code requestId} (0 =
     * none): once that acquire ended, a copy of it is refused (see {@link LockAcquire#requestId}).
     */
    public Acquires.Wait<Outcome> lock(Principal caller, String name, long leaseId, byte[] metadata, long timeoutMs, long requestId) {
        return lock(caller, name, leaseId, metadata, timeoutMs, requestId, false);
    }

    /**
     * {@link #lock(String, long, byte[], long, long)}; with {@code enqueue}, the first phase of a
     * two-phase acquire: the lease joins the queue and the call is answered at once, acquired or
     * not with the waiters ahead ({@code timeoutMs} is not used). A later call for the same lease
     * waits for the grant, keeping the place.
     */
    public Acquires.Wait<Outcome> lock(Principal caller, String name, long leaseId, byte[] metadata, long timeoutMs, long requestId, boolean enqueue) {
        return lock(caller, name, leaseId, metadata, timeoutMs, requestId, enqueue, false);
    }

    /**
     * {@link #lock(String, long, byte[], long, long, boolean)} in read mode when {@code shared}
     * (beside other readers), else in write mode.
     */
    public Acquires.Wait<Outcome> lock(Principal caller, String name, long leaseId, byte[] metadata, long timeoutMs, long requestId, boolean enqueue,
                                       boolean shared) {
        Acquires.Wait<Outcome> wait = acquires.acquire(name, leaseId, timeoutMs, requestId, enqueue, () -> {
            checkName("name", name);
            String problem = Limits.checkMetadata("metadata", metadata);
            if (problem != null) {
                throw RequestRejected.invalid("metadata", problem);
            }
            permissions.requireWithLease(caller, leaseId, KIND, name);
        }, queue -> new LockAcquire(name, leaseId, metadata, queue, requestId, shared));
        permissions.trail().whenDone(wait.outcome(), caller, "acquire", KIND, name, leaseId, Outcome::fencingToken,
                o -> o.acquired() ? "granted" : "not_granted");
        return wait;
    }

    /** Acquires {@code name} only if it is free or already held by the lease. */
    public CompletableFuture<Outcome> tryLock(Principal caller, String name, long leaseId, byte[] metadata) {
        return tryLock(caller, name, leaseId, metadata, 0);
    }

    /** {@link #tryLock(String, long, byte[])} for the client's request {@code requestId} (0 = none). */
    public CompletableFuture<Outcome> tryLock(Principal caller, String name, long leaseId, byte[] metadata, long requestId) {
        return tryLock(caller, name, leaseId, metadata, requestId, false);
    }

    /** {@link #tryLock(String, long, byte[], long)} in read mode when {@code shared}. */
    public CompletableFuture<Outcome> tryLock(Principal caller, String name, long leaseId, byte[] metadata, long requestId, boolean shared) {
        return lock(caller, name, leaseId, metadata, 0, requestId, false, shared).outcome();
    }

    /** What a downgrade did: the grant's token (unchanged) and the readers granted beside it. */
    public record Downgrade(String key, long fencingToken, int readersGranted) {}

    /**
     * Turns the write-mode hold of (name, lease, token) into a read-mode hold, keeping the token;
     * readers queued at the head are granted beside it. A read-mode hold of the same grant
     * succeeds again; a stale token or a foreign lease fails with FAILED_PRECONDITION, an unknown
     * lease with NOT_FOUND.
     */
    public CompletableFuture<Downgrade> downgrade(Principal caller, String name, long leaseId, long fencingToken) {
        try {
            checkName("name", name);
            if (fencingToken <= 0) {
                throw RequestRejected.invalid("fencing_token", "fencing_token must be positive, got " + fencingToken);
            }
            permissions.requireWithLease(caller, leaseId, KIND, name);
        } catch (RequestRejected | PermissionDenied e) {
            return CompletableFuture.failedFuture(e);
        }
        String requestId = RequestIds.current();
        return proposer.propose(new LockDowngrade(name, leaseId, fencingToken)).thenApply(applied -> {
            if (applied.result() instanceof LockResult.Downgraded d) {
                LOG.debug("event=lock_downgraded lock=\"{}\" lease={} token={} readers_granted={} request_id={}", name, leaseId,
                        fencingToken, d.readersGranted(), requestId);
                return new Downgrade(d.key(), d.fencingToken(), d.readersGranted());
            }
            throw RequestRejected.of(applied);
        });
    }

    /**
     * Withdraws the lease's wait for {@code name}, as its client asks when it gives up waiting:
     * the lease leaves the queue, and calls parked for it, here and on any member, are answered
     * "not acquired". When the grant won the race the outcome is acquired, with the grant's token:
     * the lease holds the lock, and the client decides whether to release it. Cancelling a wait
     * that is not there changes nothing.
     */
    public CompletableFuture<Outcome> cancel(Principal caller, String name, long leaseId) {
        return cancel(caller, name, leaseId, 0);
    }

    /** {@link #cancel(String, long)} of the client's acquire {@code acquireRequest} (0 = none): its later copies are refused. */
    public CompletableFuture<Outcome> cancel(Principal caller, String name, long leaseId, long acquireRequest) {
        String requestId = RequestIds.current();
        return RequestRejected.unless("name", Limits.checkKey("name", name))
                .thenCompose(ok -> permissions.allowedWithLease(caller, leaseId, KIND, name))
                .thenCompose(ok -> proposer.propose(new LockCancel(name, leaseId, acquireRequest)))
                .thenApply(applied -> {
                    if (applied.result() instanceof LockResult.Granted g) {
                        return Outcome.granted(g.key(), g.fencingToken());
                    }
                    if (applied.result() instanceof LockResult.Cancelled withdrawn) {
                        LOG.info("event=lock_wait_cancelled lock=\"{}\" lease={} request_id={}", name, leaseId, requestId);
                        return Outcome.of(withdrawn);
                    }
                    throw RequestRejected.of(applied);
                });
    }

    /**
     * Releases a lock held by (name, lease, token); completes with the next holder's token (0 when
     * none). A stale token or a foreign lease fails with FAILED_PRECONDITION, an unknown lease with
     * NOT_FOUND; a retried release of the same grant succeeds again.
     */
    public CompletableFuture<Long> unlock(Principal caller, String name, long leaseId, long fencingToken) {
        try {
            checkName("key", name);
            if (fencingToken <= 0) {
                throw RequestRejected.invalid("fencing_token", "fencing_token must be positive, got " + fencingToken);
            }
            permissions.requireWithLease(caller, leaseId, KIND, name);
        } catch (RequestRejected | PermissionDenied e) {
            return CompletableFuture.failedFuture(e);
        }
        long started = System.nanoTime();
        String requestId = RequestIds.current();
        String holder = LOG.isDebugEnabled() ? holderOf(leaseId) : "";
        CompletableFuture<Long> release = proposer.propose(new LockRelease(name, leaseId, fencingToken)).whenComplete((applied, error) -> {
            metrics.latency("release", System.nanoTime() - started);
            if (error != null) {
                metrics.release(ServerMetrics.failureResult(error));
            } else {
                metrics.release(applied.result() instanceof LockResult.Released ? "released"
                        : applied.result() instanceof Result.Rejected r && (r.code() == Result.Code.FAILED_PRECONDITION
                        || r.code() == Result.Code.NOT_FOUND) ? "stale" : "rejected");
            }
        }).thenApply(applied -> {
            if (applied.result() instanceof LockResult.Released released) {
                LOG.debug("event=lock_released lock=\"{}\" holder=\"{}\" lease={} token={} next_token={} request_id={}", name, holder,
                        leaseId, fencingToken, released.nextFencingToken(), requestId);
                return released.nextFencingToken();
            }
            throw RequestRejected.of(applied);
        });
        permissions.trail().whenDone(release, caller, "release", KIND, name, leaseId, next -> fencingToken, next -> "released");
        return release;
    }

    // ---- reads (after a read barrier when they must be linearizable) ---------------------------

    /** Locks as read from one state: {@code revision} is that state's, so a watch from revision + 1 misses nothing. */
    public record Snapshot(List<LockView> locks, boolean more, long revision) {}

    /**
     * The lock (an empty list when it is free), read linearizably: after a read barrier, so it
     * reflects every write acknowledged before the call, with the revision of the state read.
     */
    public CompletableFuture<Snapshot> read(Principal caller, String name) {
        return RequestRejected.unless("name", Limits.checkKey("name", name))
                .thenCompose(ok -> permissions.allowed(caller, KIND, name, Level.READ))
                .thenCompose(ok -> admission.admitRead(proposer::readBarrier))
                .thenApply(ignored -> current(name));
    }

    /** The lock's holder and queue as this member has applied them (no read barrier), or null when it is free. */
    public LockView describe(String name) {
        return stateMachine.read(s -> s.primitive(LockTable.class).lock(name));
    }

    /** The lock as this member has applied it, without a read barrier (a hint, not a linearizable read). */
    public Snapshot current(String name) {
        return stateMachine.read(s -> {
            LockView lock = s.primitive(LockTable.class).lock(name);
            return new Snapshot(lock == null ? List.of() : List.of(lock), false, s.revision());
        });
    }

    /**
     * Held locks whose names start with {@code prefix}, in name order, at most {@code limit}
     * (0 = {@link Limits#DEFAULT_LIST}), read linearizably.
     */
    public CompletableFuture<Snapshot> list(Principal caller, String prefix, int limit) {
        int max = Limits.listLimit(limit);
        return RequestRejected.unless("limit", Limits.checkListLimit("limit", limit))
                .thenCompose(ok -> permissions.allowed(caller, KIND, prefix, Level.READ))
                .thenCompose(ok -> admission.admitRead(proposer::readBarrier))
                .thenApply(ignored -> stateMachine.read(s -> {
                    List<LockView> found = s.primitive(LockTable.class).locks(prefix, max + 1);
                    boolean more = found.size() > max;
                    return new Snapshot(more ? found.subList(0, max) : found, more, s.revision());
                }));
    }

    /**
     * Why lease {@code leaseId} does not hold lock {@code name} with {@code fencingToken} (the
     * field at fault and a message), or null when it does: the core's own check, for front ends
     * that act on a holder's claim without releasing (HTTP's renew).
     */
    public LockTable.NotHeld notHeld(String name, long leaseId, long fencingToken) {
        return stateMachine.read(s -> s.primitive(LockTable.class).notHeld(name, leaseId, fencingToken));
    }

    /**
     * A grant whose call here went away before the answer. It is <em>not</em> released: the
     * lease's client may hold it through another call (see the class comment).
     */
    public void leftToLease(String key, long leaseId, long token) {
        LOG.info("event=lock_grant_unanswered lock=\"{}\" lease={} token={} note=\"the caller went away; the lock stays with the lease\"",
                key, leaseId, token);
    }

    /** How the log answers a lock acquire, or wakes its wait. */
    private static Acquires.Decision<Outcome> decide(Result r) {
        if (r instanceof LockResult.Granted g) {
            return new Acquires.Decision.Granted<>(Outcome.granted(g.key(), g.fencingToken()), g.key(), g.leaseId(), g.fencingToken(), g.again());
        } else if (r instanceof LockResult.Queued q) {
            return new Acquires.Decision.Queued<>(new Outcome(q.key(), false, 0, q.holder(), q.ahead()));
        } else if (r instanceof LockResult.Busy b) {
            return new Acquires.Decision.NotGranted<>(new Outcome(b.key(), false, 0, b.holder(), b.waiters()));
        } else if (r instanceof LockResult.Cancelled withdrawn) {
            return new Acquires.Decision.NotGranted<>(Outcome.of(withdrawn));
        }
        return null;
    }

    /** The lock's metrics and log lines of its acquires. */
    private final class LockJournal implements Acquires.Journal<Outcome> {
        @Override
        public void measured(String result, long nanos) {
            metrics.latency("acquire", nanos);
            // lock_acquire_total calls a lock not acquired "held"
            metrics.acquire(result.equals(Acquires.NOT_ACQUIRED) ? "held" : result);
        }

        @Override
        public void granted(Acquires.Decision.Granted<Outcome> grant, String via, String requestId) {
            logAcquired(grant.name(), grant.leaseId(), grant.fencingToken(), via, requestId);
        }

        @Override
        public void leftToLease(Acquires.Decision.Granted<Outcome> grant) {
            Locks.this.leftToLease(grant.name(), grant.leaseId(), grant.fencingToken());
        }
    }

    private static void checkName(String field, String name) {
        String problem = Limits.checkKey(field, name);
        if (problem != null) {
            throw RequestRejected.invalid(field, problem);
        }
    }

    private void logAcquired(String key, long leaseId, long token, String via, String requestId) {
        if (LOG.isDebugEnabled()) {
            LOG.debug("event=lock_acquired lock=\"{}\" holder=\"{}\" lease={} token={} via={} request_id={}", key,
                    holderOf(leaseId), leaseId, token, via, requestId);
        }
    }

    /** The client id of a lease, for log lines; empty once it is gone. */
    private String holderOf(long leaseId) {
        LeaseView lease = stateMachine.read(s -> s.lease(leaseId));
        return lease == null ? "" : lease.clientId();
    }
}
