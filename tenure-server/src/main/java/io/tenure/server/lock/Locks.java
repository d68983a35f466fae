package io.tenure.server.lock;

import io.tenure.core.Limits;
import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.LeaseView;
import io.tenure.core.kernel.Result;
import io.tenure.core.kernel.WaitKey;
import io.tenure.core.lock.LockAcquire;
import io.tenure.core.lock.LockCancel;
import io.tenure.core.lock.LockDowngrade;
import io.tenure.core.lock.LockRelease;
import io.tenure.core.lock.LockResult;
import io.tenure.core.lock.LockTable;
import io.tenure.core.lock.LockView;
import io.tenure.server.Admission;
import io.tenure.server.LimitExceeded;
import io.tenure.server.Overloaded;
import io.tenure.server.NotServingException;
import io.tenure.server.RequestIds;
import io.tenure.server.RequestRejected;
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
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The lock's operations, for every front end: validation (once, against the core's limits), the
 * member's guards, the command proposed through the log, and the blocking wait of
 * ARCHITECTURE.md "The path of one Lock call". Front ends translate; they decide nothing.
 *
 * <p>A queued acquire parks its call in the member's {@link Waits}, under (lock, lease), on the
 * apply thread, by the answer of the command that queued it. Only the log answers it then: the
 * grant that hands the lock over, the withdrawal its timeout proposes ({@code LockCancel}; if the
 * grant won that race the caller gets the lock), or the end of its lease.
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
    public record Outcome(String key, boolean acquired, long fencingToken, String holder, int waiters) {
        static Outcome granted(String key, long token) {
            return new Outcome(key, true, token, "", 0);
        }

        static Outcome of(LockResult.Cancelled withdrawn) {
            return new Outcome(withdrawn.key(), false, 0, withdrawn.holder(), withdrawn.waiters());
        }
    }

    /** One call of {@link #lock}: completes once, granted, not granted, failed, or handed back. */
    public final class Wait implements Waits.Parked {
        private final WaitKey key;
        /** The client's id for the acquire (0 = none): its timeout withdraws the wait in its name. */
        private final long acquireRequest;
        private final CompletableFuture<Outcome> outcome = new CompletableFuture<>();
        /** The request that started the wait, for the log line of its grant. */
        private final String requestId = RequestIds.current();
        private volatile ScheduledFuture<?> timeout;
        private volatile boolean abandoned;

        private Wait(WaitKey key, long acquireRequest) {
            this.key = key;
            this.acquireRequest = acquireRequest;
        }

        public CompletableFuture<Outcome> outcome() {
            return outcome;
        }

        /**
         * The caller went away: forget the call, and change nothing in the replicated state (see
         * the class comment). Its lease keeps its place in the queue, or the lock.
         */
        public void abandon() {
            abandoned = true;
            waits.unpark(key, this);
            cancelTimeout();
        }

        /** The log decided: handed the lock over, withdrew the wait, or ended the lease. */
        @Override
        public void woken(Result result) {
            cancelTimeout();
            if (result instanceof LockResult.Granted g) {
                logAcquired(g.key(), g.leaseId(), g.fencingToken(), "hand_off", requestId);
                if (abandoned) {
                    leftToLease(g.key(), g.leaseId(), g.fencingToken());
                } else {
                    outcome.complete(Outcome.granted(g.key(), g.fencingToken()));
                }
            } else if (result instanceof LockResult.Cancelled withdrawn) {
                outcome.complete(Outcome.of(withdrawn));
            } else if (result instanceof Result.Rejected ended) {
                outcome.completeExceptionally(new RequestRejected(ended.code(), "lease_id", ended.message()));
            } else {
                outcome.completeExceptionally(new IllegalStateException("unexpected wake-up " + result));
            }
        }

        @Override
        public void handedBack(NotServingException reason) {
            fail(reason);
        }

        private void fail(Throwable error) {
            cancelTimeout();
            outcome.completeExceptionally(error);
        }

        private void cancelTimeout() {
            ScheduledFuture<?> t = timeout;
            if (t != null) {
                t.cancel(false);
            }
        }
    }

    private final Proposer proposer;
    private final TenureStateMachine stateMachine;
    private final Waits waits;
    private final Admission admission;
    private final ScheduledExecutorService timer;
    private final ServerMetrics metrics;
    private final ServerLimits limits;

    public Locks(Proposer proposer, TenureStateMachine stateMachine, Waits waits, Admission admission, ScheduledExecutorService timer,
                 ServerMetrics metrics, ServerLimits limits) {
        this.admission = admission;
        this.proposer = proposer;
        this.stateMachine = stateMachine;
        this.waits = waits;
        this.timer = timer;
        this.metrics = metrics;
        this.limits = limits;
    }

    /**
     * Acquires {@code name} for the lease, waiting in the lock's FIFO queue.
     *
     * @param timeoutMs 0 = do not wait, positive = wait at most that long, -1 = until granted or the lease ends
     */
    public Wait lock(String name, long leaseId, byte[] metadata, long timeoutMs) {
        return lock(name, leaseId, metadata, timeoutMs, 0);
    }

    /**
     * {@link #lock(String, long, byte[], long)} for the client's acquire {@code requestId} (0 =
     * none): once that acquire ended, a copy of it is refused (see {@link LockAcquire#requestId}).
     */
    public Wait lock(String name, long leaseId, byte[] metadata, long timeoutMs, long requestId) {
        return lock(name, leaseId, metadata, timeoutMs, requestId, false);
    }

    /**
     * {@link #lock(String, long, byte[], long, long)}; with {@code enqueue}, the first phase of a
     * two-phase acquire: the lease joins the queue and the call is answered at once, acquired or
     * not with the waiters ahead ({@code timeoutMs} is not used). A later call for the same lease
     * waits for the grant, keeping the place.
     */
    public Wait lock(String name, long leaseId, byte[] metadata, long timeoutMs, long requestId, boolean enqueue) {
        return lock(name, leaseId, metadata, timeoutMs, requestId, enqueue, false);
    }

    /**
     * {@link #lock(String, long, byte[], long, long, boolean)} in read mode when {@code shared}
     * (beside other readers), else in write mode.
     */
    public Wait lock(String name, long leaseId, byte[] metadata, long timeoutMs, long requestId, boolean enqueue, boolean shared) {
        Wait wait = new Wait(new WaitKey(LockTable.NAME, name, leaseId), requestId);
        long started = System.nanoTime();
        wait.outcome.whenComplete((outcome, error) -> {
            metrics.latency("acquire", System.nanoTime() - started);
            metrics.acquire(error != null ? ServerMetrics.failureResult(error) : outcome.acquired() ? "acquired"
                    : enqueue ? "queued" : "held");
        });
        try {
            checkName("name", name);
            String problem = Limits.checkMetadata("metadata", metadata);
            if (problem != null) {
                throw RequestRejected.invalid("metadata", problem);
            }
            if (timeoutMs < -1) {
                throw RequestRejected.invalid("timeout_ms", "timeout_ms must be -1 (wait until granted), 0 (do not wait) or positive, got " + timeoutMs);
            }
            checkLimits(name, leaseId, enqueue || timeoutMs != 0);
            admission.admit("acquire");
        } catch (RequestRejected | LimitExceeded | Overloaded e) {
            wait.outcome.completeExceptionally(e);
            return wait;
        }
        long waitMs = enqueue ? 0 : timeoutMs;
        proposer.propose(new LockAcquire(name, leaseId, metadata, enqueue || timeoutMs != 0, requestId, shared), new Proposer.Answer() {
            @Override
            public void applied(Applied applied) {
                acquired(wait, applied.result(), waitMs);
            }

            @Override
            public void failed(Throwable error) {
                wait.fail(error);
            }
        });
        return wait;
    }

    /** The acquire's own result, on the apply thread: answered now, or parked until the log decides. */
    private void acquired(Wait wait, Result r, long timeoutMs) {
        if (r instanceof LockResult.Granted g) {
            if (!g.again()) {
                logAcquired(g.key(), g.leaseId(), g.fencingToken(), "immediate", wait.requestId);
            }
            wait.outcome.complete(Outcome.granted(g.key(), g.fencingToken()));
        } else if (r instanceof LockResult.Busy b) {
            wait.outcome.complete(new Outcome(b.key(), false, 0, b.holder(), b.waiters()));
        } else if (r instanceof LockResult.Queued q && timeoutMs == 0) {
            // The lease already waits (through another call): a try does not wait, and the
            // other call keeps the lease's place.
            wait.outcome.complete(new Outcome(q.key(), false, 0, q.holder(), q.ahead()));
        } else if (r instanceof LockResult.Queued) {
            if (wait.abandoned || !waits.park(wait.key, wait)) {
                return; // the caller went away while the acquire was in the log, or the member is stopping
            }
            if (timeoutMs > 0) {
                wait.timeout = timer.schedule(() -> withdraw(wait), timeoutMs, TimeUnit.MILLISECONDS);
            }
        } else if (r instanceof Result.Rejected rejected) {
            wait.fail(RequestRejected.of(rejected));
        } else {
            wait.fail(new IllegalStateException("unexpected result " + r));
        }
    }

    /** Acquires {@code name} only if it is free or already held by the lease. */
    public CompletableFuture<Outcome> tryLock(String name, long leaseId, byte[] metadata) {
        return tryLock(name, leaseId, metadata, 0);
    }

    /** {@link #tryLock(String, long, byte[])} for the client's request {@code requestId} (0 = none). */
    public CompletableFuture<Outcome> tryLock(String name, long leaseId, byte[] metadata, long requestId) {
        return tryLock(name, leaseId, metadata, requestId, false);
    }

    /** {@link #tryLock(String, long, byte[], long)} in read mode when {@code shared}. */
    public CompletableFuture<Outcome> tryLock(String name, long leaseId, byte[] metadata, long requestId, boolean shared) {
        return lock(name, leaseId, metadata, 0, requestId, false, shared).outcome();
    }

    /** What a downgrade did: the grant's token (unchanged) and the readers granted beside it. */
    public record Downgrade(String key, long fencingToken, int readersGranted) {}

    /**
     * Turns the write-mode hold of (name, lease, token) into a read-mode hold, keeping the token;
     * readers queued at the head are granted beside it. A read-mode hold of the same grant
     * succeeds again; a stale token or a foreign lease fails with FAILED_PRECONDITION, an unknown
     * lease with NOT_FOUND.
     */
    public CompletableFuture<Downgrade> downgrade(String name, long leaseId, long fencingToken) {
        try {
            checkName("name", name);
            if (fencingToken <= 0) {
                throw RequestRejected.invalid("fencing_token", "fencing_token must be positive, got " + fencingToken);
            }
        } catch (RequestRejected e) {
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
     * The wait timed out: withdraws it through the log. The withdrawal wakes the calls parked for
     * it ("not acquired"); if the grant won the race, its wake-up came first and answered them.
     */
    private void withdraw(Wait wait) {
        WaitKey key = wait.key;
        proposer.propose(new LockCancel(key.key(), key.leaseId(), wait.acquireRequest), new Proposer.Answer() {
            @Override
            public void applied(Applied applied) {
                // Answered already by a wake-up, unless this member missed it (an installed snapshot).
                if (waits.unpark(key, wait)) {
                    wait.woken(applied.result());
                }
            }

            @Override
            public void failed(Throwable error) {
                if (waits.unpark(key, wait)) {
                    wait.fail(error);
                }
            }
        });
    }

    /**
     * Withdraws the lease's wait for {@code name}, as its client asks when it gives up waiting:
     * the lease leaves the queue, and calls parked for it, here and on any member, are answered
     * "not acquired". When the grant won the race the outcome is acquired, with the grant's token:
     * the lease holds the lock, and the client decides whether to release it. Cancelling a wait
     * that is not there changes nothing.
     */
    public CompletableFuture<Outcome> cancel(String name, long leaseId) {
        return cancel(name, leaseId, 0);
    }

    /** {@link #cancel(String, long)} of the client's acquire {@code acquireRequest} (0 = none): its later copies are refused. */
    public CompletableFuture<Outcome> cancel(String name, long leaseId, long acquireRequest) {
        String requestId = RequestIds.current();
        return RequestRejected.unless("name", Limits.checkKey("name", name))
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
    public CompletableFuture<Long> unlock(String name, long leaseId, long fencingToken) {
        try {
            checkName("key", name);
            if (fencingToken <= 0) {
                throw RequestRejected.invalid("fencing_token", "fencing_token must be positive, got " + fencingToken);
            }
        } catch (RequestRejected e) {
            return CompletableFuture.failedFuture(e);
        }
        long started = System.nanoTime();
        String requestId = RequestIds.current();
        String holder = LOG.isDebugEnabled() ? holderOf(leaseId) : "";
        return proposer.propose(new LockRelease(name, leaseId, fencingToken)).whenComplete((applied, error) -> {
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
    }

    // ---- reads (after a read barrier when they must be linearizable) ---------------------------

    /** Locks as read from one state: {@code revision} is that state's, so a watch from revision + 1 misses nothing. */
    public record Snapshot(List<LockView> locks, boolean more, long revision) {}

    /**
     * The lock (an empty list when it is free), read linearizably: after a read barrier, so it
     * reflects every write acknowledged before the call, with the revision of the state read.
     */
    public CompletableFuture<Snapshot> read(String name) {
        return RequestRejected.unless("name", Limits.checkKey("name", name))
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
    public CompletableFuture<Snapshot> list(String prefix, int limit) {
        int max = Limits.listLimit(limit);
        return RequestRejected.unless("limit", Limits.checkListLimit("limit", limit)).thenCompose(ok -> admission.admitRead(proposer::readBarrier))
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

    private static void checkName(String field, String name) {
        String problem = Limits.checkKey(field, name);
        if (problem != null) {
            throw RequestRejected.invalid(field, problem);
        }
    }

    /**
     * Refuses a new hold or wait that would take the lease's client over its lock limit, or a new
     * waiter over the lock's queue limit. A lease that already holds or waits for the lock (a
     * retry) is never refused. Read from the applied state: a guard, not an invariant.
     */
    private void checkLimits(String name, long leaseId, boolean wouldWait) {
        LimitExceeded refusal = stateMachine.read(s -> {
            LockTable locks = s.primitive(LockTable.class);
            if (locks.holdsOrWaits(leaseId, name)) {
                return null;
            }
            LeaseView lease = s.lease(leaseId);
            if (lease == null) {
                return null; // the state machine answers NOT_FOUND
            }
            if (s.holdsAndWaits(lease.clientId()) >= limits.maxLocksPerClient()) {
                return new LimitExceeded("max-locks-per-client", "client id '" + lease.clientId() + "' already holds or waits for "
                        + limits.maxLocksPerClient() + " locks, the most a client may (--max-locks-per-client)");
            }
            if (wouldWait && locks.waiterCount(name) >= limits.maxWaitersPerLock()) {
                return new LimitExceeded("max-waiters-per-lock", "lock '" + name + "' already has " + limits.maxWaitersPerLock()
                        + " waiters, the most a lock may have (--max-waiters-per-lock); try again later");
            }
            return null;
        });
        if (refusal != null) {
            throw refusal;
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
