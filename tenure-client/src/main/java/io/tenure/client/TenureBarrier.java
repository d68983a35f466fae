package io.tenure.client;

import io.tenure.proto.v1.BarrierAwaitRequest;
import io.tenure.proto.v1.BarrierAwaitResponse;
import io.tenure.proto.v1.BarrierDescribeRequest;
import io.tenure.proto.v1.BarrierLeaveRequest;
import io.tenure.proto.v1.BarrierServiceGrpc;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * A barrier, as {@link TenureClient#barrier(String, int)} hands it out: {@link #parties()}
 * workers arrive with {@link #await} and are released together when the last one arrives, on
 * every client of the cluster at once (they all see the same release revision).
 *
 * <pre>{@code
 * TenureBarrier start = client.barrier("reindex/start", 4);
 * if (!start.await(Duration.ofMinutes(2))) {
 *     throw new IllegalStateException("not every worker came");   // this worker left the barrier
 * }
 * }</pre>
 *
 * <p>A party waits for a lease: the one given to {@link TenureClient#barrier(String, int, Lease)},
 * or else the client's {@linkplain TenureClient#session() session lease}. A party whose lease ends
 * leaves the barrier, and so does one whose wait times out or is cancelled. The number of parties
 * is fixed while anyone waits: another number fails with {@link FailedPreconditionException}
 * naming both. After a release the barrier starts over. A wait re-attaches on another member when
 * its member fails, keeping its place.
 *
 * <p>Immutable and thread-safe.
 */
public final class TenureBarrier {
    private final TenureClient client;
    private final String name;
    private final int parties;
    private final Lease lease; // null: the client's session lease

    TenureBarrier(TenureClient client, String name, int parties, Lease lease) {
        this.client = client;
        this.name = name;
        this.parties = parties;
        this.lease = lease;
    }

    /** The barrier's name. */
    public String name() {
        return name;
    }

    /** How many parties it releases together. */
    public int parties() {
        return parties;
    }

    /**
     * Arrives and waits until every party has, or until the lease is lost.
     *
     * @return the revision of the release, the same for every party
     */
    public long await() {
        return Futures.await(withLease(held -> awaitAsync(held, null, FailoverCall.ON_TRANSPORT_THREAD)), "barrier '" + name + "'")
                .revision();
    }

    /**
     * Arrives and waits at most {@code timeout} for the others; zero passes only if this is the
     * last party. On a timeout this party leaves the barrier.
     *
     * @return true when released, false when the time ran out
     * @throws LeaseLostException if the lease is lost first
     */
    public boolean await(Duration timeout) {
        checkTimeout(timeout);
        return Futures.await(withLease(held -> awaitAsync(held, timeout, FailoverCall.ON_TRANSPORT_THREAD)), "barrier '" + name + "'")
                .released();
    }

    /** The asynchronous form of {@link #await()}; cancelling the future leaves the barrier. */
    public CompletableFuture<Release> awaitAsync() {
        return withLease(held -> awaitAsync(held, null, null));
    }

    /** The asynchronous form of {@link #await(Duration)}; cancelling the future leaves the barrier. */
    public CompletableFuture<Release> awaitAsync(Duration timeout) {
        checkTimeout(timeout);
        return withLease(held -> awaitAsync(held, timeout, null));
    }

    /**
     * How an await ended: released at {@code revision}, or not (the time ran out) with
     * {@code arrived} other parties waiting when this one left.
     */
    public record Release(boolean released, long revision, int arrived) {}

    /** The parties and who waits, in arrival order, read linearizably. */
    public Description describe() {
        return Futures.await(describeAsync(), "barrier '" + name + "'");
    }

    /** {@link #describe()}, without blocking. */
    public CompletableFuture<Description> describeAsync() {
        return client.call(BarrierServiceGrpc.getDescribeMethod(), BarrierDescribeRequest.newBuilder().setName(name).build(), null)
                .thenApply(r -> new Description(name, r.getExists(), r.getParties(), r.getWaitingList().stream()
                        .map(p -> new Party(p.getLeaseId(), p.getClientId(), p.getArrivedRevision())).toList(), r.getHeader().getRevision()));
    }

    /** A barrier as read: whether anyone waits, its parties and who waits, in arrival order. */
    public record Description(String name, boolean exists, int parties, List<Party> waiting, long revision) {
        public Description {
            waiting = List.copyOf(waiting);
        }
    }

    /** A lease waiting at a barrier, since {@code arrivedRevision}. */
    public record Party(long leaseId, String clientId, long arrivedRevision) {}

    private CompletableFuture<Release> awaitAsync(Lease held, Duration timeout, Executor answers) {
        if (!held.isValid()) {
            return CompletableFuture.failedFuture(held.lostException());
        }
        CompletableFuture<Void> leaving = client.afterWithdrawal(name, held);
        if (leaving != null) {
            return Futures.thenCompose(leaving, done -> awaitAsync(held, timeout, answers), release -> { });
        }
        long timeoutMs = timeout == null ? -1 : FailoverCall.ceilMillis(timeout);
        long requestId = client.nextAcquireRequest();
        BarrierAwaitRequest request = BarrierAwaitRequest.newBuilder().setName(name).setLeaseId(held.id()).setParties(parties)
                .setTimeoutMs(timeoutMs).setRequestId(requestId).build();
        CompletableFuture<BarrierAwaitResponse> call = FailoverCall.wait(client.endpoints(), client.clock(), client.scheduler(),
                BarrierServiceGrpc.getAwaitMethod(), request, timeoutMs, (r, remaining) -> r.toBuilder().setTimeoutMs(remaining).build(),
                client.requestTimeout(), () -> held.isValid() ? null : held.lostException(), answers).result();
        Runnable stopWatchingLease = held.keeper().onLoss(loss -> call.cancel(false));
        CompletableFuture<Release> result = call.handle((response, failure) -> {
            stopWatchingLease.run();
            if (call.isCancelled() && !held.isValid()) {
                throw held.lostException();
            }
            if (failure != null) {
                RuntimeException cause = Futures.rethrowable(failure);
                if (cause instanceof UnavailableException) {
                    leave(held, requestId);
                }
                throw cause;
            }
            return new Release(response.getReleased(), response.getRevision(), response.getArrived());
        });
        result.whenComplete((release, failure) -> {
            if (result.isCancelled()) {
                call.cancel(false);
                leave(held, requestId);
            }
        });
        return result;
    }

    private void leave(Lease held, long requestId) {
        BarrierLeaveRequest request = BarrierLeaveRequest.newBuilder().setName(name).setLeaseId(held.id()).setRequestId(requestId).build();
        client.withdraw(name, held, () -> client.call(BarrierServiceGrpc.getLeaveMethod(), request, null).thenApply(left -> null));
    }

    private static void checkTimeout(Duration timeout) {
        if (timeout == null || timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must be zero or positive, got " + timeout + " (use await() to wait without a limit)");
        }
    }

    private <T> CompletableFuture<T> withLease(java.util.function.Function<Lease, CompletableFuture<T>> call) {
        return client.withLease(lease, call, nothingToUndo -> { });
    }

    @Override
    public String toString() {
        return "TenureBarrier{name='" + name + "', parties=" + parties + ", lease=" + (lease == null ? "session" : String.valueOf(lease.id())) + "}";
    }
}
