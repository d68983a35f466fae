package io.tenure.client;

/**
 * A source of monotonic time in nanoseconds, like {@link System#nanoTime()}: only differences
 * between readings mean anything. Every lease-safety decision of the client reads this clock, so
 * tests can drive a lease through its whole life by advancing a fake one instead of sleeping.
 */
@FunctionalInterface
public interface MonotonicClock {
    long nanoTime();

    /** The JVM's monotonic clock. */
    static MonotonicClock system() {
        return System::nanoTime;
    }
}
