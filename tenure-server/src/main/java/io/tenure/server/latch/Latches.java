package io.tenure.server.latch;

import io.tenure.core.Limits;
import io.tenure.core.access.Level;
import io.tenure.core.kernel.Result;
import io.tenure.core.latch.LatchAwait;
import io.tenure.core.latch.LatchCancel;
import io.tenure.core.latch.LatchCountDown;
import io.tenure.core.latch.LatchResult;
import io.tenure.core.latch.LatchSetCount;
import io.tenure.core.latch.LatchTable;
import io.tenure.core.latch.LatchView;
import io.tenure.server.Acquires;
import io.tenure.server.Admission;
import io.tenure.server.Overloaded;
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
 * Count-down latches' operations, for every front end. A set-count and a count-down are plain
 * proposals, applied once per request id. An await takes the path every waiting primitive takes
 * ({@link Acquires}): validated once, guarded by the member's limits, proposed through the log,
 * and parked under (latch, lease) until the count-down to zero releases it, its timeout withdraws
 * it, or its lease ends.
 */
public final class Latches {
    private static final Logger LOG = LoggerFactory.getLogger(Latches.class);

    /** What an await answered: open (the count is zero) at a revision, or not, with the count at the time. */
    public record Outcome(String name, boolean open, long revision, int count) implements Acquires.Outcome {
        @Override
        public boolean acquired() {
            return open;
        }
    }

    /** What a set-count answered: whether it set the count, and the latch's count. */
    public record SetOutcome(String name, boolean set, int count) {}

    /** What a count-down answered: the count after it, and whether the latch existed. */
    public record CountDownOutcome(String name, int count, boolean countedDown) {}

    private final Proposer proposer;
    private final TenureStateMachine stateMachine;
    private final Admission admission;
    private final ServerMetrics metrics;
    private final Acquires<Outcome> acquires;
    private final Permissions permissions;
    /** The kind its permissions name. */
    private static final String KIND = Permissions.kind(LatchTable.NAME);

    public Latches(Proposer proposer, TenureStateMachine stateMachine, Permissions permissions, Waits waits, Admission admission, ScheduledExecutorService timer,
                   ServerMetrics metrics, ServerLimits limits) {
        this.proposer = proposer;
        this.stateMachine = stateMachine;
        this.permissions = permissions;
        this.admission = admission;
        this.metrics = metrics;
        this.acquires = new Acquires<>(new Acquires.Kind<>(LatchTable.class, LatchTable::waiting, LatchCancel::new, Latches::decide,
                new Acquires.Wording("latch", "a latch", "locks, semaphores, elections, barriers and latches")),
                new Journal(), proposer, stateMachine, permissions.userHolds(), waits, admission, timer, limits, metrics);
    }

    /**
     * Sets latch {@code name}'s count when it does not exist.
     *
     * @param requestId the client's id for this set-count, the same on its retries (0 = none)
     */
    public CompletableFuture<SetOutcome> trySetCount(Principal caller, String name, int count, long requestId) {
        CompletableFuture<SetOutcome> outcome = RequestRejected.unless("name", Limits.checkKey("name", name))
                .thenCompose(ok -> RequestRejected.unless("count", LatchTable.checkCount(count)))
                .thenCompose(ok -> permissions.allowed(caller, KIND, name, Level.WRITE))
                .thenCompose(ok -> {
                    try {
                        admission.admit("acquire");
                    } catch (Overloaded e) {
                        return CompletableFuture.failedFuture(e);
                    }
                    return proposer.propose(new LatchSetCount(name, count, requestId));
                })
                .thenApply(applied -> {
                    if (applied.result() instanceof LatchResult.CountSet set) {
                        return new SetOutcome(set.key(), set.set(), set.count());
                    }
                    throw RequestRejected.of(applied);
                });
        outcome.whenComplete((set, error) -> metrics.latchChange(error != null ? ServerMetrics.failureResult(error) : set.set() ? "set" : "exists"));
        return outcome;
    }

    /**
     * Lowers latch {@code name}'s count by one.
     *
     * @param requestId the client's id for this count-down, the same on its retries (0 = none)
     */
    public CompletableFuture<CountDownOutcome> countDown(Principal caller, String name, long requestId) {
        CompletableFuture<CountDownOutcome> outcome = RequestRejected.unless("name", Limits.checkKey("name", name))
                .thenCompose(ok -> permissions.allowed(caller, KIND, name, Level.WRITE))
                .thenCompose(ok -> proposer.propose(new LatchCountDown(name, requestId)))
                .thenApply(applied -> {
                    if (applied.result() instanceof LatchResult.CountedDown down) {
                        return new CountDownOutcome(down.key(), down.count(), down.applied());
                    }
                    throw RequestRejected.of(applied);
                });
        outcome.whenComplete((down, error) -> metrics.latchChange(error != null ? ServerMetrics.failureResult(error)
                : !down.countedDown() ? "absent" : down.count() == 0 ? "reached_zero" : "counted_down"));
        return outcome;
    }

    /**
     * Waits for latch {@code name}'s count to reach zero.
     *
     * @param timeoutMs 0 = do not wait, positive = wait at most that long, -1 = until the count is zero or the lease ends
     * @param requestId the client's id for this await, the same on its retries (0 = none)
     */
    public Acquires.Wait<Outcome> await(Principal caller, String name, long leaseId, long timeoutMs, long requestId) {
        return acquires.acquire(name, leaseId, timeoutMs, requestId, false, () -> {
            String problem = Limits.checkKey("name", name);
            if (problem != null) {
                throw RequestRejected.invalid("name", problem);
            }
            // Waiting for a latch only watches it: read, with the caller's own lease.
            permissions.require(caller, KIND, name, Level.READ);
            permissions.requireLease(caller, leaseId);
        }, queue -> new LatchAwait(name, leaseId, queue, requestId));
    }

    private static Acquires.Decision<Outcome> decide(Result r) {
        if (r instanceof LatchResult.Open o) {
            // An await of a latch that did not exist (revision 0) is no grant: it is not counted as one.
            return new Acquires.Decision.Granted<>(new Outcome(o.key(), true, o.revision(), 0), o.key(), o.leaseId(), o.revision(),
                    o.revision() == 0);
        } else if (r instanceof LatchResult.Waiting w) {
            return new Acquires.Decision.Queued<>(new Outcome(w.key(), false, 0, w.count()));
        } else if (r instanceof LatchResult.NotYet n) {
            return new Acquires.Decision.NotGranted<>(new Outcome(n.key(), false, 0, n.count()));
        } else if (r instanceof LatchResult.Left l) {
            return new Acquires.Decision.NotGranted<>(new Outcome(l.key(), false, 0, l.count()));
        }
        return null;
    }

    /** Withdraws the lease's wait at the latch. */
    public CompletableFuture<Outcome> cancel(Principal caller, String name, long leaseId, long requestId) {
        return RequestRejected.unless("name", Limits.checkKey("name", name))
                .thenCompose(ok -> permissions.allowed(caller, KIND, name, Level.READ))
                .thenCompose(ok -> permissions.allowedLease(caller, leaseId))
                .thenCompose(ok -> proposer.propose(new LatchCancel(name, leaseId, requestId)))
                .thenApply(applied -> {
                    if (decide(applied.result()) instanceof Acquires.Decision.NotGranted<Outcome> left) {
                        return left.outcome();
                    }
                    throw RequestRejected.of(applied);
                });
    }

    /** A latch read from one state: null when it does not exist (its count is zero); {@code revision} is that state's. */
    public record Read(LatchView latch, long revision) {}

    /** The latch, read linearizably (after a read barrier). */
    public CompletableFuture<Read> read(Principal caller, String name) {
        return RequestRejected.unless("name", Limits.checkKey("name", name))
                .thenCompose(ok -> permissions.allowed(caller, KIND, name, Level.READ))
                .thenCompose(ok -> admission.admitRead(proposer::readBarrier))
                .thenApply(ignored -> stateMachine.read(s -> new Read(s.primitive(LatchTable.class).latch(name), s.revision())));
    }

    /** Await metrics and log lines. */
    private final class Journal implements Acquires.Journal<Outcome> {
        @Override
        public void measured(String result, long nanos) {
            metrics.latency("latch_await", nanos);
            metrics.latchAwait(result.equals("acquired") ? "released" : result.equals(Acquires.NOT_ACQUIRED) ? "not_released" : result);
        }

        @Override
        public void leftToLease(Acquires.Decision.Granted<Outcome> grant) {
            LOG.debug("event=latch_release_unanswered latch=\"{}\" lease={} revision={}", grant.name(), grant.leaseId(),
                    grant.fencingToken());
        }
    }
}
