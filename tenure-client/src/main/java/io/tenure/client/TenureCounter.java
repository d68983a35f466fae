package io.tenure.client;

import io.tenure.proto.v1.CounterAddRequest;
import io.tenure.proto.v1.CounterCompareAndSetRequest;
import io.tenure.proto.v1.CounterGetRequest;
import io.tenure.proto.v1.CounterServiceGrpc;
import io.tenure.proto.v1.CounterSetRequest;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * A replicated 64-bit counter, as {@link TenureClient#counter(String)} hands it out (Hazelcast
 * CP's IAtomicLong, Curator's DistributedAtomicLong): a sequence number, a quota, a tally of
 * finished shards.
 *
 * <pre>{@code
 * TenureCounter batches = client.counter("export/batch");
 * long mine = batches.incrementAndGet();                // 1, 2, 3, ... across every worker
 * if (batches.compareAndSet(mine, 0)) { ... }           // only while nobody moved it since
 * }</pre>
 *
 * <p>A counter that does not exist reads 0 and comes into being at its first change; it is bound
 * to no lease. Every change is applied through the log and answered once it is committed. A
 * change is applied once even when its call is retried after a lost answer or on another member
 * after a failover (the cluster remembers the last 65,536 counter changes): an acknowledged
 * increment is neither lost nor doubled. A sum outside the signed 64-bit range is refused with
 * {@link FailedPreconditionException}, and nothing changes. Reads are linearizable. A counter left
 * at 0 is forgotten after the members' idle time, which only its revisions show.
 *
 * <p>Counters have a namespace of their own: a counter may share its name with a lock.
 *
 * <p>Immutable and thread-safe.
 */
public final class TenureCounter {
    private final TenureClient client;
    private final String name;

    TenureCounter(TenureClient client, String name) {
        this.client = client;
        this.name = name;
    }

    /** The counter's name. */
    public String name() {
        return name;
    }

    /** The value, read linearizably: 0 when the counter does not exist. */
    public long get() {
        return Futures.await(get(FailoverCall.ON_TRANSPORT_THREAD), what());
    }

    /** {@link #get()}, without blocking. */
    public CompletableFuture<Long> getAsync() {
        return get(null);
    }

    private CompletableFuture<Long> get(Executor answers) {
        return client.call(CounterServiceGrpc.getGetMethod(), CounterGetRequest.newBuilder().setName(name).build(), answers)
                .thenApply(r -> r.getValue());
    }

    /**
     * Adds {@code delta} (negative to subtract).
     *
     * @return the value after it
     * @throws FailedPreconditionException if the sum leaves the signed 64-bit range (nothing changes)
     */
    public long addAndGet(long delta) {
        return Futures.await(add(delta, FailoverCall.ON_TRANSPORT_THREAD).thenApply(Change::value), what());
    }

    /** {@link #addAndGet}, without blocking. */
    public CompletableFuture<Long> addAndGetAsync(long delta) {
        return add(delta, null).thenApply(Change::value);
    }

    /** Adds {@code delta}; returns the value before it. */
    public long getAndAdd(long delta) {
        return Futures.await(add(delta, FailoverCall.ON_TRANSPORT_THREAD).thenApply(Change::previous), what());
    }

    /** Adds one; returns the value after it. */
    public long incrementAndGet() {
        return addAndGet(1);
    }

    /** {@link #incrementAndGet}, without blocking. */
    public CompletableFuture<Long> incrementAndGetAsync() {
        return addAndGetAsync(1);
    }

    /** Subtracts one; returns the value after it. */
    public long decrementAndGet() {
        return addAndGet(-1);
    }

    /** {@link #decrementAndGet}, without blocking. */
    public CompletableFuture<Long> decrementAndGetAsync() {
        return addAndGetAsync(-1);
    }

    /** Sets the value, whatever it was. */
    public void set(long value) {
        Futures.await(set(value, FailoverCall.ON_TRANSPORT_THREAD), what());
    }

    /** {@link #set}, without blocking; completes with the value it had before. */
    public CompletableFuture<Long> setAsync(long value) {
        return set(value, null);
    }

    private CompletableFuture<Long> set(long value, Executor answers) {
        CounterSetRequest request = CounterSetRequest.newBuilder().setName(name).setValue(value)
                .setRequestId(client.nextAcquireRequest()).build();
        return client.call(CounterServiceGrpc.getSetMethod(), request, answers).thenApply(r -> r.getPrevious());
    }

    /**
     * Sets the value to {@code value} if it is {@code expected} now (0 when the counter does not exist).
     *
     * @return true when it was set; false when the counter had another value (nothing changed)
     */
    public boolean compareAndSet(long expected, long value) {
        return Futures.await(compareAndSet(expected, value, FailoverCall.ON_TRANSPORT_THREAD), what());
    }

    /** {@link #compareAndSet}, without blocking. */
    public CompletableFuture<Boolean> compareAndSetAsync(long expected, long value) {
        return compareAndSet(expected, value, null);
    }

    private CompletableFuture<Boolean> compareAndSet(long expected, long value, Executor answers) {
        CounterCompareAndSetRequest request = CounterCompareAndSetRequest.newBuilder().setName(name).setExpected(expected).setValue(value)
                .setRequestId(client.nextAcquireRequest()).build();
        return client.call(CounterServiceGrpc.getCompareAndSetMethod(), request, answers).thenApply(r -> r.getSwapped());
    }

    /** One change as answered: the value before and after it. */
    private record Change(long previous, long value) {}

    /** {@code answers}: {@link FailoverCall#ON_TRANSPORT_THREAD} for a caller that only blocks on the result, else null. */
    private CompletableFuture<Change> add(long delta, Executor answers) {
        CounterAddRequest request = CounterAddRequest.newBuilder().setName(name).setDelta(delta)
                .setRequestId(client.nextAcquireRequest()).build();
        return client.call(CounterServiceGrpc.getAddMethod(), request, answers).thenApply(r -> new Change(r.getPrevious(), r.getValue()));
    }

    private String what() {
        return "counter '" + name + "'";
    }

    @Override
    public String toString() {
        return "TenureCounter{name='" + name + "'}";
    }
}
