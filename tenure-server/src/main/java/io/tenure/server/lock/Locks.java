package io.tenure.server.lock;

import io.tenure.core.Applied;
import io.tenure.core.Command;
import io.tenure.core.Effect;
import io.tenure.core.Limits;
import io.tenure.core.LeaseView;
import io.tenure.core.LockView;
import io.tenure.core.Result;
import io.tenure.server.NotServingException;
import io.tenure.server.RequestRejected;
import io.tenure.server.raft.Proposer;
import io.tenure.server.LimitExceeded;
import io.tenure.server.RequestIds;
import io.tenure.server.ServerLimits;
import io.tenure.server.metrics.ServerMetrics;
import io.tenure.server.raft.TenureStateMachine;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Lock requests, for every front end: validation, the command proposed through the log, and the
 * blocking wait of ARCHITECTURE.md "The path of one Lock call".
 *
 * <p>A waiting call is parked here under (lock, lease) until an applied entry hands the lock to
 * that lease ({@link Effect.WaiterGranted}), the lease ends, or the call's timeout fires. A
 * timeout proposes {@code LockCancel}: if the grant won the race the caller gets the lock.
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
    }

    private record WaitKey(String key, long leaseId) {}

    /** One parked call. Completes once: granted, timed out, lease ended, or abandoned. */
    public final class Wait {
        private final WaitKey id;
        private final CompletableFuture<Outcome> outcome = new CompletableFuture<>();
        /** The request that started the wait, for the log line of its grant. */
        private final String requestId = RequestIds.current();
        private volatile ScheduledFuture<?> timeout;
        private volatile boolean abandoned;

        private Wait(WaitKey id) {
            this.id = id;
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
            unpark(this);
            ScheduledFuture<?> t = timeout;
            if (t != null) {
                t.cancel(false);
            }
        }
    }

    private final Proposer proposer;
    private final TenureStateMachine stateMachine;
    private final ScheduledExecutorService timer;
    private final Map<WaitKey, List<Wait>> parked = new ConcurrentHashMap<>();
    /** Set once the member shuts down: no call parks here any more (see {@link #endParked}). */
    private volatile String handingBack;

    private final ServerMetrics metrics;
    private final ServerLimits limits;

    public Locks(Proposer proposer, TenureStateMachine stateMachine, ScheduledExecutorService timer, ServerMetrics metrics, ServerLimits limits) {
        this.metrics = metrics;
        this.limits = limits;
        this.proposer = proposer;
        this.stateMachine = stateMachine;
        this.timer = timer;
    }

    /**
     * Acquires {@code name} for the lease, waiting in the lock's FIFO queue.
     *
     * @param timeoutMs 0 = do not wait, positive = wait at most that long, -1 = until granted or the lease ends
     */
    public Wait lock(String name, long leaseId, byte[] metadata, long timeoutMs) {
        Wait wait = new Wait(new WaitKey(name, leaseId));
        long started = System.nanoTime();
        wait.outcome.whenComplete((outcome, error) -> {
            metrics.latency("acquire", System.nanoTime() - started);
            metrics.acquire(error != null ? ServerMetrics.failureResult(error) : outcome.acquired() ? "acquired" : "held");
        });
        try {
            validate(name, metadata);
            if (timeoutMs < -1) {
                throw RequestRejected.invalid("timeout_ms", "timeout_ms must be -1 (wait until granted), 0 (do not wait) or positive, got " + timeoutMs);
            }
            checkLimits(name, leaseId, timeoutMs != 0);
        } catch (RequestRejected | LimitExceeded e) {
            wait.outcome.completeExceptionally(e);
            return wait;
        }
        proposer.propose(new Command.LockAcquire(name, leaseId, metadata, timeoutMs != 0)).whenComplete((applied, error) -> {
            if (error != null) {
                wait.outcome.completeExceptionally(error);
                return;
            }
            Result r = applied.result();
            if (r instanceof Result.Granted g) {
                logAcquired(g, "immediate", wait.requestId);
                wait.outcome.complete(Outcome.granted(g.key(), g.fencingToken()));
            } else if (r instanceof Result.Busy b) {
                wait.outcome.complete(new Outcome(b.key(), false, 0, b.holder(), b.waiters()));
            } else if (r instanceof Result.Queued q && timeoutMs == 0) {
                // The lease already waits (through another call): a try does not wait, and the
                // other call keeps the lease's place.
                wait.outcome.complete(new Outcome(q.key(), false, 0, q.holder(), q.ahead()));
            } else if (r instanceof Result.Queued q) {
                park(wait, timeoutMs);
            } else {
                wait.outcome.completeExceptionally(RequestRejected.of(applied));
            }
        });
        return wait;
    }

    /** Acquires {@code name} only if it is free or already held by the lease. */
    public CompletableFuture<Outcome> tryLock(String name, long leaseId, byte[] metadata) {
        return lock(name, leaseId, metadata, 0).outcome();
    }

    /**
     * Withdraws the lease's wait for {@code name}, as its client asks when it gives up waiting:
     * the lease leaves the queue, and calls parked here for it are answered "not acquired". When
     * the grant won the race the outcome is acquired, with the grant's token: the lease holds the
     * lock, and the client decides whether to release it. Cancelling a wait that is not there
     * changes nothing.
     */
    public CompletableFuture<Outcome> cancel(String name, long leaseId) {
        String problem = Limits.checkKey("name", name);
        if (problem != null) {
            return CompletableFuture.failedFuture(RequestRejected.invalid("name", problem));
        }
        return proposer.propose(new Command.LockCancel(name, leaseId)).thenApply(applied -> {
            if (applied.result() instanceof Result.Granted g) {
                return Outcome.granted(g.key(), g.fencingToken());
            }
            if (!(applied.result() instanceof Result.Cancelled)) {
                throw RequestRejected.of(applied);
            }
            LOG.info("event=lock_wait_cancelled lock=\"{}\" lease={} request_id={}", name, leaseId, RequestIds.current());
            return answerWithdrawn(new WaitKey(name, leaseId));
        });
    }

    /** A wait was withdrawn through the log: answers its calls parked here "not acquired", naming the holder now. */
    private Outcome answerWithdrawn(WaitKey id) {
        LockView now = describe(id.key());
        Outcome notAcquired = now == null
                ? new Outcome(id.key(), false, 0, "", 0)
                : new Outcome(id.key(), false, 0, now.holder(), now.waiters().size());
        List<Wait> waits = parked.remove(id);
        if (waits != null) {
            waits.forEach(w -> deliver(w, notAcquired));
        }
        return notAcquired;
    }

    /**
     * Releases a lock held by (name, lease, token); completes with the next holder's token (0 when
     * none). A stale token or a foreign lease fails with FAILED_PRECONDITION, an unknown lease with
     * NOT_FOUND; a retried release of the same grant succeeds again.
     */
    public CompletableFuture<Long> unlock(String name, long leaseId, long fencingToken) {
        String problem = Limits.checkKey("key", name);
        if (problem != null) {
            return CompletableFuture.failedFuture(RequestRejected.invalid("key", problem));
        }
        if (fencingToken <= 0) {
            return CompletableFuture.failedFuture(RequestRejected.invalid("fencing_token", "fencing_token must be positive, got " + fencingToken));
        }
        long started = System.nanoTime();
        String requestId = RequestIds.current();
        String holder = LOG.isDebugEnabled() ? holderOf(leaseId) : "";
        return proposer.propose(new Command.LockRelease(name, leaseId, fencingToken)).whenComplete((applied, error) -> {
            metrics.latency("release", System.nanoTime() - started);
            if (error != null) {
                metrics.release(ServerMetrics.failureResult(error));
            } else {
                metrics.release(applied.result() instanceof Result.Released ? "released"
                        : applied.result() instanceof Result.Rejected r && (r.code() == Result.Code.FAILED_PRECONDITION
                        || r.code() == Result.Code.NOT_FOUND) ? "stale" : "rejected");
            }
        }).thenApply(applied -> {
            if (applied.result() instanceof Result.Released released) {
                LOG.debug("event=lock_released lock=\"{}\" holder=\"{}\" lease={} token={} next_token={} request_id={}", name, holder,
                        leaseId, fencingToken, released.nextFencingToken(), requestId);
                return released.nextFencingToken();
            }
            throw RequestRejected.of(applied);
        });
    }

    /** The lock's holder and queue, or null when it is free. */
    public LockView describe(String name) {
        return stateMachine.read(s -> s.lock(name));
    }

    /** Locks as read from one state: {@code revision} is that state's, so a watch from revision + 1 misses nothing. */
    public record Snapshot(List<LockView> locks, boolean more, long revision) {}

    /** The lock (an empty list when it is free) and the revision of the state it was read from. */
    public Snapshot describeAt(String name) {
        return stateMachine.read(s -> {
            LockView lock = s.lock(name);
            return new Snapshot(lock == null ? List.of() : List.of(lock), false, s.revision());
        });
    }

    /** Held locks whose names start with {@code prefix}, in name order, at most {@code limit}. */
    public Snapshot list(String prefix, int limit) {
        return stateMachine.read(s -> {
            List<LockView> found = s.locks(prefix, limit + 1);
            boolean more = found.size() > limit;
            return new Snapshot(more ? found.subList(0, limit) : found, more, s.revision());
        });
    }

    /** Wakes parked calls for the effects of an applied entry; called on the apply thread. */
    public void applied(List<Applied> results) {
        for (Applied applied : results) {
            for (Effect effect : applied.effects()) {
                if (effect instanceof Effect.WaiterGranted g) {
                    List<Wait> waits = parked.remove(new WaitKey(g.key(), g.leaseId()));
                    if (waits != null) {
                        logAcquired(g.key(), g.leaseId(), g.fencingToken(), "hand_off", waits.get(0).requestId);
                        boolean delivered = false;
                        for (Wait w : waits) {
                            delivered |= deliver(w, Outcome.granted(g.key(), g.fencingToken()));
                        }
                        if (!delivered) {
                            leftToLease(g.key(), g.leaseId(), g.fencingToken());
                        }
                    }
                } else if (effect instanceof Effect.WaitEnded e) {
                    List<Wait> waits = parked.remove(new WaitKey(e.key(), e.leaseId()));
                    if (waits != null) {
                        RequestRejected ended = new RequestRejected(Result.Code.NOT_FOUND, "lease_id",
                                "lease " + e.leaseId() + " ended (expired or revoked) while waiting for lock '" + e.key() + "'");
                        waits.forEach(w -> fail(w, ended));
                    }
                }
            }
        }
    }

    /**
     * Re-checks every parked call against the state after it was replaced by an installed
     * snapshot, whose skipped entries woke nobody here: a call whose lease now holds the lock gets
     * it, and one whose wait is gone is withdrawn (which settles it through the log).
     */
    public void resync() {
        for (WaitKey id : List.copyOf(parked.keySet())) {
            List<Wait> waits = parked.get(id);
            if (waits == null) {
                continue;
            }
            LockView now = describe(id.key());
            if (now != null && now.leaseId() == id.leaseId()) {
                parked.remove(id);
                boolean delivered = false;
                for (Wait w : waits) {
                    delivered |= deliver(w, Outcome.granted(now.key(), now.fencingToken()));
                }
                if (!delivered) {
                    leftToLease(now.key(), id.leaseId(), now.fencingToken());
                }
            } else if (now == null || now.waiters().stream().noneMatch(w -> w.leaseId() == id.leaseId())) {
                waits.forEach(this::withdraw);
            }
        }
    }

    /**
     * The member is shutting down: answers every parked call, and every call that would park
     * from now on, with {@link NotServingException} (UNAVAILABLE), <em>without</em> withdrawing it
     * from the queue. No {@code LockCancel} goes through the log: the client retries on another
     * member with the same lease and keeps its place, or receives the grant that reached its lease
     * meanwhile (a grant applied here after this finds no parked call and is left to the lease).
     *
     * @return how many parked calls were answered
     */
    public int endParked(String reason) {
        handingBack = reason;
        NotServingException retryElsewhere = new NotServingException(reason);
        int answered = 0;
        for (WaitKey id : List.copyOf(parked.keySet())) {
            List<Wait> waits = parked.remove(id);
            if (waits != null) {
                for (Wait w : waits) {
                    fail(w, retryElsewhere);
                    answered++;
                }
            }
        }
        return answered;
    }

    /** How many calls are parked on this member (for status and tests). */
    public int parkedCount() {
        return parked.values().stream().mapToInt(List::size).sum();
    }

    private void park(Wait wait, long timeoutMs) {
        parked.computeIfAbsent(wait.id, k -> new CopyOnWriteArrayList<>()).add(wait);
        // The grant may have been applied between the Queued result and parking: look once.
        LockView now = describe(wait.id.key());
        if (now != null && now.leaseId() == wait.id.leaseId()) {
            unpark(wait);
            deliver(wait, Outcome.granted(now.key(), now.fencingToken()));
            return;
        }
        boolean stillWaiting = now != null && now.waiters().stream().anyMatch(w -> w.leaseId() == wait.id.leaseId());
        if (!stillWaiting) {
            // Neither holding nor queued: the lease ended (or a cancel removed us) meanwhile.
            unpark(wait);
            withdraw(wait);
            return;
        }
        String reason = handingBack;
        if (reason != null) {
            // Parked after endParked swept (or while it sweeps): hand it back the same way.
            unpark(wait);
            fail(wait, new NotServingException(reason));
            return;
        }
        if (wait.abandoned) {
            unpark(wait); // abandoned while the acquire was in the log: forget it, as abandon() does
        } else if (timeoutMs > 0) {
            wait.timeout = timer.schedule(() -> withdraw(wait), timeoutMs, TimeUnit.MILLISECONDS);
        }
    }

    /**
     * Withdraws from the queue through the log. The cancel's result settles the race with a grant:
     * Granted means the lease holds the lock now.
     */
    private void withdraw(Wait wait) {
        WaitKey id = wait.id;
        proposer.propose(new Command.LockCancel(id.key(), id.leaseId())).whenComplete((applied, error) -> {
            if (error != null) {
                fail(wait, error);
                return;
            }
            if (applied.result() instanceof Result.Granted g) {
                unpark(wait);
                if (!deliver(wait, Outcome.granted(g.key(), g.fencingToken()))) {
                    leftToLease(g.key(), g.leaseId(), g.fencingToken());
                }
                return;
            }
            if (stateMachine.read(s -> s.renewedAt(id.leaseId())) < 0) {
                RequestRejected gone = new RequestRejected(Result.Code.NOT_FOUND, "lease_id",
                        "lease " + id.leaseId() + " not found (expired or revoked) while waiting for lock '" + id.key() + "'");
                List<Wait> waits = parked.remove(id);
                if (waits != null) {
                    waits.forEach(w -> fail(w, gone));
                }
                fail(wait, gone);
                return;
            }
            deliver(wait, answerWithdrawn(id));
        });
    }

    /**
     * A grant whose call here went away before the answer. It is <em>not</em> released: the
     * lease's client may hold it through another call (see the class comment).
     */
    public void leftToLease(String key, long leaseId, long token) {
        LOG.info("event=lock_grant_unanswered lock=\"{}\" lease={} token={} note=\"the caller went away; the lock stays with the lease\"",
                key, leaseId, token);
    }

    private void unpark(Wait wait) {
        parked.computeIfPresent(wait.id, (k, list) -> {
            list.remove(wait);
            return list.isEmpty() ? null : list;
        });
    }

    /** @return false when the call had been abandoned, so the grant reached nobody */
    private boolean deliver(Wait wait, Outcome outcome) {
        ScheduledFuture<?> t = wait.timeout;
        if (t != null) {
            t.cancel(false);
        }
        if (wait.abandoned && outcome.acquired()) {
            return false;
        }
        wait.outcome.complete(outcome);
        return true;
    }

    private void fail(Wait wait, Throwable error) {
        ScheduledFuture<?> t = wait.timeout;
        if (t != null) {
            t.cancel(false);
        }
        wait.outcome.completeExceptionally(error);
    }

    private static void validate(String name, byte[] metadata) {
        String problem = Limits.checkKey("name", name);
        if (problem != null) {
            throw RequestRejected.invalid("name", problem);
        }
        problem = Limits.checkMetadata("metadata", metadata);
        if (problem != null) {
            throw RequestRejected.invalid("metadata", problem);
        }
    }

    /**
     * Refuses a new hold or wait that would take the lease's client over its lock limit, or a new
     * waiter over the lock's queue limit. A lease that already holds or waits for the lock (a
     * retry) is never refused. Read from the applied state: a guard, not an invariant.
     */
    private void checkLimits(String name, long leaseId, boolean wouldWait) {
        String refusal = stateMachine.read(s -> {
            if (s.holdsOrWaits(leaseId, name)) {
                return null;
            }
            LeaseView lease = s.lease(leaseId);
            if (lease == null) {
                return null; // the state machine answers NOT_FOUND
            }
            if (s.lockCount(lease.clientId()) >= limits.maxLocksPerClient()) {
                return "max-locks-per-client|client id '" + lease.clientId() + "' already holds or waits for "
                        + limits.maxLocksPerClient() + " locks, the most a client may (--max-locks-per-client)";
            }
            LockView lock = s.lock(name);
            if (wouldWait && lock != null && lock.waiters().size() >= limits.maxWaitersPerLock()) {
                return "max-waiters-per-lock|lock '" + name + "' already has " + limits.maxWaitersPerLock()
                        + " waiters, the most a lock may have (--max-waiters-per-lock); try again later";
            }
            return null;
        });
        if (refusal != null) {
            int bar = refusal.indexOf('|');
            throw new LimitExceeded(refusal.substring(0, bar), refusal.substring(bar + 1));
        }
    }

    private void logAcquired(Result.Granted g, String via, String requestId) {
        if (!g.again()) {
            logAcquired(g.key(), g.leaseId(), g.fencingToken(), via, requestId);
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
