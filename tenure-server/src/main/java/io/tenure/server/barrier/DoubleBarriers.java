package io.tenure.server.barrier;

import io.tenure.core.Limits;
import io.tenure.core.access.Level;
import io.tenure.core.barrier.DoubleBarrierEnter;
import io.tenure.core.barrier.DoubleBarrierLeave;
import io.tenure.core.barrier.DoubleBarrierResult;
import io.tenure.core.barrier.DoubleBarrierTable;
import io.tenure.core.barrier.DoubleBarrierView;
import io.tenure.core.barrier.DoubleBarrierWithdraw;
import io.tenure.core.kernel.Result;
import io.tenure.server.Acquires;
import io.tenure.server.Admission;
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
 * Double barriers' operations, for every front end, on the path every waiting primitive takes
 * ({@link Acquires}), twice: an enter parks under (double barrier, lease) until the last entrant
 * lets its generation in, its timeout withdraws the entry, or its lease ends; a leave parks under
 * the same key (a lease waits for one thing at a name at a time) until the last party has left,
 * its timeout stops the wait (the party has left all the same), or its lease ends.
 */
public final class DoubleBarriers {
    private static final Logger LOG = LoggerFactory.getLogger(DoubleBarriers.class);

    /** What an enter answered: entered at a revision, or not, with the leases entering, the parties inside and the parties. */
    public record Entry(String name, boolean entered, long revision, int entering, int inside, int parties) implements Acquires.Outcome {
        @Override
        public boolean acquired() {
            return entered;
        }
    }

    /** What a leave answered: every party left, at a revision (0 when the lease was no party), or not, with the parties still inside. */
    public record Exit(String name, boolean left, long revision, int inside, int parties) implements Acquires.Outcome {
        @Override
        public boolean acquired() {
            return left;
        }
    }

    private static final Acquires.Wording WORDING = new Acquires.Wording("double barrier", "a double barrier",
            "locks, semaphores, elections and barriers");

    private final Proposer proposer;
    private final TenureStateMachine stateMachine;
    private final Admission admission;
    private final ServerMetrics metrics;
    private final Acquires<Entry> enters;
    private final Acquires<Exit> leaves;
    private final Permissions permissions;
    /** The kind its permissions name. */
    private static final String KIND = Permissions.kind(DoubleBarrierTable.NAME);

    public DoubleBarriers(Proposer proposer, TenureStateMachine stateMachine, Permissions permissions, Waits waits, Admission admission, ScheduledExecutorService timer,
                          ServerMetrics metrics, ServerLimits limits) {
        this.proposer = proposer;
        this.stateMachine = stateMachine;
        this.permissions = permissions;
        this.admission = admission;
        this.metrics = metrics;
        this.enters = new Acquires<>(new Acquires.Kind<>(DoubleBarrierTable.class, DoubleBarrierTable::entering, DoubleBarrierWithdraw::new,
                DoubleBarriers::entry, WORDING), new Journal<>("enter", "entered", "not_entered", metrics::doubleBarrierEnter),
                proposer, stateMachine, permissions.userHolds(), waits, admission, timer, limits, metrics);
        // A leave's timeout leaves again without waiting: the party stops waiting, and stays left.
        this.leaves = new Acquires<>(new Acquires.Kind<>(DoubleBarrierTable.class, DoubleBarrierTable::leaving,
                (name, leaseId, request) -> new DoubleBarrierLeave(name, leaseId, false), DoubleBarriers::exit, WORDING),
                new Journal<>("leave", "left", "not_left", metrics::doubleBarrierLeave), proposer, stateMachine, permissions.userHolds(), waits, admission, timer, limits);
    }

    /**
     * Enters double barrier {@code name} of {@code parties} and waits for the others.
     *
     * @param timeoutMs 0 = do not wait, positive = wait at most that long, -1 = until let in or the lease ends
     * @param requestId the client's id for this enter, the same on its retries (0 = none)
     */
    public Acquires.Wait<Entry> enter(Principal caller, String name, long leaseId, int parties, long timeoutMs, long requestId) {
        return enters.acquire(name, leaseId, timeoutMs, requestId, false, () -> {
            checkName(name);
            String problem = DoubleBarrierTable.checkParties(parties);
            if (problem != null) {
                throw RequestRejected.invalid("parties", problem);
            }
            permissions.requireWithLease(caller, leaseId, KIND, name);
        }, queue -> new DoubleBarrierEnter(name, leaseId, parties, queue, requestId));
    }

    /**
     * Leaves double barrier {@code name} and waits until every party of the lease's generation has left.
     *
     * @param timeoutMs 0 = do not wait, positive = wait at most that long, -1 = until every party left or the lease ends
     */
    public Acquires.Wait<Exit> leave(Principal caller, String name, long leaseId, long timeoutMs) {
        return leaves.acquire(name, leaseId, timeoutMs, 0, false, () -> {
            checkName(name);
            permissions.requireWithLease(caller, leaseId, KIND, name);
        },
                queue -> new DoubleBarrierLeave(name, leaseId, queue));
    }

    /** Withdraws the lease's wait to enter; a lease already inside is answered entered. */
    public CompletableFuture<Entry> cancel(Principal caller, String name, long leaseId, long requestId) {
        return RequestRejected.unless("name", Limits.checkKey("name", name))
                .thenCompose(ok -> permissions.allowedWithLease(caller, leaseId, KIND, name))
                .thenCompose(ok -> proposer.propose(new DoubleBarrierWithdraw(name, leaseId, requestId)))
                .thenApply(applied -> {
                    Acquires.Decision<Entry> decision = entry(applied.result());
                    if (decision instanceof Acquires.Decision.Granted<Entry> in) {
                        return in.outcome();
                    } else if (decision instanceof Acquires.Decision.NotGranted<Entry> out) {
                        return out.outcome();
                    }
                    throw RequestRejected.of(applied);
                });
    }

    private static Acquires.Decision<Entry> entry(Result r) {
        if (r instanceof DoubleBarrierResult.Entered e) {
            return new Acquires.Decision.Granted<>(new Entry(e.key(), true, e.revision(), 0, e.parties(), e.parties()), e.key(), e.leaseId(),
                    e.revision(), false);
        } else if (r instanceof DoubleBarrierResult.Entering e) {
            return new Acquires.Decision.Queued<>(new Entry(e.key(), false, 0, e.entering(), e.inside(), e.parties()));
        } else if (r instanceof DoubleBarrierResult.NotEntered n) {
            return new Acquires.Decision.NotGranted<>(new Entry(n.key(), false, 0, n.entering(), 0, n.parties()));
        }
        return null;
    }

    private static Acquires.Decision<Exit> exit(Result r) {
        if (r instanceof DoubleBarrierResult.Left l) {
            return new Acquires.Decision.Granted<>(new Exit(l.key(), true, l.revision(), 0, l.parties()), l.key(), l.leaseId(), l.revision(),
                    false);
        } else if (r instanceof DoubleBarrierResult.Leaving l) {
            return new Acquires.Decision.Queued<>(new Exit(l.key(), false, 0, l.inside(), l.parties()));
        } else if (r instanceof DoubleBarrierResult.NotLeft n) {
            return new Acquires.Decision.NotGranted<>(new Exit(n.key(), false, 0, n.inside(), n.parties()));
        }
        return null;
    }

    /** A double barrier read from one state: null when it does not exist; {@code revision} is that state's. */
    public record Read(DoubleBarrierView barrier, long revision) {}

    /** The double barrier, read linearizably (after a read barrier). */
    public CompletableFuture<Read> read(Principal caller, String name) {
        return RequestRejected.unless("name", Limits.checkKey("name", name))
                .thenCompose(ok -> permissions.allowed(caller, KIND, name, Level.READ))
                .thenCompose(ok -> admission.admitRead(proposer::readBarrier))
                .thenApply(ignored -> stateMachine.read(s -> new Read(s.primitive(DoubleBarrierTable.class).barrier(name), s.revision())));
    }

    private static void checkName(String name) {
        String problem = Limits.checkKey("name", name);
        if (problem != null) {
            throw RequestRejected.invalid("name", problem);
        }
    }

    /** Enter or leave metrics and log lines. */
    private final class Journal<O> implements Acquires.Journal<O> {
        private final String op;
        private final String done;
        private final String notDone;
        private final java.util.function.Consumer<String> count;

        Journal(String op, String done, String notDone, java.util.function.Consumer<String> count) {
            this.op = op;
            this.done = done;
            this.notDone = notDone;
            this.count = count;
        }

        @Override
        public void measured(String result, long nanos) {
            metrics.latency("double_barrier_" + op, nanos);
            count.accept(result.equals("acquired") ? done : result.equals(Acquires.NOT_ACQUIRED) ? notDone : result);
        }

        @Override
        public void leftToLease(Acquires.Decision.Granted<O> grant) {
            LOG.debug("event=double_barrier_{}_unanswered double_barrier=\"{}\" lease={} revision={}", op, grant.name(), grant.leaseId(),
                    grant.fencingToken());
        }
    }
}
