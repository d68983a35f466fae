package io.tenure.server.semaphore;

import io.tenure.core.Limits;
import io.tenure.core.access.Level;
import io.tenure.core.kernel.Result;
import io.tenure.core.semaphore.SemaphoreAcquire;
import io.tenure.core.semaphore.SemaphoreCancel;
import io.tenure.core.semaphore.SemaphoreRelease;
import io.tenure.core.semaphore.SemaphoreResult;
import io.tenure.core.semaphore.SemaphoreTable;
import io.tenure.core.semaphore.SemaphoreView;
import io.tenure.server.Acquires;
import io.tenure.server.Admission;
import io.tenure.server.PermissionDenied;
import io.tenure.server.RequestRejected;
import io.tenure.server.ServerLimits;
import io.tenure.server.Waits;
import io.tenure.server.metrics.ServerMetrics;
import io.tenure.server.raft.Proposer;
import io.tenure.server.raft.TenureStateMachine;
import io.tenure.server.security.Permissions;
import io.tenure.server.security.Principal;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;

/**
 * The semaphore's operations, for every front end, on the path the lock's take (see
 * {@link io.tenure.server.lock.Locks}): validated once, guarded by the member's limits, proposed
 * through the log; a queued acquire parks in {@link Waits} under (semaphore, lease) until the log
 * answers it (a grant, the withdrawal its timeout proposes, or the end of its lease), on the path
 * every waiting primitive shares ({@link Acquires}). A caller that goes away only forgets its
 * call: its lease keeps its place, or its permits, until the client cancels, releases or lets the
 * lease go.
 */
public final class Semaphores {
    private static final Logger LOG = LoggerFactory.getLogger(Semaphores.class);

    /** What an acquire returned: acquired with a token, or not, with the permits free and the waiters at the time. */
    public record Outcome(String name, boolean acquired, long fencingToken, int permits, int available, int waiters)
            implements Acquires.Outcome {
        static Outcome of(SemaphoreResult.Granted g) {
            return new Outcome(g.key(), true, g.fencingToken(), g.permits(), 0, 0);
        }
    }

    private final Proposer proposer;
    private final TenureStateMachine stateMachine;
    private final Admission admission;
    private final ServerMetrics metrics;
    private final Acquires<Outcome> acquires;
    private final Permissions permissions;
    /** The kind its permissions name. */
    private static final String KIND = Permissions.kind(SemaphoreTable.NAME);

    public Semaphores(Proposer proposer, TenureStateMachine stateMachine, Permissions permissions, Waits waits, Admission admission, ScheduledExecutorService timer,
                      ServerMetrics metrics, ServerLimits limits) {
        this.proposer = proposer;
        this.stateMachine = stateMachine;
        this.permissions = permissions;
        this.admission = admission;
        this.metrics = metrics;
        this.acquires = new Acquires<>(new Acquires.Kind<>(SemaphoreTable.class, SemaphoreTable::waiterCount, SemaphoreCancel::new,
                Semaphores::decide, new Acquires.Wording("semaphore", "one", "locks and semaphores")), new SemaphoreJournal(), proposer,
                stateMachine, permissions.userHolds(), waits, admission, timer, limits, metrics);
    }

    /**
     * Acquires {@code permits} of semaphore {@code name} (limit {@code limit}) for the lease,
     * waiting in its FIFO queue.
     *
     * @param timeoutMs 0 = do not wait, positive = wait at most that long, -1 = until granted or the lease ends
     * @param requestId the client's id for this acquire, the same on its retries (0 = none)
     */
    public Acquires.Wait<Outcome> acquire(Principal caller, String name, long leaseId, int limit, int permits, long timeoutMs, long requestId) {
        return acquire(caller, name, leaseId, limit, permits, timeoutMs, requestId, false);
    }

    /**
     * {@link #acquire(String, long, int, int, long, long)}; with {@code enqueue}, the first phase of
     * a two-phase acquire: the lease joins the queue and the call is answered at once, acquired or
     * not with the waiters ahead. A later acquire for the same lease waits, keeping the place.
     */
    public Acquires.Wait<Outcome> acquire(Principal caller, String name, long leaseId, int limit, int permits, long timeoutMs, long requestId, boolean enqueue) {
        Acquires.Wait<Outcome> wait = acquires.acquire(name, leaseId, timeoutMs, requestId, enqueue, () -> {
            checkName(name);
            checkPermits(limit, permits);
            permissions.requireWithLease(caller, leaseId, KIND, name);
        }, queue -> new SemaphoreAcquire(name, leaseId, limit, permits, queue, requestId));
        permissions.trail().whenDone(wait.outcome(), caller, "acquire", KIND, name, leaseId, Outcome::fencingToken, o -> o.acquired() ? "granted" : "not_granted");
        return wait;
    }

    /**
     * Refuses a limit or a permit count that no semaphore takes, naming the field: an acquire's
     * first check, made first also by a front end that grants a lease for each acquire, so that
     * such a request leaves nothing behind.
     *
     * @throws RequestRejected INVALID_ARGUMENT naming {@code limit} or {@code permits}
     */
    public static void checkPermits(int limit, int permits) {
        if (limit < 1 || limit > Limits.MAX_SEMAPHORE_LIMIT) {
            throw RequestRejected.invalid("limit", Limits.checkPermits(limit, 1));
        }
        String problem = Limits.checkPermits(limit, permits);
        if (problem != null) {
            throw RequestRejected.invalid("permits", problem);
        }
    }

    /**
     * Withdraws the lease's wait, as its client asks when it gives up: calls parked for it here and
     * on any member are answered "not acquired". When the grant won the race the outcome is
     * acquired, with the grant's token, and the client decides whether to release it.
     */
    public CompletableFuture<Outcome> cancel(Principal caller, String name, long leaseId, long acquireRequest) {
        return RequestRejected.unless("name", Limits.checkKey("name", name))
                .thenCompose(ok -> permissions.allowedWithLease(caller, leaseId, KIND, name))
                .thenCompose(ok -> proposer.propose(new SemaphoreCancel(name, leaseId, acquireRequest)))
                .thenApply(applied -> {
                    if (applied.result() instanceof SemaphoreResult.Granted g) {
                        return Outcome.of(g);
                    }
                    if (applied.result() instanceof SemaphoreResult.Cancelled c) {
                        return new Outcome(c.key(), false, 0, 0, c.available(), c.waiters());
                    }
                    throw RequestRejected.of(applied);
                });
    }

    /** Returns the permits of the grant (name, lease, token); completes with how many waiters were granted with them. */
    public CompletableFuture<Integer> release(Principal caller, String name, long leaseId, long fencingToken) {
        try {
            checkName(name);
            if (fencingToken <= 0) {
                throw RequestRejected.invalid("fencing_token", "fencing_token must be positive, got " + fencingToken);
            }
            permissions.requireWithLease(caller, leaseId, KIND, name);
        } catch (RequestRejected | PermissionDenied e) {
            return CompletableFuture.failedFuture(e);
        }
        CompletableFuture<Integer> release = proposer.propose(new SemaphoreRelease(name, leaseId, fencingToken)).whenComplete((applied, error) -> {
            if (error != null) {
                metrics.semaphoreRelease(ServerMetrics.failureResult(error));
            } else {
                metrics.semaphoreRelease(applied.result() instanceof SemaphoreResult.Released ? "released"
                        : applied.result() instanceof Result.Rejected r && (r.code() == Result.Code.FAILED_PRECONDITION
                        || r.code() == Result.Code.NOT_FOUND) ? "stale" : "rejected");
            }
        }).thenApply(applied -> {
            if (applied.result() instanceof SemaphoreResult.Released released) {
                return released.handedTo();
            }
            throw RequestRejected.of(applied);
        });
        permissions.trail().whenDone(release, caller, "release", KIND, name, leaseId, handedTo -> fencingToken, handedTo -> "released");
        return release;
    }

    /** The semaphore as read linearizably (after a read barrier), with the revision of the state read. */
    public CompletableFuture<Read> read(Principal caller, String name) {
        return RequestRejected.unless("name", Limits.checkKey("name", name))
                .thenCompose(ok -> permissions.allowed(caller, KIND, name, Level.READ))
                .thenCompose(ok -> admission.admitRead(proposer::readBarrier))
                .thenApply(ignored -> stateMachine.read(s -> new Read(s.primitive(SemaphoreTable.class).semaphore(name), s.revision())));
    }

    /** A semaphore read from one state: null when it does not exist; {@code revision} is that state's. */
    public record Read(SemaphoreView semaphore, long revision) {}

    /** The semaphore as this member has applied it (no read barrier), or null. */
    public SemaphoreView describe(String name) {
        return stateMachine.read(s -> s.primitive(SemaphoreTable.class).semaphore(name));
    }

    /** The permits of a grant, or why the lease holds no grant with that token; read together from one state. */
    public record Holding(int permits, SemaphoreTable.Refusal notHeld) {}

    /**
     * Whether lease {@code leaseId} holds a grant of semaphore {@code name} with {@code fencingToken},
     * and with how many permits, as this member has applied it (no read barrier: callers that
     * need a linearizable answer pass one first).
     */
    public Holding holding(String name, long leaseId, long fencingToken) {
        return stateMachine.read(s -> {
            SemaphoreTable semaphores = s.primitive(SemaphoreTable.class);
            SemaphoreTable.Refusal notHeld = semaphores.notHeld(name, leaseId, fencingToken);
            return new Holding(notHeld == null ? semaphores.permitsHeld(name, leaseId) : 0, notHeld);
        });
    }

    /**
     * Why an acquire of {@code name} with {@code limit} would be refused whatever its lease (the
     * name is another kind's, or the semaphore has another limit), as this member has applied it;
     * null when it would not. The acquire checks again when it applies.
     */
    public SemaphoreTable.Refusal conflict(String name, int limit) {
        return stateMachine.read(s -> s.primitive(SemaphoreTable.class).conflict(name, limit));
    }

    /** How the log answers a semaphore acquire, or wakes its wait. */
    private static Acquires.Decision<Outcome> decide(Result r) {
        if (r instanceof SemaphoreResult.Granted g) {
            return new Acquires.Decision.Granted<>(Outcome.of(g), g.key(), g.leaseId(), g.fencingToken(), g.again());
        } else if (r instanceof SemaphoreResult.Queued q) {
            return new Acquires.Decision.Queued<>(new Outcome(q.key(), false, 0, 0, q.available(), q.ahead()));
        } else if (r instanceof SemaphoreResult.Busy b) {
            return new Acquires.Decision.NotGranted<>(new Outcome(b.key(), false, 0, 0, b.available(), b.waiters()));
        } else if (r instanceof SemaphoreResult.Cancelled c) {
            return new Acquires.Decision.NotGranted<>(new Outcome(c.key(), false, 0, 0, c.available(), c.waiters()));
        }
        return null;
    }

    /** The semaphore's metrics and log line of its acquires. */
    private final class SemaphoreJournal implements Acquires.Journal<Outcome> {
        @Override
        public void measured(String result, long nanos) {
            metrics.latency("semaphore_acquire", nanos);
            metrics.semaphoreAcquire(result);
        }

        @Override
        public void leftToLease(Acquires.Decision.Granted<Outcome> grant) {
            LOG.info("event=semaphore_grant_unanswered semaphore=\"{}\" lease={} token={} note=\"the caller went away; the permits stay with the lease\"",
                    grant.name(), grant.leaseId(), grant.fencingToken());
        }
    }

    private static void checkName(String name) {
        String problem = Limits.checkKey("name", name);
        if (problem != null) {
            throw RequestRejected.invalid("name", problem);
        }
    }
}
