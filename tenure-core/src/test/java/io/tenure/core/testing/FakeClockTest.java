package io.tenure.core.testing;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.function.LongSupplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class FakeClockTest {

    @Test
    void movesOnlyWhenAdvanced() {
        FakeClock clock = new FakeClock();
        assertThat(clock.nanos()).isZero();

        clock.advance(Duration.ofMillis(3)).advanceNanos(5).advanceMillis(1);

        assertThat(clock.nanos()).isEqualTo(4_000_005L);
        assertThat(clock.nanos()).as("reading does not move it").isEqualTo(4_000_005L);
    }

    @Test
    void standsInForANanoTimeSupplier() {
        FakeClock clock = FakeClock.startingAt(-42);
        LongSupplier nanoTime = clock;

        clock.advanceNanos(50);

        assertThat(nanoTime.getAsLong()).isEqualTo(8);
    }

    @Test
    void wrapsLikeNanoTimeSoOnlyDifferencesMatter() {
        FakeClock clock = FakeClock.startingAt(Long.MAX_VALUE);
        long before = clock.nanos();

        clock.advanceNanos(10);

        assertThat(clock.nanos()).isNegative();
        assertThat(clock.nanos() - before).isEqualTo(10);
    }

    @Test
    void neverGoesBack() {
        FakeClock clock = new FakeClock();

        assertThatThrownBy(() -> clock.advance(Duration.ofNanos(-1))).isInstanceOf(IllegalArgumentException.class);
        assertThat(clock.nanos()).isZero();
    }
}
