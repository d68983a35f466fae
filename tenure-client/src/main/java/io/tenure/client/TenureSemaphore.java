package io.tenure.client;

import io.tenure.proto.v1.SemaphoreAcquireRequest;
import io.tenure.proto.v1.SemaphoreCancelRequest;
import io.tenure.proto.v1.SemaphoreDescribeRequest;
import io.tenure.proto.v1.SemaphoreReleaseRequest;
import io.tenure.proto.v1.SemaphoreServiceGrpc;
import io.tenure.proto.v1.SemaphoreState;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * A counting semaphore, as {@link TenureClient#semaphore(String, int)} hands it out: at most
 * {@link #limit()} permits held at once, over every client of the cluster. Nothing is sent until
 * an acquire, which returns a {@link SemaphorePermit} with the grant's own fencing token.
 *
 * <pre>{@code
 * TenureSemaphore pool = client.semaphore("db/connections", 8);
 * try (SemaphorePermit permit = pool.acquire(2, Duration.ofSeconds(30))) {
 *     runExport(permit.fencingToken());
 * }
 * }</pre>
 *
 * <p>Permits are acquired for a lease: the one given to {@link TenureClient#semaphore(String, int, Lease)},
 * or else the client's {@linkplain TenureClient#session() session lease}. A lease holds at most one
 * grant of a semaphore (ask for all the permits it needs at once). Waiters are granted strictly
 * in the order they asked: one that needs 3 permits is not passed by a later one that needs 1.
 * The limit is fixed while the semaphore is held or waited for; asking with another limit then
 * fails with {@link FailedPreconditionException} naming both. A wait re-attaches on another member
 * when its member fails, keeping its place.
 *
 * <p>Immutable and thread-safe.
 */
public final class TenureSemaphore {
    private final TenureClient client;
    private final String name;
    private final int limit;
    private final Lease lease; // null: the client's session lease

    TenureSemaphore(TenureClient client, String name, int limit, Lease lease) {
        this.client = client;
        this.name = name;
        this.limit = limit;
        this.lease = lease;
    }

    /** The semaphore's name. */
    public String name() {
        return name;
    }

    /** The most permits held at once. */
    public int limit() {
        return limit;
    }

    /** Waits for one permit until granted, or until the lease is lost. */
    public SemaphorePermit acquire() {
        return acquire(1);
    }

    /** Waits for {@code permits} until granted, or until the lease is lost. */
    public SemaphorePermit acquire(int permits) {
        checkPermits(permits);
        return Futures.await(withLease(held -> acquireAsync(held, permits, null, FailoverCall.ON_TRANSPORT_THREAD)),
                "semaphore '" + name + "'");
    }

    /**
     * Waits for {@code permits} at most {@code timeout}; zero tries once without waiting.
     *
     * @throws SemaphoreNotAcquiredException if not granted in time (the wait is withdrawn)
     * @throws LeaseLostException            if the lease is lost before the grant
     */
    public SemaphorePermit acquire(int permits, Duration timeout) {
        checkPermits(permits);
        checkTimeout(timeout);
        return Futures.await(withLease(held -> acquireAsync(held, permits, timeout, FailoverCall.ON_TRANSPORT_THREAD)),
                "semaphore '" + name + "'");
    }

    /** Acquires {@code permits} only if they are free now and nobody waits; never joins the queue. */
    public Optional<SemaphorePermit> tryAcquire(int permits) {
        checkPermits(permits);
        return Futures.await(withLease(held -> tryAcquireAsync(held, permits, FailoverCall.ON_TRANSPORT_THREAD)),
                "semaphore '" + name + "'");
    }

    /**
     * The first phase of a two-phase acquire: the lease joins the queue for {@code permits} and
     * this returns at once, granted or with its place; {@link QueuePlace#await} then waits for
     * the grant, keeping the place.
     */
    public QueuePlace<SemaphorePermit> enqueue(int permits) {
        checkPermits(permits);
        return Futures.await(withLease(held -> enqueueAsync(held, permits)), "semaphore '" + name + "'");
    }

    /** The asynchronous form of {@link #enqueue(int)}. */
    public CompletableFuture<QueuePlace<SemaphorePermit>> enqueueAsync(int permits) {
        checkPermits(permits);
        return withLease(held -> enqueueAsync(held, permits));
    }

    private CompletableFuture<QueuePlace<SemaphorePermit>> enqueueAsync(Lease held, int permits) {
        if (!held.isValid()) {
            return CompletableFuture.failedFuture(held.lostException());
        }
        CompletableFuture<Void> withdrawing = client.afterWithdrawal(name, held);
        if (withdrawing != null) {
            return Futures.thenCompose(withdrawing, done -> enqueueAsync(held, permits), place -> place.withdrawAsync().exceptionally(f -> null));
        }
        long requestId = client.nextAcquireRequest();
        SemaphoreAcquireRequest request = SemaphoreAcquireRequest.newBuilder()
                .setName(name).setLeaseId(held.id()).setLimit(limit).setPermits(permits).setRequestId(requestId).setEnqueue(true).build();
        return client.call(SemaphoreServiceGrpc.getAcquireMethod(), request, null).thenApply(response -> {
            SemaphorePermit granted = response.getAcquired()
                    ? new SemaphorePermit(this, response.getPermits(), response.getFencingToken(), held) : null;
            return new QueuePlace<>(name, held, granted, response.getWaiters(),
                    timeout -> acquireAsync(held, permits, timeout, null, requestId),
                    () -> {
                        withdraw(held, requestId);
                        CompletableFuture<Void> done = client.afterWithdrawal(name, held);
                        return done == null ? CompletableFuture.completedFuture(null) : done.copy();
                    },
                    SemaphorePermit::releaseAsync);
        });
    }

    /** The asynchronous form of {@link #acquire(int)}; cancelling the future withdraws the wait. */
    public CompletableFuture<SemaphorePermit> acquireAsync(int permits) {
        checkPermits(permits);
        return withLease(held -> acquireAsync(held, permits, null, null));
    }

    /** The asynchronous form of {@link #acquire(int, Duration)}; cancelling the future withdraws the wait. */
    public CompletableFuture<SemaphorePermit> acquireAsync(int permits, Duration timeout) {
        checkPermits(permits);
        checkTimeout(timeout);
        return withLease(held -> acquireAsync(held, permits, timeout, null));
    }

    /** The asynchronous form of {@link #tryAcquire(int)}. */
    public CompletableFuture<Optional<SemaphorePermit>> tryAcquireAsync(int permits) {
        checkPermits(permits);
        return withLease(held -> tryAcquireAsync(held, permits, null));
    }

    /** The limit, the permits free, the holders and the waiters, read linearizably. */
    public SemaphoreDescription describe() {
        return Futures.await(describeAsync(), "semaphore '" + name + "'");
    }

    /** The asynchronous form of {@link #describe()}. */
    public CompletableFuture<SemaphoreDescription> describeAsync() {
        return client.call(SemaphoreServiceGrpc.getDescribeMethod(), SemaphoreDescribeRequest.newBuilder().setName(name).build(), null)
                .thenApply(response -> described(response.getSemaphore(), response.getHeader().getRevision()));
    }

    private CompletableFuture<Optional<SemaphorePermit>> tryAcquireAsync(Lease held, int permits, Executor answers) {
        return acquireAsync(held, permits, Duration.ZERO, answers).handle((permit, failure) -> {
            if (failure == null) {
                return Optional.of(permit);
            }
            RuntimeException cause = Futures.rethrowable(failure);
            if (cause instanceof SemaphoreNotAcquiredException) {
                return Optional.<SemaphorePermit>empty();
            }
            throw cause;
        });
    }

    /**
     * The acquire itself, as the lock's ({@link TenureClient#acquireAsync}): one request id for
     * every attempt; the server bounds each attempt's wait; a failed or cancelled wait is
     * withdrawn (and a grant that won the race given back) before a new acquire of this
     * semaphore with this lease is sent.
     */
    private CompletableFuture<SemaphorePermit> acquireAsync(Lease held, int permits, Duration timeout, Executor answers) {
        return acquireAsync(held, permits, timeout, answers, 0);
    }

    /** {@code acquireRequest}: the first phase's request when this is a two-phase acquire's wait, or 0 for a new acquire. */
    private CompletableFuture<SemaphorePermit> acquireAsync(Lease held, int permits, Duration timeout, Executor answers, long acquireRequest) {
        if (!held.isValid()) {
            return CompletableFuture.failedFuture(held.lostException());
        }
        CompletableFuture<Void> withdrawing = client.afterWithdrawal(name, held);
        if (withdrawing != null) {
            return Futures.thenCompose(withdrawing, done -> acquireAsync(held, permits, timeout, answers, acquireRequest),
                    permit -> permit.releaseAsync().exceptionally(f -> null));
        }
        long timeoutMs = timeout == null ? -1 : FailoverCall.ceilMillis(timeout);
        long requestId = acquireRequest != 0 ? acquireRequest : client.nextAcquireRequest();
        SemaphoreAcquireRequest request = SemaphoreAcquireRequest.newBuilder()
                .setName(name).setLeaseId(held.id()).setLimit(limit).setPermits(permits)
                .setTimeoutMs(timeoutMs).setRequestId(requestId).build();
        CompletableFuture<io.tenure.proto.v1.SemaphoreAcquireResponse> call = FailoverCall.wait(client.endpoints(), client.clock(),
                client.scheduler(), SemaphoreServiceGrpc.getAcquireMethod(), request, timeoutMs,
                (r, remaining) -> r.toBuilder().setTimeoutMs(remaining).build(), client.requestTimeout(),
                () -> held.isValid() ? null : held.lostException(), answers).result();
        Runnable stopWatchingLease = held.keeper().onLoss(loss -> call.cancel(false));
        CompletableFuture<SemaphorePermit> result = call.handle((response, failure) -> {
            stopWatchingLease.run();
            if (call.isCancelled() && !held.isValid()) {
                throw held.lostException();
            }
            if (failure != null) {
                RuntimeException cause = Futures.rethrowable(failure);
                if (cause instanceof UnavailableException) {
                    withdraw(held, requestId); // before the caller hears of the failure: its retry waits for it
                }
                throw cause;
            }
            if (!response.getAcquired()) {
                throw new SemaphoreNotAcquiredException(name, permits, response.getAvailable(), response.getWaiters());
            }
            SemaphorePermit permit = new SemaphorePermit(this, response.getPermits(), response.getFencingToken(), held);
            if (!held.isValid()) {
                permit.releaseAsync().exceptionally(f -> null);
                throw held.lostException();
            }
            return permit;
        });
        result.whenComplete((permit, failure) -> {
            if (result.isCancelled()) {
                call.cancel(false);
                withdraw(held, requestId);
            }
        });
        return result;
    }

    private void withdraw(Lease held, long requestId) {
        SemaphoreCancelRequest request = SemaphoreCancelRequest.newBuilder().setName(name).setLeaseId(held.id()).setRequestId(requestId).build();
        client.withdraw(name, held, () -> client.call(SemaphoreServiceGrpc.getCancelMethod(), request, null)
                .thenCompose(response -> response.getAcquired()
                        // Granted just before the withdrawal: nobody will use it, so give it back.
                        ? client.giveBack(new SemaphorePermit(this, 0, response.getFencingToken(), held)::releaseAsync, held)
                        : CompletableFuture.<Void>completedFuture(null)));
    }

    CompletableFuture<Void> releaseOnServer(long fencingToken, Lease held) {
        SemaphoreReleaseRequest request = SemaphoreReleaseRequest.newBuilder()
                .setName(name).setLeaseId(held.id()).setFencingToken(fencingToken).build();
        return client.call(SemaphoreServiceGrpc.getReleaseMethod(), request, null).thenApply(response -> null);
    }

    private static SemaphoreDescription described(SemaphoreState state, long revision) {
        return new SemaphoreDescription(state.getName(), state.getExists(), state.getLimit(), state.getAvailable(),
                state.getHoldersList().stream().map(h -> new SemaphoreDescription.Holder(h.getLeaseId(), h.getClientId(), h.getPermits(),
                        h.getFencingToken())).toList(),
                state.getWaitersList().stream().map(w -> new SemaphoreDescription.Waiter(w.getLeaseId(), w.getClientId(), w.getPermits(),
                        w.getJoinedAt())).toList(),
                revision, state.getIdleSinceRevision());
    }

    private void checkPermits(int permits) {
        if (permits < 1 || permits > limit) {
            throw new IllegalArgumentException("permits must be between 1 and the limit " + limit + ", got " + permits);
        }
    }

    private static void checkTimeout(Duration timeout) {
        if (timeout == null || timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must be zero or positive, got " + timeout + " (use acquire(permits) to wait without a limit)");
        }
    }

    private <T> CompletableFuture<T> withLease(java.util.function.Function<Lease, CompletableFuture<T>> call) {
        return client.withLease(lease, call, granted -> {
            if (granted instanceof SemaphorePermit permit) {
                permit.releaseAsync().exceptionally(f -> null);
            } else if (granted instanceof Optional<?> maybe && maybe.orElse(null) instanceof SemaphorePermit permit) {
                permit.releaseAsync().exceptionally(f -> null);
            } else if (granted instanceof QueuePlace<?> place) {
                place.withdrawAsync().exceptionally(f -> null);
            }
        });
    }

    @Override
    public String toString() {
        return "TenureSemaphore{name='" + name + "', limit=" + limit + ", lease=" + (lease == null ? "session" : String.valueOf(lease.id())) + "}";
    }
}
