package io.tenure.client;

import io.tenure.proto.v1.LatchAwaitRequest;
import io.tenure.proto.v1.LatchAwaitResponse;
import io.tenure.proto.v1.LatchCancelRequest;
import io.tenure.proto.v1.LatchCountDownRequest;
import io.tenure.proto.v1.LatchDescribeRequest;
import io.tenure.proto.v1.LatchServiceGrpc;
import io.tenure.proto.v1.LatchSetCountRequest;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * A count-down latch, as {@link TenureClient#countDownLatch(String)} hands it out (Hazelcast CP's
 * ICountDownLatch): one process sets a count with {@link #trySetCount}, workers anywhere in the
 * cluster {@link #countDown} as they finish, and whoever needs them all done {@link #await}s
 * the count reaching zero.
 *
 * <pre>{@code
 * TenureCountDownLatch shards = client.countDownLatch("reindex/shards");
 * shards.trySetCount(16);                               // once, by the coordinator
 * ...
 * shards.countDown();                                   // by each worker, when its shard is done
 * ...
 * if (!shards.await(Duration.ofMinutes(10))) {          // by whoever waits for all 16
 *     throw new IllegalStateException(shards.getCount() + " shards not done");
 * }
 * }</pre>
 *
 * <p>A latch exists while its count is above zero, and is bound to no lease: whoever set it may
 * go away. When the count reaches zero every waiter is released together and the latch is gone;
 * it can then be set again. A count-down is applied once even when its call is retried after a
 * lost answer or on another member. A wait is bound to a lease: the one given to
 * {@link TenureClient#countDownLatch(String, Lease)}, or else the client's
 * {@linkplain TenureClient#session() session lease}; a wait whose lease ends, times out or is
 * cancelled is withdrawn (the count is unchanged). A wait re-attaches on another member when its
 * member fails. A name that is a lock, semaphore, election or barrier while it exists fails with
 * {@link FailedPreconditionException} naming both kinds.
 *
 * <p>Immutable and thread-safe.
 */
public final class TenureCountDownLatch {
    /** The largest count a latch may be set to. */
    public static final int MAX_COUNT = 1_000_000;

    private final TenureClient client;
    private final String name;
    private final Lease lease; // null: the client's session lease

    TenureCountDownLatch(TenureClient client, String name, Lease lease) {
        this.client = client;
        this.name = name;
        this.lease = lease;
    }

    /** The latch's name. */
    public String name() {
        return name;
    }

    /**
     * Sets the count when the latch does not exist (its count is zero).
     *
     * @param count 1 to {@value #MAX_COUNT}
     * @return true when this call set it; false when the latch exists (it keeps its count)
     * @throws IllegalArgumentException if {@code count} is out of range
     */
    public boolean trySetCount(int count) {
        return Futures.await(trySetCountAsync(count), "latch '" + name + "'");
    }

    /** {@link #trySetCount}, without blocking. */
    public CompletableFuture<Boolean> trySetCountAsync(int count) {
        checkCount(count);
        LatchSetCountRequest request = LatchSetCountRequest.newBuilder().setName(name).setCount(count)
                .setRequestId(client.nextAcquireRequest()).build();
        return client.call(LatchServiceGrpc.getTrySetCountMethod(), request, null).thenApply(r -> r.getSet());
    }

    /**
     * Lowers the count by one; at zero every waiter is released and the latch is gone. Counting
     * down a latch that does not exist changes nothing.
     *
     * @return the count after it: 0 when it reached zero, or the latch did not exist
     */
    public int countDown() {
        return Futures.await(countDownAsync(), "latch '" + name + "'");
    }

    /** {@link #countDown}, without blocking. */
    public CompletableFuture<Integer> countDownAsync() {
        LatchCountDownRequest request = LatchCountDownRequest.newBuilder().setName(name).setRequestId(client.nextAcquireRequest()).build();
        return client.call(LatchServiceGrpc.getCountDownMethod(), request, null).thenApply(r -> r.getCount());
    }

    /** The count, read linearizably: 0 when the latch does not exist. */
    public int getCount() {
        return Futures.await(getCountAsync(), "latch '" + name + "'");
    }

    /** {@link #getCount}, without blocking. */
    public CompletableFuture<Integer> getCountAsync() {
        return describeAsync().thenApply(Description::count);
    }

    /**
     * Waits until the count is zero (at once when the latch does not exist), or until the lease is lost.
     *
     * @return true
     * @throws LeaseLostException if the lease is lost first
     */
    public boolean await() {
        return Futures.await(withLease(held -> awaitAsync(held, null, FailoverCall.ON_TRANSPORT_THREAD)), "latch '" + name + "'");
    }

    /**
     * Waits at most {@code timeout} for the count to reach zero; zero only reads whether it is.
     *
     * @return true when the count is zero, false when the time ran out (the wait is withdrawn)
     * @throws LeaseLostException if the lease is lost first
     */
    public boolean await(Duration timeout) {
        checkTimeout(timeout);
        return Futures.await(withLease(held -> awaitAsync(held, timeout, FailoverCall.ON_TRANSPORT_THREAD)), "latch '" + name + "'");
    }

    /** The asynchronous form of {@link #await()}; cancelling the future withdraws the wait. */
    public CompletableFuture<Boolean> awaitAsync() {
        return withLease(held -> awaitAsync(held, null, null));
    }

    /** The asynchronous form of {@link #await(Duration)}; cancelling the future withdraws the wait. */
    public CompletableFuture<Boolean> awaitAsync(Duration timeout) {
        checkTimeout(timeout);
        return withLease(held -> awaitAsync(held, timeout, null));
    }

    /** The count and who waits, in arrival order, read linearizably. */
    public Description describe() {
        return Futures.await(describeAsync(), "latch '" + name + "'");
    }

    /** {@link #describe()}, without blocking. */
    public CompletableFuture<Description> describeAsync() {
        return client.call(LatchServiceGrpc.getDescribeMethod(), LatchDescribeRequest.newBuilder().setName(name).build(), null)
                .thenApply(r -> new Description(name, r.getExists(), r.getCount(), r.getInitialCount(), r.getWaitingList().stream()
                        .map(w -> new Waiter(w.getLeaseId(), w.getClientId(), w.getArrivedRevision())).toList(), r.getCreateRevision(),
                        r.getHeader().getRevision()));
    }

    /**
     * A latch as read: whether it exists (its count is above zero), its count, the count it was
     * set to, who waits, in arrival order, the revision it was set at, and the revision read.
     */
    public record Description(String name, boolean exists, int count, int initialCount, List<Waiter> waiting, long createRevision,
                              long revision) {
        public Description {
            waiting = List.copyOf(waiting);
        }
    }

    /** A lease waiting at a latch, since {@code arrivedRevision}. */
    public record Waiter(long leaseId, String clientId, long arrivedRevision) {}

    private CompletableFuture<Boolean> awaitAsync(Lease held, Duration timeout, Executor answers) {
        if (!held.isValid()) {
            return CompletableFuture.failedFuture(held.lostException());
        }
        CompletableFuture<Void> leaving = client.afterWithdrawal(name, held);
        if (leaving != null) {
            return Futures.thenCompose(leaving, done -> awaitAsync(held, timeout, answers), open -> { });
        }
        long timeoutMs = timeout == null ? -1 : FailoverCall.ceilMillis(timeout);
        long requestId = client.nextAcquireRequest();
        LatchAwaitRequest request = LatchAwaitRequest.newBuilder().setName(name).setLeaseId(held.id()).setTimeoutMs(timeoutMs)
                .setRequestId(requestId).build();
        CompletableFuture<LatchAwaitResponse> call = FailoverCall.wait(client.endpoints(), client.clock(), client.scheduler(),
                LatchServiceGrpc.getAwaitMethod(), request, timeoutMs, (r, remaining) -> r.toBuilder().setTimeoutMs(remaining).build(),
                client.requestTimeout(), () -> held.isValid() ? null : held.lostException(), answers).result();
        Runnable stopWatchingLease = held.keeper().onLoss(loss -> call.cancel(false));
        CompletableFuture<Boolean> result = call.handle((response, failure) -> {
            stopWatchingLease.run();
            if (call.isCancelled() && !held.isValid()) {
                throw held.lostException();
            }
            if (failure != null) {
                RuntimeException cause = Futures.rethrowable(failure);
                if (cause instanceof UnavailableException) {
                    cancel(held, requestId);
                }
                throw cause;
            }
            return response.getOpen();
        });
        result.whenComplete((open, failure) -> {
            if (result.isCancelled()) {
                call.cancel(false);
                cancel(held, requestId);
            }
        });
        return result;
    }

    private void cancel(Lease held, long requestId) {
        LatchCancelRequest request = LatchCancelRequest.newBuilder().setName(name).setLeaseId(held.id()).setRequestId(requestId).build();
        client.withdraw(name, held, () -> client.call(LatchServiceGrpc.getCancelMethod(), request, null).thenApply(left -> null));
    }

    private static void checkCount(int count) {
        if (count < 1 || count > MAX_COUNT) {
            throw new IllegalArgumentException("count must be between 1 and " + MAX_COUNT + ", got " + count);
        }
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
        return "TenureCountDownLatch{name='" + name + "', lease=" + (lease == null ? "session" : String.valueOf(lease.id())) + "}";
    }
}
