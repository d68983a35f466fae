package io.tenure.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class LeaseTimersTest {
    private final FakeTime time = new FakeTime();
    private final LeaseTimers timers = new LeaseTimers(time, time);
    private final List<Long> firedAt = new ArrayList<>();

    private Runnable record() {
        return () -> firedAt.add(time.elapsedNanos());
    }

    LeaseTimersTest() {
        // Off the millisecond grid (FakeTime starts on it), so that rounding shows.
        time.jump(Duration.ofNanos(337_123));
    }

    @Test
    void timersDueInTheSameMillisecondShareOneScheduledTask() {
        for (int i = 0; i < 1_000; i++) {
            timers.notBefore(record(), TimeUnit.MILLISECONDS.toNanos(3_000) + i * 500L); // 3 s + 0..0.5 ms
        }
        timers.notAfter(record(), TimeUnit.MILLISECONDS.toNanos(3_001) + 100);

        assertThat(time.pendingTasks()).as("scheduled tasks for 1,001 timers in two milliseconds").isLessThanOrEqualTo(3);
        time.advance(Duration.ofSeconds(4));
        assertThat(firedAt).hasSize(1_001);
    }

    @Test
    void notBeforeFiresNeverEarlyAndLessThanOneMillisecondLate() {
        for (long delay : DELAYS) {
            long after = firedAfter(delay, true);
            assertThat(after).as("fired after a delay of %d ns", delay)
                    .isGreaterThanOrEqualTo(delay)
                    .isLessThan(delay + LeaseTimers.SLOT_NANOS);
        }
    }

    @Test
    void notAfterFiresNeverLateAndLessThanOneMillisecondEarly() {
        for (long delay : DELAYS) {
            long after = firedAfter(delay, false);
            assertThat(after).as("fired after a delay of %d ns", delay)
                    .isLessThanOrEqualTo(delay)
                    .isGreaterThan(delay - LeaseTimers.SLOT_NANOS);
        }
    }

    private static final long[] DELAYS = {1_000_000, 1_000_001, 1_999_999, 3_333_333_333L, 5_000_000_000L, 7_123_456_789L};

    private long firedAfter(long delay, boolean notBefore) {
        firedAt.clear();
        long start = time.elapsedNanos();
        if (notBefore) {
            timers.notBefore(record(), delay);
        } else {
            timers.notAfter(record(), delay);
        }
        time.advance(Duration.ofNanos(delay + 2 * LeaseTimers.SLOT_NANOS));
        assertThat(firedAt).hasSize(1);
        return firedAt.get(0) - start;
    }

    @Test
    void aDelayUnderOneMillisecondIsExact() {
        long start = time.elapsedNanos();
        timers.notBefore(record(), 400_000);
        time.advance(Duration.ofMillis(2));
        assertThat(firedAt).containsExactly(start + 400_000);
    }

    @Test
    void aCancelledTimerDoesNotRunAndItsNeighboursDo() {
        LeaseTimers.Timer cancelled = timers.notBefore(() -> firedAt.add(-1L), TimeUnit.SECONDS.toNanos(2));
        timers.notAfter(record(), TimeUnit.SECONDS.toNanos(2));
        LeaseTimers.Timer exact = timers.notAfter(() -> firedAt.add(-2L), 10_000);
        cancelled.cancel();
        exact.cancel();
        cancelled.cancel(); // idempotent
        time.advance(Duration.ofSeconds(3));
        assertThat(firedAt).hasSize(1).doesNotContain(-1L, -2L);
    }
}
