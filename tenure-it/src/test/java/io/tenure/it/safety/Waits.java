package io.tenure.it.safety;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Waiting in the harness: for a condition, re-checked every {@value #POLL_MILLIS} ms until a
 * deadline, or until a scheduled moment (a fault's set duration). Never a fixed sleep standing
 * in for a condition.
 */
final class Waits {
    static final long POLL_MILLIS = 10;

    private Waits() {
    }

    /** Waits until {@code probe} returns non-null; fails naming {@code what} when {@code limit} passes first. */
    static <T> T value(String what, Duration limit, Supplier<T> probe) {
        return value(what, limit, Duration.ofMillis(POLL_MILLIS), probe);
    }

    /** As {@link #value(String, Duration, Supplier)}, checking every {@code poll} (for probes that cost something). */
    static <T> T value(String what, Duration limit, Duration poll, Supplier<T> probe) {
        long deadline = System.nanoTime() + limit.toNanos();
        RuntimeException last = null;
        while (true) {
            try {
                T value = probe.get();
                if (value != null) {
                    return value;
                }
            } catch (RuntimeException e) {
                last = e;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new HarnessException("timed out after " + limit.toMillis() + " ms waiting for " + what
                        + (last == null ? "" : " (last failure: " + last + ")"));
            }
            LockSupport.parkNanos(poll.toNanos());
            if (Thread.currentThread().isInterrupted()) {
                throw new HarnessException("interrupted while waiting for " + what);
            }
        }
    }

    static void until(String what, Duration limit, BooleanSupplier condition) {
        value(what, limit, () -> condition.getAsBoolean() ? Boolean.TRUE : null);
    }

    /** Whether {@code condition}, checked every {@code poll}, held before {@code limit} passed (no failure when it did not). */
    static boolean within(Duration limit, Duration poll, BooleanSupplier condition) {
        try {
            value("", limit, poll, () -> condition.getAsBoolean() ? Boolean.TRUE : null);
            return true;
        } catch (HarnessException timedOut) {
            return false;
        }
    }

    /** Until the monotonic clock reaches {@code nanoTime}: a fault's set duration, not a condition. */
    static void untilTime(long nanoTime) {
        long left;
        while ((left = nanoTime - System.nanoTime()) > 0) {
            LockSupport.parkNanos(Math.min(left, TimeUnit.MILLISECONDS.toNanos(POLL_MILLIS * 5)));
            if (Thread.currentThread().isInterrupted()) {
                throw new HarnessException("interrupted before a scheduled moment");
            }
        }
    }

    static long millisSince(long nanoTime) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - nanoTime);
    }

    /** The harness could not do what a fault needed (a member did not come back, no client held a lock): not a safety violation. */
    static final class HarnessException extends RuntimeException {
        HarnessException(String message) {
            super(message);
        }
    }
}
