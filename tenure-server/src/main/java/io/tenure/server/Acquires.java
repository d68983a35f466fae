package io.tenure.server;

import io.tenure.core.TenureState;
import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.Command;
import io.tenure.core.kernel.Primitive;
import io.tenure.core.kernel.Result;
import io.tenure.core.kernel.WaitKey;
import io.tenure.server.metrics.ServerMetrics;
import io.tenure.server.raft.Proposer;
import io.tenure.server.raft.TenureStateMachine;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.ToIntBiFunction;

/**
 * The acquire path of one waiting primitive (locks, semaphores; elections and barriers next):
 * the member's checks, the acquire proposed through the log, the answer given at once or the call
 * parked in {@link Waits} under (resource, lease) until the log decides, and the timeout that
 * withdraws the wait through the log. ARCHITECTURE.md "The path of one Lock call", steps 2 to 4,
 * written once.
 *
 * <p>Only the log answers a parked call: the grant that hands the resource over, the withdrawal
 * its timeout proposes (if the grant won that race, the caller gets the grant), or the end of its
 * lease. A call whose caller went away is only forgotten ({@link Wait#abandon}); nothing goes
 * through the log for it, since a member cannot tell a caller that gave up from one that re-sends
 * the same wait elsewhere: what the lease waits for or holds stays bound to the lease.
 *
 * <p>A new waiting primitive (leader election, say: acquire = campaign with a value, withdraw =
 * {@code ElectionCancel}) uses it in four steps:
 * <ol>
 *   <li>Its outcome record implements {@link Outcome}.</li>
 *   <li>It describes itself in a {@link Kind}: its table ({@code ElectionTable.class}) and waiter
 *       count ({@code ElectionTable::waiterCount}), its withdrawal ({@code ElectionCancel::new}: the
 *       timeout withdraws in the name of the campaign's request id), how its core results read
 *       (a private {@code decide}: {@code Leader} as {@link Decision.Granted}, a queued campaign as
 *       {@link Decision.Queued}, {@code Cancelled} as {@link Decision.NotGranted}), and the words
 *       of its limit refusals.</li>
 *   <li>It implements {@link Journal}: its metrics and its log lines, in its own logger.</li>
 *   <li>Its service holds one {@code Acquires} and starts each call with {@link #acquire}, giving
 *       its own validation and its command ({@code queue -> new ElectionCampaign(name, leaseId,
 *       value, queue, requestId)}); front ends get back a {@link Wait}, whose outcome they
 *       answer and which they {@link Wait#abandon} when their caller goes away.</li>
 * </ol>
 * Its explicit cancel (resign) and its release are its own, plain proposals.
 *
 * @param <O> what the primitive's acquire answers its caller
 */
public final class Acquires<O extends Acquires.Outcome> {

    /** What an acquire answers its caller; each primitive has its own, with its own details. */
    public interface Outcome {
        boolean acquired();
    }

    /**
     * How the log answered an acquire, or woke its wait, read by its primitive ({@link Kind#decide}).
     * A refusal ({@link Result.Rejected}) is read here, the same for every primitive.
     */
    public sealed interface Decision<O> {

        /** The lease holds the resource: a fresh grant, or the same one again ({@code again}). */
        record Granted<O>(O outcome, String name, long leaseId, long fencingToken, boolean again) implements Decision<O> {}

        /**
         * The lease waits in the queue. A call that waits parks; one that does not (a try, or the
         * first phase of a two-phase acquire) is answered {@code outcome}.
         */
        record Queued<O>(O outcome) implements Decision<O> {}

        /** Not granted, and not waiting (any more): the resource was busy, or the wait was withdrawn. */
        record NotGranted<O>(O outcome) implements Decision<O> {}
    }

    /**
     * What one waiting primitive's acquires are made of.
     *
     * @param table      its part of the applied state: its name ({@link Primitive#kind()}) is the kind of
     *                   its {@link WaitKey}s, and a lease that holds or waits for the resource there
     *                   already (a retry) is never refused for a limit
     * @param waiters    how many leases wait for a resource ({@code LockTable::waiterCount}), against
     *                   {@link ServerLimits#maxWaitersPerLock()}
     * @param withdrawal the command that withdraws a wait whose call timed out ({@code LockCancel::new})
     * @param decide     how a result of its acquire or its withdrawal reads; null for any other result
     *                   (a bug: the call fails). Never given a {@link Result.Rejected}
     * @param wording    what its limit refusals call things
     */
    public record Kind<T extends Primitive, O>(Class<T> table, ToIntBiFunction<T, String> waiters, Withdrawal withdrawal,
                                               Function<Result, Decision<O>> decide, Wording wording) {}

    /** The command that withdraws lease {@code leaseId}'s wait for {@code name}, in the name of the client's acquire {@code acquireRequest} (0 = none). */
    public interface Withdrawal {
        Command of(String name, long leaseId, long acquireRequest);
    }

    /** What a primitive records of its acquires: its metrics and log lines. Called on the apply thread: keep each quick. */
    public interface Journal<O> {

        /**
         * One call ended after {@code nanos}: {@code result} is acquired, queued (a two-phase
         * acquire's first phase), {@link #NOT_ACQUIRED}, or {@link ServerMetrics#failureResult}.
         */
        void measured(String result, long nanos);

        /** A call here was granted, {@code via} "immediate" or "hand_off". */
        default void granted(Decision.Granted<O> grant, String via, String requestId) {
        }

        /** A grant whose call here went away before the answer. It is not released: the lease's client may hold it through another call. */
        void leftToLease(Decision.Granted<O> grant);
    }

    /**
     * What a kind's limit refusals call things.
     *
     * @param resource one resource, before its name: "lock" (lock 'a' already has 8 waiters)
     * @param one      one resource, in "the most ... may have": "a lock"
     * @param counted  what a client holds or waits for, as the per-client refusal words it: "locks"
     */
    public record Wording(String resource, String one, String counted) {}

    /** The result {@link Journal#measured} gets for a call answered "not acquired". */
    public static final String NOT_ACQUIRED = "not_acquired";

    /** One acquire call: completes once, granted, not granted, failed, or handed back. */
    public static final class Wait<O extends Outcome> implements Waits.Parked {
        private final Acquires<O> path;
        private final WaitKey key;
        /** The client's id for the acquire (0 = none): its timeout withdraws the wait in its name. */
        private final long acquireRequest;
        private final CompletableFuture<O> outcome = new CompletableFuture<>();
        /** The request that started the wait, for the log line of its grant. */
        private final String requestId = RequestIds.current();
        private volatile ScheduledFuture<?> timeout;
        private volatile boolean abandoned;

        private Wait(Acquires<O> path, WaitKey key, long acquireRequest) {
            this.path = path;
            this.key = key;
            this.acquireRequest = acquireRequest;
        }

        public CompletableFuture<O> outcome() {
            return outcome;
        }

        /**
         * The caller went away: forget the call, and change nothing in the replicated state (see
         * the class comment). Its lease keeps its place in the queue, or what it was granted.
         */
        public void abandon() {
            abandoned = true;
            path.waits.unpark(key, this);
            cancelTimeout();
        }

        /** The log decided: handed the resource over, withdrew the wait, or ended the lease. */
        @Override
        public void woken(Result result) {
            cancelTimeout();
            if (result instanceof Result.Rejected ended) {
                outcome.completeExceptionally(new RequestRejected(ended.code(), "lease_id", ended.message()));
                return;
            }
            Decision<O> decision = path.kind.decide().apply(result);
            if (decision instanceof Decision.Granted<O> grant) {
                path.journal.granted(grant, "hand_off", requestId);
                path.countGrant("hand_off");
                if (abandoned) {
                    path.journal.leftToLease(grant);
                } else {
                    outcome.complete(grant.outcome());
                }
            } else if (decision instanceof Decision.NotGranted<O> withdrawn) {
                outcome.complete(withdrawn.outcome());
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

    private final Kind<?, O> kind;
    private final Journal<O> journal;
    /** The kind of this primitive's wait keys. */
    private final String waitKind;
    private final Proposer proposer;
    private final TenureStateMachine stateMachine;
    private final Waits waits;
    private final Admission admission;
    private final ScheduledExecutorService timer;
    private final ServerLimits limits;
    /** The per-user count for {@code --max-locks-per-user}, shared by every primitive's acquires on this member. */
    private final io.tenure.server.security.UserHolds userHolds;
    /** Where grants are counted by kind and how they came (grants_total); null counts none. */
    private final ServerMetrics metrics;

    public Acquires(Kind<?, O> kind, Journal<O> journal, Proposer proposer, TenureStateMachine stateMachine,
                    io.tenure.server.security.UserHolds userHolds, Waits waits, Admission admission, ScheduledExecutorService timer,
                    ServerLimits limits) {
        this(kind, journal, proposer, stateMachine, userHolds, waits, admission, timer, limits, null);
    }

    /** As the other constructor, counting each grant answered here in {@code metrics} (grants_total, by kind and via). */
    public Acquires(Kind<?, O> kind, Journal<O> journal, Proposer proposer, TenureStateMachine stateMachine,
                    io.tenure.server.security.UserHolds userHolds, Waits waits, Admission admission, ScheduledExecutorService timer,
                    ServerLimits limits, ServerMetrics metrics) {
        this.metrics = metrics;
        this.userHolds = userHolds;
        this.kind = kind;
        this.journal = journal;
        this.waitKind = stateMachine.read(s -> s.primitive(kind.table()).kind().name());
        this.proposer = proposer;
        this.stateMachine = stateMachine;
        this.waits = waits;
        this.admission = admission;
        this.timer = timer;
        this.limits = limits;
    }

    /**
     * Acquires {@code name} for the lease, waiting in its FIFO queue: runs {@code validation} (the
     * primitive's own checks, throwing {@link RequestRejected}), checks the timeout, the member's
     * limits and its load, then proposes {@code command.apply(queue)}. A failed check fails the
     * call before anything goes to the log.
     *
     * @param timeoutMs 0 = do not wait, positive = wait at most that long, -1 = until granted or the lease ends
     * @param requestId the client's id for this acquire, the same on its retries (0 = none)
     * @param enqueue   the first phase of a two-phase acquire: the lease joins the queue and the
     *                  call is answered at once ({@code timeoutMs} is not used)
     * @param command   the acquire command, joining the queue when given true
     */
    public Wait<O> acquire(String name, long leaseId, long timeoutMs, long requestId, boolean enqueue, Runnable validation,
                           Function<Boolean, Command> command) {
        Wait<O> wait = new Wait<>(this, new WaitKey(waitKind, name, leaseId), requestId);
        long started = System.nanoTime();
        wait.outcome.whenComplete((outcome, error) -> journal.measured(error != null ? ServerMetrics.failureResult(error)
                : outcome.acquired() ? "acquired" : enqueue ? "queued" : NOT_ACQUIRED, System.nanoTime() - started));
        boolean queue = enqueue || timeoutMs != 0;
        try {
            validation.run();
            if (timeoutMs < -1) {
                throw RequestRejected.invalid("timeout_ms", "timeout_ms must be -1 (wait until granted), 0 (do not wait) or positive, got "
                        + timeoutMs);
            }
            checkLimits(name, leaseId, queue);
            admission.admit("acquire");
        } catch (RequestRejected | PermissionDenied | LimitExceeded | Overloaded e) {
            wait.outcome.completeExceptionally(e);
            return wait;
        }
        long waitMs = enqueue ? 0 : timeoutMs;
        proposer.propose(command.apply(queue), new Proposer.Answer() {
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
    private void acquired(Wait<O> wait, Result r, long timeoutMs) {
        if (r instanceof Result.Rejected rejected) {
            wait.fail(RequestRejected.of(rejected));
            return;
        }
        Decision<O> decision = kind.decide().apply(r);
        if (decision instanceof Decision.Granted<O> grant) {
            if (!grant.again()) {
                journal.granted(grant, "immediate", wait.requestId);
                countGrant("immediate");
            }
            wait.outcome.complete(grant.outcome());
        } else if (decision instanceof Decision.NotGranted<O> busy) {
            wait.outcome.complete(busy.outcome());
        } else if (decision instanceof Decision.Queued<O> queued && timeoutMs == 0) {
            // The lease already waits (through another call): a try does not wait, and the
            // other call keeps the lease's place.
            wait.outcome.complete(queued.outcome());
        } else if (decision instanceof Decision.Queued) {
            if (wait.abandoned || !waits.park(wait.key, wait)) {
                return; // the caller went away while the acquire was in the log, or the member is stopping
            }
            if (timeoutMs > 0) {
                wait.timeout = timer.schedule(() -> withdraw(wait), timeoutMs, TimeUnit.MILLISECONDS);
            }
        } else {
            wait.fail(new IllegalStateException("unexpected result " + r));
        }
    }

    /**
     * The wait timed out: withdraws it through the log. The withdrawal wakes the calls parked for
     * it ("not acquired"); if the grant won the race, its wake-up came first and answered them.
     */
    private void withdraw(Wait<O> wait) {
        WaitKey key = wait.key;
        proposer.propose(kind.withdrawal().of(key.key(), key.leaseId(), wait.acquireRequest), new Proposer.Answer() {
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

    private void countGrant(String via) {
        if (metrics != null) {
            metrics.granted(waitKind, via);
        }
    }

    /**
     * Refuses a new hold or wait that would take the lease, or the lease's client, over its limit
     * of held and waited-for resources (of every kind), or a new waiter over the resource's queue limit. A
     * lease that already holds or waits for the resource (a retry) is never refused. Read from
     * the applied state: a guard, not an invariant.
     */
    private void checkLimits(String name, long leaseId, boolean wouldWait) {
        Wording words = kind.wording();
        LimitExceeded refusal = stateMachine.read(s -> {
            Primitive table = s.primitive(kind.table());
            if (table.tiedTo(leaseId, name)) {
                return null;
            }
            String clientId = s.clientOf(leaseId);
            if (clientId == null) {
                return null; // the state machine answers NOT_FOUND
            }
            int leaseCount = s.tiesOf(leaseId);
            if (leaseCount >= limits.maxLocksPerLease()) {
                return new LimitExceeded("max-locks-per-lease", "lease " + leaseId + " already holds or waits for " + leaseCount
                        + " resources of every kind (locks, semaphores, elections, barriers, latches), the most one lease may (--max-locks-per-lease)");
            }
            if (s.holdsAndWaits(clientId) >= limits.maxLocksPerClient()) {
                return new LimitExceeded("max-locks-per-client", "client id '" + clientId + "' already holds or waits for "
                        + limits.maxLocksPerClient() + " " + words.counted() + ", the most a client may (--max-locks-per-client)");
            }
            String owner = stateMachine.accessEnabled() ? s.leaseOwner(leaseId).orElse(null) : null;
            if (owner != null && userHolds.estimate(owner, s) >= limits.maxLocksPerUser()) {
                return new LimitExceeded("max-locks-per-user", "user '" + owner + "' already holds or waits for " + limits.maxLocksPerUser()
                        + " " + words.counted() + " with its leases, the most a user may (--max-locks-per-user)");
            }
            if (wouldWait && waiters(kind, s, name) >= limits.maxWaitersPerLock()) {
                return new LimitExceeded("max-waiters-per-lock", words.resource() + " '" + name + "' already has " + limits.maxWaitersPerLock()
                        + " waiters, the most " + words.one() + " may have (--max-waiters-per-lock); try again later");
            }
            if (owner != null) {
                userHolds.admitted(owner);
            }
            return null;
        });
        if (refusal != null) {
            throw refusal;
        }
    }

    private static <T extends Primitive> int waiters(Kind<T, ?> kind, TenureState state, String name) {
        return kind.waiters().applyAsInt(state.primitive(kind.table()), name);
    }
}
