package io.tenure.it.safety;

import io.tenure.testing.Await;
import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Waiting in the harness: tenure-testing's {@link Await}, re-checking every {@value #POLL_MILLIS} ms
 * until a deadline, or until a scheduled moment (a fault's set duration), and failing with a
 * {@link HarnessException}, so that what the harness could not do is never taken for a violation.
 */
final class Waits {
    static final long POLL_MILLIS = 10;
    private static final Await.Polling HARNESS = every(Duration.ofMillis(POLL_MILLIS));

    private Waits() {
    }

    private static Await.Polling every(Duration poll) {
        return Await.every(poll).failingWith(HarnessException::new);
    }

    /** Waits until {@code probe} returns non-null; fails naming {@code what} when {@code limit} passes first. */
    static <T> T value(String what, Duration limit, Supplier<T> probe) {
        return HARNESS.value(what, limit, probe);
    }

    /** As {@link #value(String, Duration, Supplier)}, checking every {@code poll} (for probes that cost something). */
    static <T> T value(String what, Duration limit, Duration poll, Supplier<T> probe) {
        return every(poll).value(what, limit, probe);
    }

    static void until(String what, Duration limit, BooleanSupplier condition) {
        HARNESS.until(what, limit, condition);
    }

    /** Whether {@code condition}, checked every {@code poll}, held before {@code limit} passed (no failure when it did not). */
    static boolean within(Duration limit, Duration poll, BooleanSupplier condition) {
        return every(poll).within(limit, condition);
    }

    /** Until the monotonic clock reaches {@code nanoTime}: a fault's set duration, not a condition. */
    static void untilTime(long nanoTime) {
        HARNESS.untilTime(nanoTime);
    }

    static long millisSince(long nanoTime) {
        return Await.millisSince(nanoTime);
    }

    /** The harness could not do what a fault needed (a member did not come back, no client held a lock): not a safety violation. */
    static final class HarnessException extends RuntimeException {
        HarnessException(String message) {
            super(message);
        }
    }
}
