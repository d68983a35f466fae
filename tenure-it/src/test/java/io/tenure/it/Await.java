package io.tenure.it;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** Waiting for a condition: re-checked every 50 ms until it holds or the deadline passes. Never a fixed sleep. */
public final class Await {
    static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    private Await() {
    }

    /** Waits until {@code condition} holds; fails naming {@code what} when {@code limit} passes first. */
    public static void until(String what, Duration limit, BooleanSupplier condition) {
        value(what, limit, () -> condition.getAsBoolean() ? Boolean.TRUE : null);
    }

    /** As {@link #until(String, Duration, BooleanSupplier)}, describing the state when the deadline passes. */
    public static void until(Supplier<String> what, Duration limit, BooleanSupplier condition) {
        try {
            until("", limit, condition);
        } catch (AssertionError e) {
            AssertionError described = new AssertionError(e.getMessage() + what.get());
            described.initCause(e.getCause());
            throw described;
        }
    }

    /**
     * Waits until {@code probe} returns non-null and returns it. A probe that throws counts as
     * "not yet"; the last failure is named in the error when the deadline passes.
     */
    public static <T> T value(String what, Duration limit, Supplier<T> probe) {
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
                AssertionError error = new AssertionError("timed out after " + limit.toMillis() + " ms waiting for: " + what
                        + (last == null ? "" : " (last failure: " + last + ")"));
                if (last != null) {
                    error.initCause(last);
                }
                throw error;
            }
            if (Thread.interrupted()) {
                throw new AssertionError("interrupted while waiting for: " + what);
            }
            LockSupport.parkNanos(POLL_NANOS);
        }
    }

    /** Waits until the monotonic clock reaches {@code nanoTime}: for scheduled moments, not for conditions. */
    public static void untilTime(long nanoTime) {
        long left;
        while ((left = nanoTime - System.nanoTime()) > 0) {
            LockSupport.parkNanos(Math.min(left, POLL_NANOS));
            if (Thread.interrupted()) {
                throw new AssertionError("interrupted while waiting for a scheduled moment");
            }
        }
    }

    public static long millisSince(long nanoTime) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - nanoTime);
    }
}
