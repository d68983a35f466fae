package io.tenure.testing;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Waiting in a test for something to become true, with a deadline: the condition is re-checked
 * every poll interval until it holds or the deadline passes, and then the wait fails naming what it
 * waited for. Never a fixed sleep standing in for a condition; {@link #untilTime} is only for a
 * moment the test itself scheduled (a fault held for a set time).
 *
 * <pre>{@code
 * Await.until("the waiter queues", Duration.ofSeconds(10), () -> waiters("k").size() == 1);
 * long lease = Await.value("a lease from the new leader", Duration.ofSeconds(30), () -> grant(member));
 * Await.PROCESSES.until("n2 rejoins", limit, () -> rejoined("n2"));   // each check is an RPC to another JVM
 * }</pre>
 *
 * <p>A check that throws a {@link RuntimeException} counts as "not yet" (a member that does not
 * answer yet); the last such failure is named, and is the cause, when the deadline passes. An
 * {@link Error} (a failed assertion inside the check) ends the wait at once. An interrupt ends it
 * too, leaving the thread's interrupt flag set. The static methods poll every
 * {@link #DEFAULT_POLL} and fail with {@link AssertionError}; {@link #PROCESSES} and {@link #every}
 * poll at other intervals, and {@link Polling#failingWith} fails with another exception.
 */
public final class Await {
    /** How often the static methods re-check: cheap for state in this JVM, quick to notice a change. */
    public static final Duration DEFAULT_POLL = Duration.ofMillis(10);
    private static final Polling DEFAULT = new Polling(DEFAULT_POLL, null);
    /**
     * Waits whose every check asks another process (an RPC to a member in a child JVM): every 50 ms,
     * so that a test waiting on several members does not take the CPU they share.
     */
    public static final Polling PROCESSES = every(Duration.ofMillis(50));

    private Await() {
    }

    /** Waits that re-check every {@code poll} (for checks that cost something, such as an RPC to another process). */
    public static Polling every(Duration poll) {
        return new Polling(poll, null);
    }

    /** Waits until {@code condition} holds; fails naming {@code what} when {@code limit} passes first. */
    public static void until(String what, Duration limit, BooleanSupplier condition) {
        DEFAULT.until(what, limit, condition);
    }

    /** As {@link #until(String, Duration, BooleanSupplier)}, describing the state only when the deadline passes. */
    public static void until(Supplier<String> what, Duration limit, BooleanSupplier condition) {
        DEFAULT.until(what, limit, condition);
    }

    /** Waits until {@code probe} returns non-null and returns that value. */
    public static <T> T value(String what, Duration limit, Supplier<T> probe) {
        return DEFAULT.value(what, limit, probe);
    }

    /** Whether {@code condition} held before {@code limit} passed: false instead of a failure when it did not. */
    public static boolean within(Duration limit, BooleanSupplier condition) {
        return DEFAULT.within(limit, condition);
    }

    /** Waits until the monotonic clock ({@link System#nanoTime()}) reaches {@code nanoTime}: a scheduled moment, not a condition. */
    public static void untilTime(long nanoTime) {
        DEFAULT.untilTime(nanoTime);
    }

    /** Milliseconds since {@code nanoTime} on the monotonic clock. */
    public static long millisSince(long nanoTime) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - nanoTime);
    }

    /** Waits with one poll interval and one kind of failure. Immutable; share it freely. */
    public static final class Polling {
        private final Duration poll;
        private final Function<String, ? extends RuntimeException> failure;

        private Polling(Duration poll, Function<String, ? extends RuntimeException> failure) {
            if (poll.isNegative() || poll.isZero()) {
                throw new IllegalArgumentException("poll interval must be positive, got " + poll);
            }
            this.poll = poll;
            this.failure = failure;
        }

        /**
         * The same waits, failing with what {@code failure} makes of the message instead of an
         * {@link AssertionError} (a harness that tells its own failures from the system's).
         */
        public Polling failingWith(Function<String, ? extends RuntimeException> failure) {
            return new Polling(poll, Objects.requireNonNull(failure, "failure"));
        }

        /** How often these waits re-check. */
        public Duration poll() {
            return poll;
        }

        /** See {@link Await#until(String, Duration, BooleanSupplier)}. */
        public void until(String what, Duration limit, BooleanSupplier condition) {
            until(() -> what, limit, condition);
        }

        /** See {@link Await#until(Supplier, Duration, BooleanSupplier)}. */
        public void until(Supplier<String> what, Duration limit, BooleanSupplier condition) {
            await(what, limit, () -> condition.getAsBoolean() ? Boolean.TRUE : null);
        }

        /** See {@link Await#value}. */
        public <T> T value(String what, Duration limit, Supplier<T> probe) {
            return await(() -> what, limit, probe);
        }

        /** As {@link #value(String, Duration, Supplier)}, with a description made when the wait fails (to say what was seen). */
        public <T> T value(Supplier<String> what, Duration limit, Supplier<T> probe) {
            return await(what, limit, probe);
        }

        /** See {@link Await#within}. */
        public boolean within(Duration limit, BooleanSupplier condition) {
            return poll(limit, () -> condition.getAsBoolean() ? Boolean.TRUE : null).value != null;
        }

        /** See {@link Await#untilTime}; sleeps at most one poll interval at a time, so an interrupt is noticed. */
        public void untilTime(long nanoTime) {
            long left;
            while ((left = nanoTime - System.nanoTime()) > 0) {
                LockSupport.parkNanos(Math.min(left, poll.toNanos()));
                if (Thread.currentThread().isInterrupted()) {
                    throw fail("interrupted while waiting for a scheduled moment", null);
                }
            }
        }

        private <T> T await(Supplier<String> what, Duration limit, Supplier<T> probe) {
            Outcome<T> outcome = poll(limit, probe);
            if (outcome.value != null) {
                return outcome.value;
            }
            if (outcome.interrupted) {
                throw fail("interrupted while waiting for: " + what.get(), null);
            }
            RuntimeException last = outcome.lastFailure;
            throw fail("timed out after " + limit.toMillis() + " ms waiting for: " + what.get()
                    + (last == null ? "" : " (last failure: " + last + ")"), last);
        }

        /** The one polling loop: until the probe gives a value, the deadline passes or the thread is interrupted. */
        private <T> Outcome<T> poll(Duration limit, Supplier<T> probe) {
            long deadline = System.nanoTime() + limit.toNanos();
            RuntimeException last = null;
            while (true) {
                try {
                    T value = probe.get();
                    if (value != null) {
                        return new Outcome<>(value, null, false);
                    }
                } catch (RuntimeException notYet) {
                    last = notYet;
                }
                if (System.nanoTime() - deadline > 0) {
                    return new Outcome<>(null, last, false);
                }
                LockSupport.parkNanos(poll.toNanos());
                if (Thread.currentThread().isInterrupted()) {
                    return new Outcome<>(null, last, true);
                }
            }
        }

        private RuntimeException fail(String message, Throwable cause) {
            if (failure == null) {
                throw new AssertionError(message, cause);
            }
            RuntimeException e = failure.apply(message);
            if (cause != null && e.getCause() == null) {
                try {
                    e.initCause(cause);
                } catch (IllegalStateException alreadySet) {
                    // made with an explicit (null) cause: leave it as the factory made it
                }
            }
            return e;
        }

        private record Outcome<T>(T value, RuntimeException lastFailure, boolean interrupted) {
        }
    }
}
