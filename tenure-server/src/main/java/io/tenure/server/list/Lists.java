package io.tenure.server.list;

import io.tenure.core.Limits;
import io.tenure.core.access.Level;
import io.tenure.core.kernel.Result;
import io.tenure.core.list.ListAbandon;
import io.tenure.core.list.ListCancel;
import io.tenure.core.list.ListPop;
import io.tenure.core.list.ListPush;
import io.tenure.core.list.ListResult;
import io.tenure.core.list.ListReturn;
import io.tenure.core.list.ListTable;
import io.tenure.core.list.ListView;
import io.tenure.core.list.ListWithdraw;
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

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;

/**
 * Lists' operations, for every front end. A push is a plain proposal, applied once per request
 * id. A pop that may wait takes the path every waiting primitive takes ({@link Acquires}): guarded
 * by the member's limits, proposed through the log, and parked under (list, lease) until a push
 * hands it an item, its timeout withdraws it, or its lease ends. An item popped for a call that
 * went away before its answer is given back ({@link #giveBack}): no item is lost to a caller that
 * is gone.
 */
public final class Lists {
    private static final Logger LOG = LoggerFactory.getLogger(Lists.class);

    /** What a pop answered: an item, or none (the list was empty, or the wait ended without one). */
    public record Outcome(String name, boolean popped, byte[] value, boolean left, long requestId) implements Acquires.Outcome {
        @Override
        public boolean acquired() {
            return popped;
        }
    }

    /** What a push answered: the length after it, and the waiter that received the item (0: the list took it). */
    public record PushOutcome(String name, int length, long handedTo) {}

    /** A list read from one state: its length, the items asked for, the waiting leases; {@code revision} is that state's. */
    public record Read(String name, int length, List<byte[]> values, List<Long> waiting, long revision) {}

    private final Proposer proposer;
    private final TenureStateMachine stateMachine;
    private final Admission admission;
    private final ServerMetrics metrics;
    private final Journal journal = new Journal();
    private final Acquires<Outcome> pops;
    private final Permissions permissions;
    /** The kind its permissions name. */
    private static final String KIND = Permissions.kind(ListTable.NAME);

    public Lists(Proposer proposer, TenureStateMachine stateMachine, Permissions permissions, Waits waits, Admission admission, ScheduledExecutorService timer,
                 ServerMetrics metrics, ServerLimits limits) {
        this.proposer = proposer;
        this.stateMachine = stateMachine;
        this.permissions = permissions;
        this.admission = admission;
        this.metrics = metrics;
        this.pops = new Acquires<>(new Acquires.Kind<>(ListTable.class, (table, name) -> {
            ListView view = table.list(name);
            return view == null ? 0 : view.waiting().size();
        }, ListWithdraw::new, Lists::decide, new Acquires.Wording("list", "a list", "locks, semaphores, elections, barriers, latches and lists")),
                journal, proposer, stateMachine, permissions.userHolds(), waits, admission, timer, limits, metrics);
    }

    /**
     * Pushes {@code value} at the head ({@code left}) or the tail of list {@code name}.
     *
     * @param requestId the client's id for this push, the same on its retries (0 = none)
     */
    public CompletableFuture<PushOutcome> push(Principal caller, String name, byte[] value, boolean left, long requestId) {
        CompletableFuture<PushOutcome> outcome = RequestRejected.unless("name", Limits.checkKey("name", name))
                .thenCompose(ok -> RequestRejected.unless("value", ListTable.checkValue(value)))
                .thenCompose(ok -> permissions.allowed(caller, KIND, name, Level.WRITE))
                .thenCompose(ok -> {
                    try {
                        admission.admit("list");
                    } catch (Overloaded e) {
                        return CompletableFuture.failedFuture(e);
                    }
                    return proposer.propose(new ListPush(name, value, left, requestId));
                })
                .thenApply(applied -> {
                    if (applied.result() instanceof ListResult.Pushed p) {
                        return new PushOutcome(p.key(), p.length(), p.handedTo());
                    }
                    throw RequestRejected.of(applied);
                });
        outcome.whenComplete((pushed, error) -> metrics.listChange("push", error != null ? ServerMetrics.failureResult(error)
                : pushed.handedTo() != 0 ? "handed" : "stored"));
        return outcome;
    }

    /**
     * Pops from the head ({@code left}) or the tail of list {@code name}.
     *
     * @param leaseId   the lease a waiting pop waits with; 0 for one that does not wait ({@code timeoutMs} 0)
     * @param timeoutMs 0 = do not wait, positive = wait at most that long, -1 = until an item comes or the lease ends
     * @param requestId the client's id for this pop, the same on its retries (0 = none)
     */
    public Acquires.Wait<Outcome> pop(Principal caller, String name, boolean left, long leaseId, long timeoutMs, long requestId) {
        return pops.acquire(name, leaseId, timeoutMs, requestId, false, () -> {
            String problem = Limits.checkKey("name", name);
            if (problem != null) {
                throw RequestRejected.invalid("name", problem);
            }
            if (leaseId == 0) {
                permissions.require(caller, KIND, name, Level.WRITE);
            } else {
                permissions.requireWithLease(caller, leaseId, KIND, name);
            }
        }, queue -> new ListPop(name, left, leaseId, queue, requestId));
    }

    /** Pops from the head ({@code left}) or the tail of list {@code name} if it has an item, without a lease, never waiting. */
    public CompletableFuture<Outcome> popNow(Principal caller, String name, boolean left, long requestId) {
        long started = System.nanoTime();
        CompletableFuture<Outcome> outcome = RequestRejected.unless("name", Limits.checkKey("name", name))
                .thenCompose(ok -> permissions.allowed(caller, KIND, name, Level.WRITE))
                .thenCompose(ok -> proposer.propose(new ListPop(name, left, 0, false, requestId)))
                .thenApply(applied -> {
                    if (decide(applied.result()) instanceof Acquires.Decision.Granted<Outcome> g) {
                        return g.outcome();
                    } else if (applied.result() instanceof ListResult.Empty) {
                        return new Outcome(name, false, new byte[0], left, requestId);
                    }
                    throw RequestRejected.of(applied);
                });
        outcome.whenComplete((popped, error) -> journal.measured(error != null ? ServerMetrics.failureResult(error)
                : popped.popped() ? "acquired" : Acquires.NOT_ACQUIRED, System.nanoTime() - started));
        return outcome;
    }

    private static Acquires.Decision<Outcome> decide(Result r) {
        if (r instanceof ListResult.Popped p) {
            return new Acquires.Decision.Granted<>(new Outcome(p.key(), true, p.value(), p.left(), p.requestId()), p.key(), p.leaseId(),
                    p.revision(), false);
        } else if (r instanceof ListResult.Waiting w) {
            return new Acquires.Decision.Queued<>(new Outcome(w.key(), false, new byte[0], false, 0));
        } else if (r instanceof ListResult.Empty e) {
            return new Acquires.Decision.NotGranted<>(new Outcome(e.key(), false, new byte[0], false, 0));
        } else if (r instanceof ListResult.Left l) {
            return new Acquires.Decision.NotGranted<>(new Outcome(l.key(), false, new byte[0], false, 0));
        }
        return null;
    }

    /** Withdraws the lease's wait to pop from the list. */
    public CompletableFuture<Outcome> cancel(Principal caller, String name, long leaseId, long requestId) {
        return RequestRejected.unless("name", Limits.checkKey("name", name))
                .thenCompose(ok -> permissions.allowedWithLease(caller, leaseId, KIND, name))
                .thenCompose(ok -> proposer.propose(new ListCancel(name, leaseId, requestId)))
                .thenApply(applied -> {
                    if (decide(applied.result()) instanceof Acquires.Decision.NotGranted<Outcome> left) {
                        return left.outcome();
                    }
                    throw RequestRejected.of(applied);
                });
    }

    /**
     * Gives back {@code value}, popped from {@code name}'s head ({@code left}) or tail for pop
     * {@code requestId}, whose caller went away before its answer: the next waiter gets it, or it
     * goes back where it was. Not when a retry of that pop was answered with it meanwhile.
     */
    public void giveBack(String name, byte[] value, boolean left, long requestId) {
        proposer.propose(new ListReturn(name, value, left, requestId)).whenComplete((applied, error) -> {
            if (error != null) {
                LOG.warn("event=list_item_not_returned list=\"{}\" pop={} reason=\"{}\": the item popped for a caller that went away "
                        + "is lost unless that caller retries its pop", name, requestId, error.toString());
            } else {
                metrics.listChange("return", applied.result() instanceof ListResult.Returned ? "returned" : "kept_by_retry");
            }
        });
    }

    /**
     * The call of pop {@code requestId} by lease {@code leaseId} went away before its answer:
     * through the log, its wait is withdrawn, or the item it was answered with is given back
     * (unless a retry of it was answered with the item meanwhile). {@code popped} is the item this
     * member answered, if any: a pop without a request id is given back by value.
     */
    public void abandon(String name, long leaseId, long requestId, Outcome popped) {
        if (requestId == 0) {
            if (popped != null && popped.popped()) {
                giveBack(name, popped.value(), popped.left(), 0);
            } else if (leaseId != 0) {
                proposer.propose(new ListAbandon(name, leaseId, 0));
            }
            return;
        }
        proposer.propose(new ListAbandon(name, leaseId, requestId)).whenComplete((applied, error) -> {
            if (error != null) {
                LOG.warn("event=list_pop_not_abandoned list=\"{}\" lease={} pop={} reason=\"{}\": a retry of that pop gets its item",
                        name, leaseId, requestId, error.toString());
            } else if (applied.result() instanceof ListResult.Returned) {
                metrics.listChange("return", "returned");
            }
        });
    }

    /** The list's length, items {@code start} to {@code stop} (at most {@link Limits#MAX_LIST}), and its waiters, read linearizably. */
    public CompletableFuture<Read> read(Principal caller, String name, long start, long stop) {
        return RequestRejected.unless("name", Limits.checkKey("name", name))
                .thenCompose(ok -> permissions.allowed(caller, KIND, name, Level.READ))
                .thenCompose(ok -> admission.admitRead(proposer::readBarrier))
                .thenApply(ignored -> stateMachine.read(s -> {
                    ListTable table = s.primitive(ListTable.class);
                    ListView view = table.list(name);
                    return new Read(name, table.length(name), table.range(name, start, stop, Limits.MAX_LIST),
                            view == null ? List.of() : view.waiting().stream().map(ListView.Waiter::leaseId).toList(), s.revision());
                }));
    }

    /** Pop metrics, and the items popped for calls that went away. */
    private final class Journal implements Acquires.Journal<Outcome> {
        @Override
        public void measured(String result, long nanos) {
            metrics.latency("list_pop", nanos);
            metrics.listChange("pop", result.equals("acquired") ? "popped" : result.equals(Acquires.NOT_ACQUIRED) ? "empty" : result);
        }

        @Override
        public void leftToLease(Acquires.Decision.Granted<Outcome> grant) {
            // The item is not the lease's to keep: nobody would ever see it. It goes back.
            LOG.debug("event=list_item_unanswered list=\"{}\" lease={}", grant.name(), grant.leaseId());
            Outcome popped = grant.outcome();
            giveBack(popped.name(), popped.value(), popped.left(), popped.requestId());
        }
    }
}
