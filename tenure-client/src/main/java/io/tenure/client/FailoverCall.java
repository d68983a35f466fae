package io.tenure.client;

import com.google.common.util.concurrent.MoreExecutors;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import io.tenure.proto.v1.LockRequest;
import io.tenure.proto.v1.SessionAnswer;
import io.tenure.proto.v1.SessionCall;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.LongFunction;
import java.util.function.LongUnaryOperator;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One unary call, retried across the endpoints until it gets an answer. It starts at the
 * preferred endpoint; when an attempt fails with {@code UNAVAILABLE} (the member is not serving,
 * or the connection to it broke because it died), the call moves to the next endpoint at once,
 * and, should that fail too, keeps cycling through the endpoints with a jittered backoff that
 * starts at {@link #FIRST_BACKOFF} and doubles up to {@link #MAX_BACKOFF}, until an attempt
 * answers, fails otherwise, or the call's time is up. An attempt that was served for at least
 * {@link #MAX_BACKOFF} before it failed (a long lock wait whose member died) starts the backoff
 * over: its failure is a new one, not the latest of a series.
 *
 * <p>Only safe for requests the server treats idempotently, which every Tenure call is: grants
 * carry a client-chosen lease id, a retried {@code Lock} for the same (name, lease) keeps its
 * place in the queue or returns the grant it has, a retried release or revoke succeeds again.
 * Each attempt sends the same request, except that a lock wait's {@code timeout_ms} is what
 * remains of the caller's timeout ({@link #lockWait}).
 *
 * <p>A call's answers are handled, and {@link #result()} completed, on the channel's executor;
 * or, for a call whose caller blocks until the answer ({@link #ON_TRANSPORT_THREAD}), on gRPC's
 * transport thread: one thread hand-off fewer per call, which on two cores was a quarter of the
 * uncontended lock rate. Only the SDK's own non-blocking continuations may then run on the result.
 *
 * <p>The calls that have a {@link SessionStreams.Route} (every kind's acquires, releases, waits
 * and cancels, lease grants and revokes) travel in the client's session stream to the member
 * ({@link SessionStreams}) where it carries them; an attempt there behaves as the unary call would.
 *
 * <p>Cancelling {@link #result()} cancels the attempt in flight and any retry that is waiting out
 * its backoff. A lock wait stays queued on the server (a member cannot tell a cancelled call from
 * one re-attached elsewhere); {@link TenureClient} withdraws it explicitly.
 */
final class FailoverCall<Req, Resp> {
    static final Duration FIRST_BACKOFF = Duration.ofMillis(50);
    /**
     * The longest wait between two passes. Short, because a cluster without a leader is back within
     * an election (about a second by default): with a 1 s cap a caller could retry most of a second after
     * the new leader was ready. A waiting call costs a member at most 8 attempts a second
     * (etcd's client retries every 25 ms).
     */
    static final Duration MAX_BACKOFF = Duration.ofMillis(250);
    /** No retry starts with less than this left of the call's time. */
    static final Duration MIN_ATTEMPT = Duration.ofMillis(20);
    /**
     * Handles the answers of a call on gRPC's transport thread. For calls whose caller waits for
     * the result and chained nothing but the SDK's own quick, non-blocking steps: user code must
     * never run there (a blocking call from it would stall every call on the connection).
     */
    static final Executor ON_TRANSPORT_THREAD = MoreExecutors.directExecutor(); // the one gRPC runs inline, unqueued
    /** {@link LongUnaryOperator} answer for an attempt without a gRPC deadline. */
    private static final long NO_DEADLINE = -1;

    private static final Logger log = LoggerFactory.getLogger(FailoverCall.class);

    private final Endpoints endpoints;
    private final MonotonicClock clock;
    private final ScheduledExecutorService scheduler;
    private final MethodDescriptor<Req, Resp> method;
    /** The request of an attempt that starts at the given clock reading. */
    private final LongFunction<Req> requestAt;
    /** The gRPC deadline, in nanoseconds, of an attempt that starts at the given reading, or NO_DEADLINE. */
    private final LongUnaryOperator attemptTimeout;
    /** No attempt starts at or after this reading; ignored when unbounded. */
    private final long giveUpAtNanos;
    private final boolean bounded;
    /** Asked before each retry: an exception to end the call with instead, or null to go on. */
    private final Supplier<RuntimeException> retryVeto;
    /** Where the answers are handled: {@link #ON_TRANSPORT_THREAD}, or null for the channel's executor. */
    private final Executor answers;
    private final CompletableFuture<Resp> result = new CompletableFuture<>();

    // Guarded by this: what a cancellation must stop.
    private SessionStreams.Sent inFlight;
    private ScheduledFuture<?> backoffTimer;

    // Touched only by the chain of attempts, which runs one at a time.
    private volatile int attempts;
    private int failuresInARow;
    private long attemptStartedAt;
    private volatile Throwable lastFailure;
    /** The first failure of an attempt that may have been applied (not shed), and the endpoint it came from; null while none. */
    private volatile Throwable outcomeUnknown;
    private volatile int outcomeUnknownAt;
    private volatile int lastEndpoint;

    private FailoverCall(Endpoints endpoints, MonotonicClock clock, ScheduledExecutorService scheduler,
                         MethodDescriptor<Req, Resp> method, LongFunction<Req> requestAt, LongUnaryOperator attemptTimeout,
                         boolean bounded, long giveUpAtNanos, Supplier<RuntimeException> retryVeto, Executor answers) {
        this.endpoints = endpoints;
        this.clock = clock;
        this.scheduler = scheduler;
        this.method = method;
        this.requestAt = requestAt;
        this.attemptTimeout = attemptTimeout;
        this.bounded = bounded;
        this.giveUpAtNanos = giveUpAtNanos;
        this.retryVeto = retryVeto;
        this.answers = answers;
    }

    /**
     * Starts a call that does not wait on purpose: attempts may go on for {@code budget} in all.
     * With several endpoints and {@code splitBudget}, one attempt gets at most half of it, so that
     * a member that accepts the call but never answers (paused, partitioned) leaves time to ask
     * another; without, one attempt may take the whole budget, for calls that may legitimately
     * take long (a membership change that waits for a new member to catch up).
     * {@code answers}: {@link #ON_TRANSPORT_THREAD} for a caller that blocks on the result, or
     * null.
     */
    static <Req, Resp> FailoverCall<Req, Resp> unary(Endpoints endpoints, MonotonicClock clock,
            ScheduledExecutorService scheduler, MethodDescriptor<Req, Resp> method,
            Req request, Duration budget, boolean splitBudget, Executor answers) {
        long start = clock.nanoTime();
        long budgetNanos = budget.toNanos();
        long giveUpAt = start + budgetNanos;
        long perAttempt = splitBudget && endpoints.size() > 1 ? budgetNanos / 2 : budgetNanos;
        FailoverCall<Req, Resp> call = new FailoverCall<>(endpoints, clock, scheduler, method,
                now -> request, now -> Math.min(perAttempt, Math.max(0, giveUpAt - now)),
                true, giveUpAt, () -> null, answers);
        call.start();
        return call;
    }

    /**
     * Starts a lock wait. Every attempt asks for the same (name, lease, metadata), so the server
     * keeps the waiter's place; {@code timeout_ms} is what remains of the original timeout at the
     * attempt's start (-1 stays -1; once it has run out, 0, which still returns a grant the lease
     * already has). Attempts go on until {@code grace} after the caller's timeout, or without
     * end for -1, and stop when {@code leaseLost} says so.
     *
     * @param grace     how long past the wait an answer may take (the request timeout)
     * @param leaseLost asked before each retry: the exception to end with when the lease is lost, or null
     * @param answers   {@link #ON_TRANSPORT_THREAD} for a caller that blocks on the result, or null
     */
    static <Resp> FailoverCall<LockRequest, Resp> lockWait(Endpoints endpoints, MonotonicClock clock,
            ScheduledExecutorService scheduler,
            MethodDescriptor<LockRequest, Resp> method,
            LockRequest request, Duration grace, Supplier<RuntimeException> leaseLost, Executor answers) {
        return wait(endpoints, clock, scheduler, method, request, request.getTimeoutMs(),
                (r, remaining) -> r.toBuilder().setTimeoutMs(remaining).build(), grace, leaseLost, answers);
    }

    /**
     * {@link #lockWait}, for any call that waits in a queue on the server with a timeout in its
     * request ({@code timeoutMs}; {@code withTimeout} makes the same request with what remains).
     */
    static <Req, Resp> FailoverCall<Req, Resp> wait(Endpoints endpoints, MonotonicClock clock,
            ScheduledExecutorService scheduler, MethodDescriptor<Req, Resp> method, Req request, long timeoutMs,
            java.util.function.BiFunction<Req, Long, Req> withTimeout, Duration grace, Supplier<RuntimeException> leaseLost,
            Executor answers) {
        long start = clock.nanoTime();
        FailoverCall<Req, Resp> call;
        if (timeoutMs < 0) {
            call = new FailoverCall<>(endpoints, clock, scheduler, method,
                    now -> request, now -> NO_DEADLINE, false, 0, leaseLost, answers);
        } else {
            // Clamped so that differences of clock readings cannot overflow (73 years is forever enough).
            long waitNanos = Math.min(TimeUnit.MILLISECONDS.toNanos(timeoutMs), Long.MAX_VALUE / 4);
            long waitUntil = start + waitNanos;
            long giveUpAt = waitUntil + grace.toNanos();
            call = new FailoverCall<>(endpoints, clock, scheduler, method,
                    now -> {
                        long remaining = ceilMillis(Math.max(0, waitUntil - now));
                        return remaining == timeoutMs ? request : withTimeout.apply(request, remaining);
                    },
                    now -> Math.max(0, giveUpAt - now), true, giveUpAt, leaseLost, answers);
        }
        call.start();
        return call;
    }

    /** Completes with the first answer, or the failure that ended the retries; cancel to stop. */
    CompletableFuture<Resp> result() {
        return result;
    }

    /** How many attempts were started so far. */
    int attempts() {
        return attempts;
    }

    private void start() {
        result.whenComplete((response, failure) -> {
            if (result.isCancelled()) {
                stopInFlight();
            }
        });
        attempt(endpoints.preferred());
    }

    private void stopInFlight() {
        SessionStreams.Sent call;
        ScheduledFuture<?> timer;
        synchronized (this) {
            call = inFlight;
            timer = backoffTimer;
        }
        if (timer != null) {
            timer.cancel(false);
        }
        if (call != null) {
            call.cancel();
        }
    }

    private void attempt(int endpoint) {
        long now = clock.nanoTime();
        Throwable previous = lastFailure;
        if (bounded && previous != null && giveUpAtNanos - now < MIN_ATTEMPT.toNanos()) {
            // The backoff timer ran late and the call's time is (nearly) up: the last failure stands.
            result.completeExceptionally(StatusErrors.toException(previous, endpoints.target(lastEndpoint), method.getFullMethodName()));
            return;
        }
        attempts++;
        attemptStartedAt = now;
        Req request = requestAt.apply(now);
        long timeout = attemptTimeout.applyAsLong(now);
        SessionStreams sessions = endpoints.sessions();
        SessionStreams.Route<Req, Resp> route = sessions == null ? null : SessionStreams.route(method);
        if (route != null) {
            SessionCall.Builder call = route.callOf(request);
            if (sessions.carries(endpoint, call.getCallCase())) {
                sendInSession(sessions, endpoint, call, route, request, timeout);
                return;
            }
        }
        sendUnary(endpoint, request, timeout);
    }

    /** One attempt in the session stream to the member at {@code endpoint}; unary instead when the member does not carry it. */
    private void sendInSession(SessionStreams sessions, int endpoint, SessionCall.Builder call, SessionStreams.Route<Req, Resp> route,
                               Req request, long timeout) {
        synchronized (this) {
            if (result.isDone()) {
                return; // cancelled between attempts
            }
        }
        Attempt attempt = new Attempt(endpoint);
        SessionStreams.Sent sent;
        try {
            sent = sessions.send(endpoint, call, timeout, answers, new StreamObserver<>() {
                @Override
                public void onNext(SessionAnswer answer) {
                    attempt.onNext(route.answer().apply(answer));
                }

                @Override
                public void onError(Throwable failure) {
                    if (failure instanceof SessionStreams.NotCarried) {
                        sendUnary(endpoint, request, timeout); // nothing was done: the same attempt, as a unary call
                    } else {
                        attempt.onError(failure);
                    }
                }

                @Override
                public void onCompleted() {
                }
            });
        } catch (RuntimeException e) {
            if (!result.isDone()) {
                result.completeExceptionally(StatusErrors.toException(e, endpoints.target(endpoint), method.getFullMethodName()));
            }
            return;
        }
        synchronized (this) {
            inFlight = sent;
        }
        if (result.isCancelled()) {
            sent.cancel(); // cancelled while it was being sent
        }
    }

    private void sendUnary(int endpoint, Req request, long timeout) {
        ClientCall<Req, Resp> call = endpoints.channel(endpoint).newCall(method, unaryOptions(timeout, answers));
        synchronized (this) {
            if (result.isDone()) {
                return; // cancelled between attempts
            }
            inFlight = () -> call.cancel("cancelled by the caller", null);
        }
        try {
            ClientCalls.asyncUnaryCall(call, request, new Attempt(endpoint));
        } catch (RuntimeException e) {
            // A cancellation raced the start (gRPC refuses to start a cancelled call), or the
            // channel is shut down.
            if (!result.isDone()) {
                result.completeExceptionally(StatusErrors.toException(e, endpoints.target(endpoint), method.getFullMethodName()));
            }
        }
    }

    private void failed(int endpoint, Throwable failure) {
        if (result.isDone()) {
            return;
        }
        lastFailure = failure;
        lastEndpoint = endpoint;
        long now = clock.nanoTime();
        long shedHint = StatusErrors.shedRetryAfterMillis(failure);
        if (shedHint >= 0 && !endpoints.isClosed()) {
            retryShed(endpoint, failure, shedHint, now);
            return;
        }
        if (outcomeUnknown == null) {
            // An attempt that failed other than by being shed may have been applied (its answer was lost).
            outcomeUnknown = failure;
            outcomeUnknownAt = endpoint;
        }
        boolean retryable = StatusErrors.worthFailover(failure)
                // An attempt that ran out of its own deadline while the call has time left: the
                // member took the call and went silent. Another may answer.
                || (StatusErrors.deadlineExceeded(failure) && bounded && giveUpAtNanos - now > 0);
        if (!retryable || endpoints.isClosed()) {
            result.completeExceptionally(StatusErrors.toException(failure, endpoints.target(endpoint), method.getFullMethodName()));
            return;
        }
        if (now - attemptStartedAt >= MAX_BACKOFF.toNanos()) {
            failuresInARow = 0; // it was served for a while: a fresh failure, retried at once
        }
        failuresInARow++;
        long delay = backoffNanos(failuresInARow);
        // An attempt that would start with almost no time left could only fail with a deadline,
        // hiding the real failure (a refused connection, no leader): report that one instead.
        if (bounded && now + delay + MIN_ATTEMPT.toNanos() - giveUpAtNanos >= 0) {
            result.completeExceptionally(StatusErrors.toException(failure, endpoints.target(endpoint), method.getFullMethodName()));
            return;
        }
        RuntimeException veto = retryVeto.get();
        if (veto != null) {
            result.completeExceptionally(veto);
            return;
        }
        int next = endpoints.retryAfter(endpoint);
        if (log.isDebugEnabled()) {
            log.debug("{} on {} failed ({}); attempt {} on {} in {} ms", method.getBareMethodName(),
                    endpoints.target(endpoint), shortStatus(failure), attempts + 1, endpoints.target(next),
                    TimeUnit.NANOSECONDS.toMillis(delay));
        }
        if (delay == 0) {
            attempt(next);
            return;
        }
        schedule(() -> attempt(next), delay, failure);
    }

    /**
     * The member shed the request because it is behind: again after its hint, stretched by a
     * random part of it (between once and twice the hint), so that the clients it shed together do
     * not come back together; on the next endpoint, without moving the client's preference. In a
     * busy cluster every member forwards to the same leader, so the next one serves as well; a
     * member that sheds because it lost its majority (its log stopped committing) is left for one
     * that may reach the new leader. Within the call's time, or the shed answer stands.
     */
    private void retryShed(int endpoint, Throwable failure, long hintMillis, long now) {
        long hint = TimeUnit.MILLISECONDS.toNanos(Math.max(1, hintMillis));
        long delay = hint + ThreadLocalRandom.current().nextLong(hint + 1);
        RuntimeException veto = retryVeto.get();
        if ((bounded && now + delay + MIN_ATTEMPT.toNanos() - giveUpAtNanos >= 0) || veto != null) {
            result.completeExceptionally(veto != null ? veto : shedAtLast(endpoint, failure));
            return;
        }
        if (log.isDebugEnabled()) {
            log.debug("{} shed by {} ({}); attempt {} on {} in {} ms", method.getBareMethodName(), endpoints.target(endpoint),
                    shortStatus(failure), attempts + 1, endpoints.target(endpoints.next(endpoint)), TimeUnit.NANOSECONDS.toMillis(delay));
        }
        int next = endpoints.next(endpoint);
        schedule(() -> attempt(next), delay, failure);
    }

    /**
     * How a call ends whose last attempt was shed: with the member's words when no attempt before
     * may have been applied (nothing was done; a limit), but as unavailable when an earlier one
     * failed without an answer, since that one may have been applied and the caller must not take
     * the shed answer for "not done".
     */
    private TenureException shedAtLast(int endpoint, Throwable shed) {
        TenureException last = StatusErrors.toException(shed, endpoints.target(endpoint), method.getFullMethodName());
        if (outcomeUnknown == null) {
            return last;
        }
        TenureException earlier = StatusErrors.toException(outcomeUnknown, endpoints.target(outcomeUnknownAt), method.getFullMethodName());
        UnavailableException unknown = new UnavailableException(method.getBareMethodName() + " was shed by "
                + endpoints.target(endpoint) + " on its last attempt (" + last.getMessage() + "), but an earlier attempt on "
                + endpoints.target(outcomeUnknownAt) + " ended without an answer (" + earlier.getMessage()
                + "): it may have been applied; repeating the call is safe", earlier);
        unknown.addSuppressed(last);
        return unknown;
    }

    /**
     * The options of one unary attempt: its deadline {@code timeoutNanos} from now (none when
     * negative) and where its answer is handled ({@code answers}, or null for the channel's executor).
     */
    static CallOptions unaryOptions(long timeoutNanos, Executor answers) {
        CallOptions options = timeoutNanos < 0
                ? CallOptions.DEFAULT
                : CallOptions.DEFAULT.withDeadlineAfter(Math.max(1, timeoutNanos), TimeUnit.NANOSECONDS);
        return answers == null ? options : options.withExecutor(answers);
    }

    /** Runs {@code retry} after {@code delay}, cancellable with the call; fails the call when the client is closed. */
    private void schedule(Runnable retry, long delay, Throwable failure) {
        ScheduledFuture<?> timer;
        try {
            timer = scheduler.schedule(retry, delay, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            result.completeExceptionally(new TenureException("the client was closed while retrying "
                    + method.getBareMethodName() + " (last failure: " + shortStatus(failure) + ")", e));
            return;
        }
        synchronized (this) {
            backoffTimer = timer;
        }
        if (result.isCancelled()) {
            timer.cancel(false); // cancelled while the timer was being set
        }
    }

    /** No wait for the first failure of a series (try the next member now), then 50 ms doubling to 250 ms, jittered. */
    static long backoffNanos(int failuresInARow) {
        if (failuresInARow <= 1) {
            return 0;
        }
        long ceiling = Math.min(MAX_BACKOFF.toNanos(), FIRST_BACKOFF.toNanos() << Math.min(failuresInARow - 2, 20));
        // Between half and all of it, so that clients that failed together do not retry together.
        return ceiling / 2 + ThreadLocalRandom.current().nextLong(ceiling / 2 + 1);
    }

    private static String shortStatus(Throwable failure) {
        Status status = Status.fromThrowable(failure);
        return status.getDescription() == null ? status.getCode().name() : status.getCode() + ": " + status.getDescription();
    }

    /** {@code nanos} in whole milliseconds, rounded up: a wait asked for is never cut short. */
    static long ceilMillis(long nanos) {
        long ms = TimeUnit.NANOSECONDS.toMillis(nanos);
        return TimeUnit.MILLISECONDS.toNanos(ms) < nanos ? ms + 1 : ms;
    }

    /** {@code duration} in whole milliseconds, rounded up (as {@link #ceilMillis(long)}). */
    static long ceilMillis(Duration duration) {
        long ms = duration.toMillis();
        return Duration.ofMillis(ms).compareTo(duration) < 0 ? ms + 1 : ms;
    }

    private final class Attempt implements StreamObserver<Resp> {
        private final int endpoint;

        Attempt(int endpoint) {
            this.endpoint = endpoint;
        }

        @Override
        public void onNext(Resp response) {
            endpoints.leaderNamed(endpoint, LeaderHint.of(response));
            result.complete(response);
        }

        @Override
        public void onError(Throwable failure) {
            failed(endpoint, failure);
        }

        @Override
        public void onCompleted() {
            // A unary call delivers its response through onNext; nothing left to do.
        }
    }
}
