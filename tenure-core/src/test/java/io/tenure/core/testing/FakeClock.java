package io.tenure.core.testing;

import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * A monotonic clock that moves only when a test tells it to, for code that takes time as an
 * input ({@link io.tenure.core.lease.LeaseDeadlines}, and anything that accepts a
 * {@code LongSupplier} of nanoseconds in place of {@link System#nanoTime()}).
 *
 * <p>Like {@code System.nanoTime()}, its readings mean something only as differences: the
 * origin is arbitrary and may be negative or close to {@link Long#MAX_VALUE}, and a reading
 * wraps around silently past it, so code under test must compare readings as
 * {@code a - b < 0}, never {@code a < b}. {@link #startingAt(long)} lets a test pick an
 * awkward origin on purpose.
 *
 * <p>Tests advance it instead of sleeping, so time-driven behaviour is exact and instant. It
 * never goes backwards. Not thread-safe: a test drives it from one thread.
 *
 * <p>Shipped in the tenure-core test-jar for the other modules' tests.
 */
public final class FakeClock implements LongSupplier {
    private long nanos;

    /** A clock reading 0. */
    public FakeClock() {
        this(0);
    }

    private FakeClock(long originNanos) {
        this.nanos = originNanos;
    }

    /** A clock whose first reading is {@code originNanos} (any value, as with {@code System.nanoTime()}). */
    public static FakeClock startingAt(long originNanos) {
        return new FakeClock(originNanos);
    }

    /** The current reading in nanoseconds. */
    public long nanos() {
        return nanos;
    }

    /** The current reading in nanoseconds: lets the clock stand in for a {@code LongSupplier} such as {@code System::nanoTime}. */
    @Override
    public long getAsLong() {
        return nanos;
    }

    /**
     * Moves the clock forward.
     *
     * @throws IllegalArgumentException when {@code step} is negative: a monotonic clock never goes back
     * @return this clock, for chaining
     */
    public FakeClock advance(Duration step) {
        return advanceNanos(step.toNanos());
    }

    /** Moves the clock forward by {@code step} nanoseconds (wrapping like {@code System.nanoTime()}). */
    public FakeClock advanceNanos(long step) {
        if (step < 0) {
            throw new IllegalArgumentException("a monotonic clock never goes back; step was " + step + " ns");
        }
        nanos += step;
        return this;
    }

    /** Moves the clock forward by {@code step} milliseconds. */
    public FakeClock advanceMillis(long step) {
        return advance(Duration.ofMillis(step));
    }

    @Override
    public String toString() {
        return "FakeClock[" + nanos + " ns]";
    }
}
