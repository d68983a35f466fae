package io.tenure.client;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A named lock, as {@link TenureClient#lock(String)} hands it out: nothing is sent until an
 * acquire. Acquiring returns a {@link LockHandle} carrying the fencing token of the grant.
 *
 * <pre>{@code
 * TenureLock lock = client.lock("jobs/nightly-report");
 * try (LockHandle held = lock.acquire(Duration.ofSeconds(30))) {
 *     report.publish(data, held.fencingToken());
 * }
 * }</pre>
 *
 * <p>The lock is acquired for a lease: the one given to {@link TenureClient#lock(String, Lease)},
 * or else the client's {@linkplain TenureClient#session() session lease}, granted on first use
 * and granted anew once lost. A waiting acquire joins the lock's FIFO queue on the server and is
 * granted in turn, one waiter per release; it never polls, and when the member it waits on fails
 * it re-attaches on another member keeping its place. Acquiring again for the same lease while it
 * holds the lock returns the same grant (same token), so a retry after an ambiguous failure never
 * makes a second queue entry.
 *
 * <p>Immutable and thread-safe; {@link #withMetadata(byte[])} returns a new instance.
 */
public final class TenureLock {
    private final TenureClient client;
    private final String name;
    private final Lease lease; // null: the client's session lease
    private final byte[] metadata;
    private final LockMode mode;

    TenureLock(TenureClient client, String name, Lease lease, byte[] metadata, LockMode mode) {
        this.client = client;
        this.name = name;
        this.lease = lease;
        this.metadata = metadata;
        this.mode = mode;
    }

    /** How its grants hold the lock: {@link LockMode#WRITE} (alone) unless it is a {@linkplain TenureReadWriteLock#readLock() read lock}. */
    public LockMode mode() {
        return mode;
    }

    /** The lock's name (its key). */
    public String name() {
        return name;
    }

    /** The same lock, acquired with {@code metadata} shown to others next to the holder (at most 64 KiB). */
    public TenureLock withMetadata(byte[] metadata) {
        return new TenureLock(client, name, lease, metadata == null ? null : metadata.clone(), mode);
    }

    /** {@link #withMetadata(byte[])} with UTF-8 text. */
    public TenureLock withMetadata(String metadata) {
        return withMetadata(metadata == null ? null : metadata.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Waits in the queue until granted, or until the lease is lost.
     *
     * @throws LeaseLostException   if the lease is lost before the grant (the wait is withdrawn)
     * @throws UnavailableException if no member could be reached
     */
    public LockHandle acquire() {
        return Futures.await(withLease(held -> client.acquireAsync(name, held, null, metadata, FailoverCall.ON_TRANSPORT_THREAD, 0, mode),
                LockHandle::releaseAsync), "lock '" + name + "'");
    }

    /**
     * Waits in the queue at most {@code timeout}; zero tries once without waiting.
     *
     * @throws LockNotAcquiredException if not granted in time; it names the holder and the queue
     *                                  length (the wait is withdrawn on the server)
     * @throws LeaseLostException       if the lease is lost before the grant
     */
    public LockHandle acquire(Duration timeout) {
        checkTimeout(timeout);
        return Futures.await(withLease(held -> client.acquireAsync(name, held, timeout, metadata, FailoverCall.ON_TRANSPORT_THREAD, 0, mode),
                LockHandle::releaseAsync), "lock '" + name + "'");
    }

    /** Acquires only if free (or already held by this lease); never waits or joins the queue. */
    public Optional<LockHandle> tryAcquire() {
        return Futures.await(withLease(held -> client.tryAcquireAsync(name, held, metadata, FailoverCall.ON_TRANSPORT_THREAD, mode),
                granted -> granted.ifPresent(LockHandle::releaseAsync)), "try-lock '" + name + "'");
    }

    /**
     * The first phase of a two-phase acquire (seed 004's enqueue): the lease joins the queue and
     * this returns at once, granted or with its place; {@link QueuePlace#await} then waits for
     * the grant, keeping the place. For a worker that wants to know its position, or to do other
     * work, before it waits.
     *
     * <pre>{@code
     * QueuePlace<LockHandle> place = lock.enqueue();
     * log.info("{} waiters ahead", place.ahead());
     * prepare();
     * try (LockHandle held = place.await(Duration.ofMinutes(5))) { ... }
     * }</pre>
     */
    public QueuePlace<LockHandle> enqueue() {
        return Futures.await(enqueueAsync(), "lock '" + name + "'");
    }

    /** The asynchronous form of {@link #enqueue()}. */
    public CompletableFuture<QueuePlace<LockHandle>> enqueueAsync() {
        return withLease(held -> client.enqueueAsync(name, held, metadata, null, mode), place -> place.withdrawAsync());
    }

    /** The asynchronous form of {@link #acquire()}; cancelling the future withdraws the wait. */
    public CompletableFuture<LockHandle> acquireAsync() {
        return withLease(held -> client.acquireAsync(name, held, null, metadata, null, 0, mode), LockHandle::releaseAsync);
    }

    /** The asynchronous form of {@link #acquire(Duration)}; cancelling the future withdraws the wait. */
    public CompletableFuture<LockHandle> acquireAsync(Duration timeout) {
        checkTimeout(timeout);
        return withLease(held -> client.acquireAsync(name, held, timeout, metadata, null, 0, mode), LockHandle::releaseAsync);
    }

    /** The asynchronous form of {@link #tryAcquire()}. */
    public CompletableFuture<Optional<LockHandle>> tryAcquireAsync() {
        return withLease(held -> client.tryAcquireAsync(name, held, metadata, null, mode), granted -> granted.ifPresent(LockHandle::releaseAsync));
    }

    /**
     * Acquires with bounded retries (seed of the HTTP lock server's {@code AcquireWithRetry}): each
     * attempt waits in the queue for up to {@link RetryPolicy#attemptTimeout()}; an attempt that
     * times out, finds no member, meets a member's limit, or (with the session lease) loses its
     * lease is retried after a
     * jittered backoff, up to {@link RetryPolicy#maxAttempts()} attempts. Other refusals (an
     * invalid name, an explicit lease that is lost) end it at once.
     *
     * @throws TenureException the last attempt's failure, with the earlier ones attached as suppressed
     */
    public LockHandle acquireWithRetry(RetryPolicy policy) {
        return Futures.await(acquireWithRetryAsync(policy), "lock '" + name + "' with retries");
    }

    /** The asynchronous form of {@link #acquireWithRetry(RetryPolicy)}; cancelling stops the retries. */
    public CompletableFuture<LockHandle> acquireWithRetryAsync(RetryPolicy policy) {
        java.util.Objects.requireNonNull(policy, "policy");
        CompletableFuture<LockHandle> result = new CompletableFuture<>();
        attempt(policy, 1, new ArrayList<>(), result);
        return result;
    }

    /**
     * This lock as a {@link java.util.concurrent.locks.Lock} ({@code lock}, {@code lockInterruptibly},
     * {@code tryLock}, {@code tryLock(time, unit)}, {@code unlock}) with the grant's
     * {@link FencedLock#fencingToken()}, for code written against the JDK's locks. Its one
     * difference: ownership is this lock's lease, not a thread (see {@link FencedLock}). Each call
     * returns a new view with a hold count of its own: keep one per name and lease.
     */
    public FencedLock asLock() {
        return new FencedLock(this);
    }

    /** Who holds this lock and who waits, read linearizably. */
    public LockDescription describe() {
        return client.describe(name);
    }

    /** The asynchronous form of {@link #describe()}. */
    public CompletableFuture<LockDescription> describeAsync() {
        return client.describeAsync(name);
    }

    /**
     * Waits until the lock is free (nobody holds it), at most {@code timeout}, without acquiring
     * it: for a worker that must not start while another runs, or a test. It starts a watch on
     * the lock first and only then reads its state (seed 001's watch-then-read), so a release
     * between the two is not missed; nothing polls.
     *
     * @return true when the lock was seen free, false when the time ran out with it held
     */
    public boolean awaitFree(Duration timeout) {
        return Futures.await(awaitFreeAsync(timeout), "lock '" + name + "' to be free");
    }

    /** The asynchronous form of {@link #awaitFree(Duration)}; cancelling it closes the watch. */
    public CompletableFuture<Boolean> awaitFreeAsync(Duration timeout) {
        if (timeout == null || timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must be zero or positive, got " + timeout);
        }
        CompletableFuture<Boolean> result = new CompletableFuture<>();
        AtomicLong readAt = new AtomicLong(Long.MAX_VALUE); // the read's revision, once known
        AtomicLong lastFreed = new AtomicLong(); // the latest DELETE (the lock became free) seen
        Watch watch = client.watch(name, 0, new WatchListener() {
            @Override
            public void onEvent(WatchEvent event) {
                if (event.type() == WatchEvent.Type.DELETE) {
                    lastFreed.accumulateAndGet(event.revision(), Math::max);
                    if (event.revision() > readAt.get()) {
                        result.complete(true);
                    }
                }
            }

            @Override
            public void onCompacted(long compactRevision) {
                result.completeExceptionally(new TenureException("the watch on lock '" + name
                        + "' fell behind the retained events (compacted at " + compactRevision + ")"));
            }

            @Override
            public void onError(TenureException error) {
                result.completeExceptionally(error);
            }
        });
        // Read only once the watch is in place: a release after the read is then an event. The
        // time limit counts from the read, so that a zero timeout still looks once.
        watch.started().thenCompose(created -> client.describeAsync(name)).whenComplete((lock, failure) -> {
            if (failure != null) {
                result.completeExceptionally(Futures.rethrowable(failure));
            } else if (!lock.held()) {
                result.complete(true);
            } else {
                readAt.set(lock.revision());
                if (lastFreed.get() > lock.revision()) {
                    result.complete(true);
                    return;
                }
                try {
                    ScheduledFuture<?> timer = client.scheduler().schedule(() -> result.complete(false),
                            timeout.toNanos(), TimeUnit.NANOSECONDS);
                    result.whenComplete((free, f) -> timer.cancel(false));
                } catch (RejectedExecutionException closed) {
                    result.completeExceptionally(new TenureException("the Tenure client was closed", closed));
                }
            }
        });
        result.whenComplete((free, failure) -> watch.close());
        return result;
    }

    private void attempt(RetryPolicy policy, int attempt, List<RuntimeException> failures, CompletableFuture<LockHandle> result) {
        if (result.isDone()) {
            return;
        }
        CompletableFuture<LockHandle> call = acquireAsync(policy.attemptTimeout());
        result.whenComplete((handle, failure) -> {
            if (result.isCancelled()) {
                call.cancel(false);
            }
        });
        call.whenComplete((handle, failure) -> {
            if (failure == null) {
                if (!result.complete(handle)) {
                    handle.releaseAsync(); // cancelled meanwhile: do not keep a lock nobody will release
                }
                return;
            }
            RuntimeException cause = Futures.rethrowable(failure);
            boolean retryable = cause instanceof LockNotAcquiredException || cause instanceof UnavailableException
                    || cause instanceof LimitExceededException
                    || (cause instanceof LeaseLostException && lease == null);
            if (!retryable || attempt >= policy.maxAttempts() || result.isDone()) {
                failures.forEach(cause::addSuppressed);
                result.completeExceptionally(cause);
                return;
            }
            failures.add(cause);
            Duration pause = policy.backoffAfter(attempt);
            try {
                client.scheduler().schedule(() -> attempt(policy, attempt + 1, failures, result),
                        pause.toNanos(), TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException closed) {
                result.completeExceptionally(new TenureException("the client was closed while retrying lock '" + name + "'", cause));
            }
        });
    }

    private static void checkTimeout(Duration timeout) {
        if (timeout == null || timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must be zero or positive, got " + timeout + " (use acquire() to wait without a limit)");
        }
    }

    private <T> CompletableFuture<T> withLease(java.util.function.Function<Lease, CompletableFuture<T>> call,
                                               java.util.function.Consumer<T> release) {
        return client.withLease(lease, call, release);
    }

    @Override
    public String toString() {
        return "TenureLock{name='" + name + "', mode=" + mode + ", lease=" + (lease == null ? "session" : String.valueOf(lease.id())) + "}";
    }
}
