package io.tenure.client;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * A lease's place in the queue of a lock or a semaphore: the first phase of a two-phase acquire
 * ({@link TenureLock#enqueue()}, {@link TenureSemaphore#enqueue(int)}; seed 004's enqueue, then
 * wait). Either it was granted at once ({@link #granted()}), or the lease waits in the queue with
 * {@link #ahead()} waiters before it, and keeps its place while the caller does other work, until
 * {@link #await} waits for the grant. The place belongs to the lease: it ends when the lease ends,
 * when {@link #withdraw()} gives it up, or when an {@link #await} times out (the place is then
 * given up, as any acquire's timeout does).
 *
 * @param <H> what a grant is: a {@link LockHandle}, or a {@link SemaphorePermit}
 */
public final class QueuePlace<H> {
    private final String name;
    private final Lease lease;
    private final H granted;
    private final long ahead;
    private final Function<Duration, CompletableFuture<H>> await;
    private final Supplier<CompletableFuture<Void>> withdraw;
    private final Function<H, CompletableFuture<Void>> release;

    QueuePlace(String name, Lease lease, H granted, long ahead, Function<Duration, CompletableFuture<H>> await,
               Supplier<CompletableFuture<Void>> withdraw, Function<H, CompletableFuture<Void>> release) {
        this.name = name;
        this.lease = lease;
        this.granted = granted;
        this.ahead = ahead;
        this.await = await;
        this.withdraw = withdraw;
        this.release = release;
    }

    /** The lock's or semaphore's name. */
    public String name() {
        return name;
    }

    /** The lease whose place this is. */
    public Lease lease() {
        return lease;
    }

    /** The grant, when the lease was granted at once. */
    public Optional<H> granted() {
        return Optional.ofNullable(granted);
    }

    /** How many waiters were ahead of the lease when it joined (0 when granted). */
    public long ahead() {
        return ahead;
    }

    /**
     * Waits for the grant at most {@code timeout}, keeping the place ({@code null} waits until
     * granted or the lease is lost). Returns at once when it was granted at enqueue.
     *
     * @throws TenureException {@link LockNotAcquiredException} for a lock, {@link SemaphoreNotAcquiredException}
     *                         for a semaphore, when not granted in time (the place is then given up);
     *                         {@link LeaseLostException} when the lease is lost
     */
    public H await(Duration timeout) {
        return Futures.await(awaitAsync(timeout), "the place of lease " + lease.id() + " in the queue of '" + name + "'");
    }

    /** The asynchronous form of {@link #await(Duration)}; cancelling it gives the place up. */
    public CompletableFuture<H> awaitAsync(Duration timeout) {
        if (granted != null) {
            return CompletableFuture.completedFuture(granted);
        }
        return await.apply(timeout);
    }

    /** Gives the place up (or releases the grant, when it was granted at enqueue). */
    public void withdraw() {
        Futures.await(withdrawAsync(), "the withdrawal of lease " + lease.id() + " from '" + name + "'");
    }

    /** The asynchronous form of {@link #withdraw()}. */
    public CompletableFuture<Void> withdrawAsync() {
        return granted != null ? release.apply(granted) : withdraw.get();
    }

    @Override
    public String toString() {
        return "QueuePlace{name='" + name + "', lease=" + lease.id() + (granted != null ? ", granted" : ", ahead=" + ahead) + "}";
    }
}
