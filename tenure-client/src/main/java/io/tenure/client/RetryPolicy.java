package io.tenure.client;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;

/**
 * How {@link TenureLock#acquireWithRetry(RetryPolicy)} retries: at most {@code maxAttempts}
 * attempts, each waiting in the lock's queue for at most {@code attemptTimeout}, separated by a
 * jittered backoff that starts at {@code initialBackoff} and doubles up to {@code maxBackoff}
 * (each pause is drawn between half and all of the current step, so that clients that failed
 * together do not come back together).
 *
 * @param maxAttempts    at least 1
 * @param attemptTimeout how long one attempt waits in the queue; zero tries without waiting
 * @param initialBackoff the first pause, positive
 * @param maxBackoff     the longest pause, at least {@code initialBackoff}
 */
public record RetryPolicy(int maxAttempts, Duration attemptTimeout, Duration initialBackoff, Duration maxBackoff) {
    /** 5 attempts of 5 s each, 100 ms doubling to 2 s between them. */
    public static final RetryPolicy DEFAULT = new RetryPolicy(5, Duration.ofSeconds(5), Duration.ofMillis(100), Duration.ofSeconds(2));

    public RetryPolicy {
        Objects.requireNonNull(attemptTimeout, "attemptTimeout");
        Objects.requireNonNull(initialBackoff, "initialBackoff");
        Objects.requireNonNull(maxBackoff, "maxBackoff");
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be at least 1, got " + maxAttempts);
        }
        if (attemptTimeout.isNegative()) {
            throw new IllegalArgumentException("attemptTimeout must not be negative, got " + attemptTimeout);
        }
        if (initialBackoff.isNegative() || initialBackoff.isZero()) {
            throw new IllegalArgumentException("initialBackoff must be positive, got " + initialBackoff);
        }
        if (maxBackoff.compareTo(initialBackoff) < 0) {
            throw new IllegalArgumentException("maxBackoff (" + maxBackoff + ") must be at least initialBackoff (" + initialBackoff + ")");
        }
    }

    /** The pause after failed attempt number {@code attempt} (1-based), jittered. */
    Duration backoffAfter(int attempt) {
        long step = initialBackoff.toNanos() << Math.min(attempt - 1, 30);
        long ceiling = step <= 0 ? maxBackoff.toNanos() : Math.min(maxBackoff.toNanos(), step);
        return Duration.ofNanos(ceiling / 2 + ThreadLocalRandom.current().nextLong(ceiling / 2 + 1));
    }
}
