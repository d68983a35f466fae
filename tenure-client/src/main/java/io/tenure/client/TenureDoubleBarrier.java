package io.tenure.client;

import io.tenure.proto.v1.BarrierParty;
import io.tenure.proto.v1.DoubleBarrierCancelRequest;
import io.tenure.proto.v1.DoubleBarrierDescribeRequest;
import io.tenure.proto.v1.DoubleBarrierEnterRequest;
import io.tenure.proto.v1.DoubleBarrierEnterResponse;
import io.tenure.proto.v1.DoubleBarrierLeaveRequest;
import io.tenure.proto.v1.DoubleBarrierLeaveResponse;
import io.tenure.proto.v1.DoubleBarrierServiceGrpc;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * A double barrier (Curator's DistributedDoubleBarrier), as
 * {@link TenureClient#doubleBarrier(String, int)} hands it out: {@link #parties()} workers
 * {@link #enter} and are let in together when the last of them enters; each {@link #leave}s when
 * done, and they are let go together when every one of them has left. Every client of the
 * cluster sees the same revisions.
 *
 * <pre>{@code
 * try (TenureDoubleBarrier round = client.doubleBarrier("reindex/round", 4)) {
 *     round.enter();          // the four workers start together
 *     reindexMyShard();
 *     round.leave();          // and return once all four are done
 * }
 * }</pre>
 *
 * <p>A party enters with a lease: the one given to {@link TenureClient#doubleBarrier(String, int,
 * Lease)}, or else the client's {@linkplain TenureClient#session() session lease}. A party whose
 * lease ends leaves: before the barrier fills its entry is withdrawn, and inside it counts as
 * having left, so the others' leave completes without it. An enter whose time runs out (or is
 * cancelled) withdraws the entry; the others keep waiting for {@code parties} entrants. A leave
 * whose time runs out stops waiting, but the party has left all the same; leaving again waits
 * again. While a generation is inside, an enter waits for the next generation. The number of
 * parties is fixed while the double barrier exists: another number fails with
 * {@link FailedPreconditionException} naming both. A wait re-attaches on another member when its
 * member fails, keeping its place. {@link #close()} leaves without waiting, once this handle has
 * entered.
 *
 * <p>Thread-safe.
 */
public final class TenureDoubleBarrier implements AutoCloseable {
    private final TenureClient client;
    private final String name;
    private final int parties;
    private final Lease lease; // null: the client's session lease
    /** Whether an enter was sent through this handle since its last completed leave, so that {@link #close()} leaves. */
    private volatile boolean entered;

    TenureDoubleBarrier(TenureClient client, String name, int parties, Lease lease) {
        this.client = client;
        this.name = name;
        this.parties = parties;
        this.lease = lease;
    }

    /** The double barrier's name. */
    public String name() {
        return name;
    }

    /** How many parties enter together. */
    public int parties() {
        return parties;
    }

    /**
     * Enters and waits until every party has entered, or until the lease is lost.
     *
     * @return the revision at which the parties entered, the same for every party
     */
    public long enter() {
        return Futures.await(withLease(held -> enterAsync(held, null, FailoverCall.ON_TRANSPORT_THREAD)), what()).revision();
    }

    /**
     * Enters and waits at most {@code timeout} for the others; zero enters only if this is the
     * last party. On a timeout the entry is withdrawn.
     *
     * @return true when inside, false when the time ran out
     * @throws LeaseLostException if the lease is lost first
     */
    public boolean enter(Duration timeout) {
        checkTimeout(timeout);
        return Futures.await(withLease(held -> enterAsync(held, timeout, FailoverCall.ON_TRANSPORT_THREAD)), what()).entered();
    }

    /** The asynchronous form of {@link #enter()}; cancelling the future withdraws the entry. */
    public CompletableFuture<Entry> enterAsync() {
        return withLease(held -> enterAsync(held, null, null));
    }

    /** The asynchronous form of {@link #enter(Duration)}; cancelling the future withdraws the entry. */
    public CompletableFuture<Entry> enterAsync(Duration timeout) {
        checkTimeout(timeout);
        return withLease(held -> enterAsync(held, timeout, null));
    }

    /**
     * Leaves and waits until every party has left, or until the lease is lost. A lease that is no
     * party (it never entered, or its generation is over) returns at once, with revision 0.
     *
     * @return the revision at which the last party left, the same for every party
     */
    public long leave() {
        return Futures.await(withLease(held -> leaveAsync(held, null, FailoverCall.ON_TRANSPORT_THREAD)), what()).revision();
    }

    /**
     * Leaves and waits at most {@code timeout} for the other parties to leave. On a timeout this
     * party has left all the same, and stops waiting; leaving again waits again.
     *
     * @return true when every party has left, false when the time ran out
     * @throws LeaseLostException if the lease is lost first
     */
    public boolean leave(Duration timeout) {
        checkTimeout(timeout);
        return Futures.await(withLease(held -> leaveAsync(held, timeout, FailoverCall.ON_TRANSPORT_THREAD)), what()).left();
    }

    /** The asynchronous form of {@link #leave()}; cancelling the future stops the wait (the party has left). */
    public CompletableFuture<Exit> leaveAsync() {
        return withLease(held -> leaveAsync(held, null, null));
    }

    /** The asynchronous form of {@link #leave(Duration)}; cancelling the future stops the wait (the party has left). */
    public CompletableFuture<Exit> leaveAsync(Duration timeout) {
        checkTimeout(timeout);
        return withLease(held -> leaveAsync(held, timeout, null));
    }

    /**
     * Leaves without waiting: withdraws a wait to enter, or leaves the generation inside. Nothing
     * happens when the lease is gone (its end left already).
     */
    @Override
    public void close() {
        if (!entered) {
            return; // this handle never entered: nothing to leave
        }
        Futures.await(withLease(held -> held.isValid() ? leaveAsync(held, Duration.ZERO, null).thenApply(exit -> null)
                : CompletableFuture.<Void>completedFuture(null)), what());
    }

    /**
     * How an enter ended: inside since {@code revision}, or not (the time ran out) with
     * {@code entering} leases waiting to enter and {@code inside} parties of a generation still
     * inside when this one withdrew.
     */
    public record Entry(boolean entered, long revision, int entering, int inside) {}

    /** How a leave ended: every party left at {@code revision}, or not (the time ran out) with {@code inside} parties still inside. */
    public record Exit(boolean left, long revision, int inside) {}

    /** Who waits to enter, who is inside and who has left, read linearizably. */
    public Description describe() {
        return Futures.await(client.call(DoubleBarrierServiceGrpc.getDescribeMethod(),
                DoubleBarrierDescribeRequest.newBuilder().setName(name).build(), null)
                .thenApply(r -> new Description(name, r.getExists(), r.getParties(), parties(r.getEnteringList()), parties(r.getInsideList()),
                        parties(r.getLeavingList()), parties(r.getLeftList()), r.getRevision(), r.getHeader().getRevision())), what());
    }

    /**
     * A double barrier as read.
     *
     * @param entering          leases waiting to enter, in arrival order
     * @param inside            the parties inside that have not left
     * @param leaving           parties that have left and wait for the others
     * @param left              parties that have left and do not wait
     * @param enteredRevision   the revision at which the generation inside entered; 0 when none is
     * @param revision          the revision of the read
     */
    public record Description(String name, boolean exists, int parties, List<Party> entering, List<Party> inside, List<Party> leaving,
                              List<Party> left, long enteredRevision, long revision) {
        public Description {
            entering = List.copyOf(entering);
            inside = List.copyOf(inside);
            leaving = List.copyOf(leaving);
            left = List.copyOf(left);
        }
    }

    /** A lease at a double barrier, since {@code revision} (its enter, its generation's entry, or its leave). */
    public record Party(long leaseId, String clientId, long revision) {}

    private static List<Party> parties(List<BarrierParty> parties) {
        return parties.stream().map(p -> new Party(p.getLeaseId(), p.getClientId(), p.getArrivedRevision())).toList();
    }

    private CompletableFuture<Entry> enterAsync(Lease held, Duration timeout, Executor answers) {
        if (!held.isValid()) {
            return CompletableFuture.failedFuture(held.lostException());
        }
        CompletableFuture<Void> withdrawing = client.afterWithdrawal(name, held);
        if (withdrawing != null) {
            return Futures.thenCompose(withdrawing, done -> enterAsync(held, timeout, answers), entry -> { });
        }
        entered = true;
        long timeoutMs = timeout == null ? -1 : FailoverCall.ceilMillis(timeout);
        long requestId = client.nextAcquireRequest();
        DoubleBarrierEnterRequest request = DoubleBarrierEnterRequest.newBuilder().setName(name).setLeaseId(held.id()).setParties(parties)
                .setTimeoutMs(timeoutMs).setRequestId(requestId).build();
        CompletableFuture<DoubleBarrierEnterResponse> call = FailoverCall.wait(client.endpoints(), client.clock(), client.scheduler(),
                DoubleBarrierServiceGrpc.getEnterMethod(), request, timeoutMs, (r, remaining) -> r.toBuilder().setTimeoutMs(remaining).build(),
                client.requestTimeout(), () -> held.isValid() ? null : held.lostException(), answers).result();
        Runnable stopWatchingLease = held.keeper().onLoss(loss -> call.cancel(false));
        CompletableFuture<Entry> result = call.handle((response, failure) -> {
            stopWatchingLease.run();
            if (call.isCancelled() && !held.isValid()) {
                throw held.lostException();
            }
            if (failure != null) {
                RuntimeException cause = Futures.rethrowable(failure);
                if (cause instanceof UnavailableException) {
                    withdrawEntry(held, requestId);
                }
                throw cause;
            }
            return new Entry(response.getEntered(), response.getRevision(), response.getEntering(), response.getInside());
        });
        result.whenComplete((entry, failure) -> {
            if (result.isCancelled()) {
                call.cancel(false);
                withdrawEntry(held, requestId);
            }
        });
        return result;
    }

    private CompletableFuture<Exit> leaveAsync(Lease held, Duration timeout, Executor answers) {
        if (!held.isValid()) {
            return CompletableFuture.failedFuture(held.lostException());
        }
        CompletableFuture<Void> withdrawing = client.afterWithdrawal(name, held);
        if (withdrawing != null) {
            return Futures.thenCompose(withdrawing, done -> leaveAsync(held, timeout, answers), exit -> { });
        }
        long timeoutMs = timeout == null ? -1 : FailoverCall.ceilMillis(timeout);
        DoubleBarrierLeaveRequest request = DoubleBarrierLeaveRequest.newBuilder().setName(name).setLeaseId(held.id())
                .setTimeoutMs(timeoutMs).build();
        CompletableFuture<DoubleBarrierLeaveResponse> call = FailoverCall.wait(client.endpoints(), client.clock(), client.scheduler(),
                DoubleBarrierServiceGrpc.getLeaveMethod(), request, timeoutMs, (r, remaining) -> r.toBuilder().setTimeoutMs(remaining).build(),
                client.requestTimeout(), () -> held.isValid() ? null : held.lostException(), answers).result();
        Runnable stopWatchingLease = held.keeper().onLoss(loss -> call.cancel(false));
        CompletableFuture<Exit> result = call.handle((response, failure) -> {
            stopWatchingLease.run();
            if (call.isCancelled() && !held.isValid()) {
                throw held.lostException();
            }
            if (failure != null) {
                RuntimeException cause = Futures.rethrowable(failure);
                if (cause instanceof UnavailableException) {
                    stopLeaving(held);
                }
                throw cause;
            }
            if (response.getLeft()) {
                entered = false; // nothing left to leave on close
            }
            return new Exit(response.getLeft(), response.getRevision(), response.getInside());
        });
        result.whenComplete((exit, failure) -> {
            if (result.isCancelled()) {
                call.cancel(false);
                stopLeaving(held);
            }
        });
        return result;
    }

    private void withdrawEntry(Lease held, long requestId) {
        DoubleBarrierCancelRequest request = DoubleBarrierCancelRequest.newBuilder().setName(name).setLeaseId(held.id())
                .setRequestId(requestId).build();
        client.withdraw(name, held, () -> client.call(DoubleBarrierServiceGrpc.getCancelMethod(), request, null).thenApply(entry -> null));
    }

    /** Stops a leave's wait on the server (a leave that does not wait), so that the lease may enter again. */
    private void stopLeaving(Lease held) {
        DoubleBarrierLeaveRequest request = DoubleBarrierLeaveRequest.newBuilder().setName(name).setLeaseId(held.id()).setTimeoutMs(0).build();
        client.withdraw(name, held, () -> client.call(DoubleBarrierServiceGrpc.getLeaveMethod(), request, null).thenApply(exit -> null));
    }

    private String what() {
        return "double barrier '" + name + "'";
    }

    private static void checkTimeout(Duration timeout) {
        if (timeout == null || timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must be zero or positive, got " + timeout + " (use enter() or leave() to wait without a limit)");
        }
    }

    private <T> CompletableFuture<T> withLease(java.util.function.Function<Lease, CompletableFuture<T>> call) {
        return client.withLease(lease, call, nothingToUndo -> { });
    }

    @Override
    public String toString() {
        return "TenureDoubleBarrier{name='" + name + "', parties=" + parties + ", lease="
                + (lease == null ? "session" : String.valueOf(lease.id())) + "}";
    }
}
