package io.tenure.bench;

import java.time.Duration;

/** The warm-up, then the measured window, on {@link System#nanoTime()}. */
final class Window {
    final long start;
    final long end;

    Window(Duration warmup, Duration duration) {
        this.start = System.nanoTime() + warmup.toNanos();
        this.end = start + duration.toNanos();
    }

    /** Whether an operation that began at {@code began} and ended at {@code ended} counts. */
    boolean counts(long began, long ended) {
        return began - start >= 0 && ended - end <= 0;
    }

    boolean over(long now) {
        return now - end >= 0;
    }

    double seconds() {
        return (end - start) / 1e9;
    }
}
