package io.tenure.server.counter;

import io.tenure.core.Limits;
import io.tenure.core.access.Level;
import io.tenure.core.counter.CounterAdd;
import io.tenure.core.counter.CounterCommand;
import io.tenure.core.counter.CounterCompareAndSet;
import io.tenure.core.counter.CounterResult;
import io.tenure.core.counter.CounterSet;
import io.tenure.core.counter.CounterTable;
import io.tenure.core.counter.CounterView;
import io.tenure.server.Admission;
import io.tenure.server.Overloaded;
import io.tenure.server.RequestRejected;
import io.tenure.server.metrics.ServerMetrics;
import io.tenure.server.raft.Proposer;
import io.tenure.server.raft.TenureStateMachine;
import io.tenure.server.security.Permissions;
import io.tenure.server.security.Principal;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Counters' operations, for every front end. A change is validated here, admitted unless the
 * member is behind, proposed through the log, and answered with what apply decided; a change that
 * names its request is applied once however often it is retried. Reads are linearizable (after a
 * read barrier).
 */
public final class Counters {
    /** The most counters one list answers. */
    public static final int MAX_LIST = Limits.MAX_LIST;

    /**
     * What a change answered: the value after it (for a compare-and-set that did not match, the
     * value the counter has), the value before, whether it changed anything, and its revision (0 when not).
     */
    public record Change(String name, long value, long previous, boolean swapped, long revision) {}

    /** A counter read from one state: {@code counter} is null when it does not exist (it reads 0); {@code revision} is that state's. */
    public record Read(String name, CounterView counter, long revision) {
        public long value() {
            return counter == null ? 0 : counter.value();
        }
    }

    /** Counters read from one state, in name order; {@code more} when others with the prefix follow. */
    public record Listing(List<CounterView> counters, boolean more, long revision) {}

    private final Proposer proposer;
    private final TenureStateMachine stateMachine;
    private final Admission admission;
    private final ServerMetrics metrics;
    private final Permissions permissions;
    /** The kind its permissions name. */
    private static final String KIND = Permissions.kind(CounterTable.NAME);

    public Counters(Proposer proposer, TenureStateMachine stateMachine, Permissions permissions, Admission admission, ServerMetrics metrics) {
        this.proposer = proposer;
        this.stateMachine = stateMachine;
        this.permissions = permissions;
        this.admission = admission;
        this.metrics = metrics;
    }

    /**
     * Adds {@code delta} to counter {@code name}.
     *
     * @param requestId the client's id for this change, the same on its retries (0 = none)
     */
    public CompletableFuture<Change> add(Principal caller, String name, long delta, long requestId) {
        return change(caller, "add", name, new CounterAdd(name, delta, requestId));
    }

    /** Sets counter {@code name} to {@code value}. */
    public CompletableFuture<Change> set(Principal caller, String name, long value, long requestId) {
        return change(caller, "set", name, new CounterSet(name, value, requestId));
    }

    /** Sets counter {@code name} to {@code value} if it is {@code expected} now. */
    public CompletableFuture<Change> compareAndSet(Principal caller, String name, long expected, long value, long requestId) {
        return change(caller, "compare_and_set", name, new CounterCompareAndSet(name, expected, value, requestId));
    }

    private CompletableFuture<Change> change(Principal caller, String op, String name, CounterCommand command) {
        long started = System.nanoTime();
        CompletableFuture<Change> outcome = RequestRejected.unless("name", Limits.checkKey("name", name))
                .thenCompose(ok -> permissions.allowed(caller, KIND, name, Level.WRITE))
                .thenCompose(ok -> {
                    try {
                        admission.admit("counter");
                    } catch (Overloaded e) {
                        return CompletableFuture.failedFuture(e);
                    }
                    return proposer.propose(command);
                })
                .thenApply(applied -> {
                    if (applied.result() instanceof CounterResult.Changed c) {
                        return new Change(c.key(), c.value(), c.previous(), true, c.revision());
                    } else if (applied.result() instanceof CounterResult.CompareFailed f) {
                        return new Change(f.key(), f.value(), f.value(), false, 0);
                    }
                    throw RequestRejected.of(applied);
                });
        outcome.whenComplete((change, error) -> {
            metrics.latency("counter_" + op, System.nanoTime() - started);
            metrics.counterChange(op, error != null ? ServerMetrics.failureResult(error) : change.swapped() ? "changed" : "compare_failed");
        });
        return outcome;
    }

    /** Counter {@code name}, read linearizably. */
    public CompletableFuture<Read> read(Principal caller, String name) {
        return RequestRejected.unless("name", Limits.checkKey("name", name))
                .thenCompose(ok -> permissions.allowed(caller, KIND, name, Level.READ))
                .thenCompose(ok -> admission.admitRead(proposer::readBarrier))
                .thenApply(ignored -> stateMachine.read(s -> new Read(name, s.primitive(CounterTable.class).counter(name), s.revision())));
    }

    /**
     * Counters whose name starts with {@code prefix}, read linearizably, in name order.
     *
     * @param limit 1 to {@value #MAX_LIST}; 0 means {@value #MAX_LIST}
     */
    public CompletableFuture<Listing> list(Principal caller, String prefix, int limit) {
        if (limit < 0 || limit > MAX_LIST) {
            return CompletableFuture.failedFuture(RequestRejected.invalid("limit", "limit must be between 1 and " + MAX_LIST + " (0 = "
                    + MAX_LIST + "), got " + limit));
        }
        int most = limit == 0 ? MAX_LIST : limit;
        return permissions.allowed(caller, KIND, prefix == null ? "" : prefix, Level.READ)
                .thenCompose(ok -> admission.admitRead(proposer::readBarrier))
                .thenApply(ignored -> stateMachine.read(s -> {
                    List<CounterView> found = s.primitive(CounterTable.class).counters(prefix == null ? "" : prefix, most + 1);
                    boolean more = found.size() > most;
                    return new Listing(more ? found.subList(0, most) : found, more, s.revision());
                }));
    }
}
