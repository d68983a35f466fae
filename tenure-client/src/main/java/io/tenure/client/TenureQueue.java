package io.tenure.client;

import com.google.protobuf.ByteString;
import io.tenure.proto.v1.ListCancelRequest;
import io.tenure.proto.v1.ListPopRequest;
import io.tenure.proto.v1.ListPopResponse;
import io.tenure.proto.v1.ListPushRequest;
import io.tenure.proto.v1.ListRangeRequest;
import io.tenure.proto.v1.ListServiceGrpc;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * A replicated list, used as a queue or a deque, as {@link TenureClient#queue(String)} hands it
 * out (Redisson's RBlockingQueue, Curator's DistributedQueue, Redis's lists): producers anywhere
 * {@link #offer} items, consumers anywhere {@link #poll(Duration)} or {@link #take} them.
 *
 * <pre>{@code
 * TenureQueue jobs = client.queue("reindex/jobs");
 * jobs.offer("shard-17".getBytes(UTF_8));                        // at the tail
 * Optional<byte[]> next = jobs.poll(Duration.ofSeconds(30));    // the head, waiting up to 30 s
 * }</pre>
 *
 * <p>An item goes to exactly one caller. Callers waiting for an item are served in arrival order,
 * and a push while anyone waits hands its item straight to the first of them. A wait is bound to a
 * lease: the one given to {@link TenureClient#queue(String, Lease)}, or else the client's
 * {@linkplain TenureClient#session() session lease}. Every push and pop carries a request id, the
 * same on every retry the client makes, so that a retry after a lost answer or a failover pushes
 * once and pops the same item; a pop whose call goes away before its answer (a cancelled future, a
 * timeout) has its item given back to the head, or to the next waiter. Items are at most
 * {@value #MAX_VALUE_BYTES} bytes; a list holds at most {@value #MAX_LENGTH} items
 * ({@link FailedPreconditionException} beyond). Lists have a namespace of their own.
 *
 * <p>Immutable and thread-safe.
 */
public final class TenureQueue {
    /** The largest item, in bytes. */
    public static final int MAX_VALUE_BYTES = 16 * 1024;
    /** The most items one list holds. */
    public static final int MAX_LENGTH = 100_000;

    private final TenureClient client;
    private final String name;
    private final Lease lease; // null: the client's session lease

    TenureQueue(TenureClient client, String name, Lease lease) {
        this.client = client;
        this.name = name;
        this.lease = lease;
    }

    /** The list's name. */
    public String name() {
        return name;
    }

    /** Pushes {@code value} at the tail; returns the length after it (0 when a waiting caller received it). */
    public int offer(byte[] value) {
        return Futures.await(push(value, false, FailoverCall.ON_TRANSPORT_THREAD), what());
    }

    /** Pushes {@code value} at the head (it is popped next); returns the length after it. */
    public int offerFirst(byte[] value) {
        return Futures.await(push(value, true, FailoverCall.ON_TRANSPORT_THREAD), what());
    }

    /** Pushes {@code value} at the head ({@code left}) or the tail, without blocking; completes with the length after it. */
    public CompletableFuture<Integer> pushAsync(byte[] value, boolean left) {
        return push(value, left, null);
    }

    /** {@code answers}: {@link FailoverCall#ON_TRANSPORT_THREAD} for a caller that only blocks on the result, else null. */
    private CompletableFuture<Integer> push(byte[] value, boolean left, Executor answers) {
        checkValue(value);
        ListPushRequest request = ListPushRequest.newBuilder().setName(name).setValue(ByteString.copyFrom(value)).setLeft(left)
                .setRequestId(client.nextAcquireRequest()).build();
        return client.call(ListServiceGrpc.getPushMethod(), request, answers).thenApply(r -> r.getLength());
    }

    /** The head item if there is one, without waiting and without a lease. */
    public Optional<byte[]> poll() {
        return Futures.await(pollAsync(true), what());
    }

    /** {@link #poll()} from the head ({@code left}) or the tail, without blocking. */
    public CompletableFuture<Optional<byte[]>> pollAsync(boolean left) {
        ListPopRequest request = ListPopRequest.newBuilder().setName(name).setLeft(left).setRequestId(client.nextAcquireRequest()).build();
        return client.call(ListServiceGrpc.getPopMethod(), request, null).thenApply(TenureQueue::item);
    }

    /**
     * The head item, waiting at most {@code timeout} for one.
     *
     * @return empty when none came in time (the wait is withdrawn)
     * @throws LeaseLostException if the lease is lost first
     */
    public Optional<byte[]> poll(Duration timeout) {
        checkTimeout(timeout);
        return Futures.await(withLease(held -> popAsync(held, true, timeout, FailoverCall.ON_TRANSPORT_THREAD)), what());
    }

    /** {@link #poll(Duration)} from the head ({@code left}) or the tail; cancelling the future withdraws the wait. */
    public CompletableFuture<Optional<byte[]>> pollAsync(boolean left, Duration timeout) {
        checkTimeout(timeout);
        return withLease(held -> popAsync(held, left, timeout, null));
    }

    /** The head item, waiting until one comes or the lease is lost. */
    public byte[] take() {
        return Futures.await(withLease(held -> popAsync(held, true, null, FailoverCall.ON_TRANSPORT_THREAD)), what()).orElseThrow();
    }

    /** {@link #take()}, without blocking; cancelling the future withdraws the wait. */
    public CompletableFuture<byte[]> takeAsync() {
        CompletableFuture<Optional<byte[]>> pop = withLease(held -> popAsync(held, true, null, null));
        CompletableFuture<byte[]> item = pop.thenApply(Optional::orElseThrow);
        item.whenComplete((value, error) -> {
            if (item.isCancelled()) {
                pop.cancel(true);
            }
        });
        return item;
    }

    /** The number of items, read linearizably. */
    public int size() {
        return Futures.await(range(0, 0, FailoverCall.ON_TRANSPORT_THREAD).thenApply(Range::length), what());
    }

    /**
     * This list as a {@link java.util.concurrent.BlockingQueue} of byte arrays, for code written
     * against the JDK's queues (an executor's work queue, a consumer loop): {@code offer}/{@code add}
     * push at the tail, {@code poll}/{@code take} pop the head (waiting with this queue's lease),
     * {@code peek}, {@code size} and the iterator read it linearizably (the iterator over a copy).
     * Differences, since the list is shared by every client: {@code offer} answers false and
     * {@code add}/{@code put} throw {@link IllegalStateException} when the list is full (100,000
     * items), without waiting for room; {@code remove(Object)}, {@code contains} and the iterator's
     * {@code remove} are not supported; an interrupted {@code take} or {@code poll(timeout)}
     * withdraws its wait before throwing {@link InterruptedException}.
     */
    public java.util.concurrent.BlockingQueue<byte[]> asBlockingQueue() {
        return new QueueView(this);
    }

    /**
     * Items {@code start} to {@code stop}, both included, counted from the head (0) or, when
     * negative, from the tail (-1 the last), with the length, read linearizably.
     */
    public Range range(long start, long stop) {
        return Futures.await(range(start, stop, FailoverCall.ON_TRANSPORT_THREAD), what());
    }

    /** {@link #range}, without blocking. */
    public CompletableFuture<Range> rangeAsync(long start, long stop) {
        return range(start, stop, null);
    }

    private CompletableFuture<Range> range(long start, long stop, Executor answers) {
        ListRangeRequest request = ListRangeRequest.newBuilder().setName(name).setStart(start).setStop(stop).build();
        return client.call(ListServiceGrpc.getRangeMethod(), request, answers).thenApply(r -> new Range(r.getLength(),
                r.getValuesList().stream().map(ByteString::toByteArray).toList(), r.getWaitingLeasesList(), r.getHeader().getRevision()));
    }

    /** Items of a list as read: its length, the items asked for, the leases waiting to pop in arrival order, and the revision read. */
    public record Range(int length, List<byte[]> values, List<Long> waitingLeases, long revision) {
        public Range {
            values = List.copyOf(values);
            waitingLeases = List.copyOf(waitingLeases);
        }
    }

    private CompletableFuture<Optional<byte[]>> popAsync(Lease held, boolean left, Duration timeout, Executor answers) {
        if (!held.isValid()) {
            return CompletableFuture.failedFuture(held.lostException());
        }
        long timeoutMs = timeout == null ? -1 : FailoverCall.ceilMillis(timeout);
        long requestId = client.nextAcquireRequest();
        ListPopRequest request = ListPopRequest.newBuilder().setName(name).setLeft(left).setLeaseId(held.id()).setTimeoutMs(timeoutMs)
                .setRequestId(requestId).build();
        CompletableFuture<ListPopResponse> call = FailoverCall.wait(client.endpoints(), client.clock(), client.scheduler(),
                ListServiceGrpc.getPopMethod(), request, timeoutMs, (r, remaining) -> r.toBuilder().setTimeoutMs(remaining).build(),
                client.requestTimeout(), () -> held.isValid() ? null : held.lostException(), answers).result();
        Runnable stopWatchingLease = held.keeper().onLoss(loss -> call.cancel(false));
        CompletableFuture<Optional<byte[]>> result = call.handle((response, failure) -> {
            stopWatchingLease.run();
            if (call.isCancelled() && !held.isValid()) {
                throw held.lostException();
            }
            if (failure != null) {
                throw Futures.rethrowable(failure);
            }
            return item(response);
        });
        result.whenComplete((item, failure) -> {
            if (result.isCancelled()) {
                call.cancel(false); // the member withdraws the wait, or gives back an item already handed to it
                ListCancelRequest cancel = ListCancelRequest.newBuilder().setName(name).setLeaseId(held.id()).setRequestId(requestId).build();
                client.call(ListServiceGrpc.getCancelMethod(), cancel, null);
            }
        });
        return result;
    }

    private static Optional<byte[]> item(ListPopResponse response) {
        return response.getPopped() ? Optional.of(response.getValue().toByteArray()) : Optional.empty();
    }

    private static void checkValue(byte[] value) {
        if (value == null || value.length > MAX_VALUE_BYTES) {
            throw new IllegalArgumentException("value must be at most " + MAX_VALUE_BYTES + " bytes, got "
                    + (value == null ? "null" : value.length + " bytes"));
        }
    }

    private static void checkTimeout(Duration timeout) {
        if (timeout == null || timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must be zero or positive, got " + timeout + " (use take() to wait without a limit)");
        }
    }

    private <T> CompletableFuture<T> withLease(java.util.function.Function<Lease, CompletableFuture<T>> call) {
        return client.withLease(lease, call, nothingToUndo -> { });
    }

    private String what() {
        return "list '" + name + "'";
    }

    @Override
    public String toString() {
        return "TenureQueue{name='" + name + "', lease=" + (lease == null ? "session" : String.valueOf(lease.id())) + "}";
    }
}
