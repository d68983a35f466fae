package io.tenure.server.barrier;

import io.tenure.core.Limits;
import io.tenure.core.access.Level;
import io.tenure.core.barrier.BarrierAwait;
import io.tenure.core.barrier.BarrierCancel;
import io.tenure.core.barrier.BarrierResult;
import io.tenure.core.barrier.BarrierTable;
import io.tenure.core.barrier.BarrierView;
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
 * Barriers' operations, for every front end, on the path every waiting primitive takes
 * ({@link Acquires}): an await is validated once, guarded by the member's limits, proposed
 * through the log, and parks under (barrier, lease) until the last party's arrival releases it,
 * its timeout withdraws it (the party leaves), or its lease ends.
 */
public final class Barriers {
    private static final Logger LOG = LoggerFactory.getLogger(Barriers.class);

    /** What an await answered: released at a revision, or not, with the parties arrived at the time. */
    public record Outcome(String name, boolean released, long revision, int arrived, int parties) implements Acquires.Outcome {
        @Override
        public boolean acquired() {
            return released;
        }
    }

    private final Proposer proposer;
    private final TenureStateMachine stateMachine;
    private final Admission admission;
    private final ServerMetrics metrics;
    private final Acquires<Outcome> acquires;
    private final Permissions permissions;
    /** The kind its permissions name. */
    private static final String KIND = Permissions.kind(BarrierTable.NAME);

    public Barriers(Proposer proposer, TenureStateMachine stateMachine, Permissions permissions, Waits waits, Admission admission, ScheduledExecutorService timer,
                    ServerMetrics metrics, ServerLimits limits) {
        this.proposer = proposer;
        this.stateMachine = stateMachine;
        this.permissions = permissions;
        this.admission = admission;
        this.metrics = metrics;
        this.acquires = new Acquires<>(new Acquires.Kind<>(BarrierTable.class, BarrierTable::waiting, BarrierCancel::new, Barriers::decide,
                new Acquires.Wording("barrier", "a barrier", "locks, semaphores, elections and barriers")),
                new Journal(), proposer, stateMachine, permissions.userHolds(), waits, admission, timer, limits, metrics);
    }

    /**
     * Arrives at barrier {@code name} of {@code parties} and waits for the others.
     *
     * @param timeoutMs 0 = do not wait, positive = wait at most that long, -1 = until released or the lease ends
     * @param requestId the client's id for this await, the same on its retries (0 = none)
     */
    public Acquires.Wait<Outcome> await(Principal caller, String name, long leaseId, int parties, long timeoutMs, long requestId) {
        return acquires.acquire(name, leaseId, timeoutMs, requestId, false, () -> {
            checkName(name);
            String problem = BarrierTable.checkParties(parties);
            if (problem != null) {
                throw RequestRejected.invalid("parties", problem);
            }
            permissions.requireWithLease(caller, leaseId, KIND, name);
        }, queue -> new BarrierAwait(name, leaseId, parties, queue, requestId));
    }

    private static Acquires.Decision<Outcome> decide(Result r) {
        if (r instanceof BarrierResult.Released b) {
            return new Acquires.Decision.Granted<>(new Outcome(b.key(), true, b.revision(), b.parties(), b.parties()), b.key(), b.leaseId(),
                    b.revision(), false);
        } else if (r instanceof BarrierResult.Waiting w) {
            return new Acquires.Decision.Queued<>(new Outcome(w.key(), false, 0, w.arrived(), w.parties()));
        } else if (r instanceof BarrierResult.NotYet n) {
            return new Acquires.Decision.NotGranted<>(new Outcome(n.key(), false, 0, n.arrived(), n.parties()));
        } else if (r instanceof BarrierResult.Left l) {
            return new Acquires.Decision.NotGranted<>(new Outcome(l.key(), false, 0, l.arrived(), l.parties()));
        }
        return null;
    }

    /** Leaves the barrier before it releases. */
    public CompletableFuture<Outcome> leave(Principal caller, String name, long leaseId, long requestId) {
        return RequestRejected.unless("name", Limits.checkKey("name", name))
                .thenCompose(ok -> permissions.allowedWithLease(caller, leaseId, KIND, name))
                .thenCompose(ok -> proposer.propose(new BarrierCancel(name, leaseId, requestId)))
                .thenApply(applied -> {
                    if (decide(applied.result()) instanceof Acquires.Decision.NotGranted<Outcome> left) {
                        return left.outcome();
                    }
                    throw RequestRejected.of(applied);
                });
    }

    /** A barrier read from one state: null when nobody waits at it; {@code revision} is that state's. */
    public record Read(BarrierView barrier, long revision) {}

    /** The barrier, read linearizably (after a read barrier). */
    public CompletableFuture<Read> read(Principal caller, String name) {
        return RequestRejected.unless("name", Limits.checkKey("name", name))
                .thenCompose(ok -> permissions.allowed(caller, KIND, name, Level.READ))
                .thenCompose(ok -> admission.admitRead(proposer::readBarrier))
                .thenApply(ignored -> stateMachine.read(s -> new Read(s.primitive(BarrierTable.class).barrier(name), s.revision())));
    }

    private static void checkName(String name) {
        String problem = Limits.checkKey("name", name);
        if (problem != null) {
            throw RequestRejected.invalid("name", problem);
        }
    }

    /** Await metrics and log lines. */
    private final class Journal implements Acquires.Journal<Outcome> {
        @Override
        public void measured(String result, long nanos) {
            metrics.latency("barrier_await", nanos);
            metrics.barrierAwait(result.equals("acquired") ? "released" : result.equals(Acquires.NOT_ACQUIRED) ? "not_released" : result);
        }

        @Override
        public void leftToLease(Acquires.Decision.Granted<Outcome> grant) {
            LOG.debug("event=barrier_release_unanswered barrier=\"{}\" lease={} revision={}", grant.name(), grant.leaseId(),
                    grant.fencingToken());
        }
    }
}
