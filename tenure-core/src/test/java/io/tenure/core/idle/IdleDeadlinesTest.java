package io.tenure.core.idle;

import io.tenure.core.kernel.IdleName;
import io.tenure.core.testing.FakeClock;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * When a member may propose forgetting an idle name, on its own monotonic clock: never sooner than
 * the idle time after it first saw the name idle, oldest first, until dropped.
 */
class IdleDeadlinesTest {
    private static final long IDLE_NANOS = Duration.ofSeconds(60).toNanos();
    private static final IdleName POOL = new IdleName("semaphore", "pool", 7L << 16);
    private static final IdleName GATE = new IdleName("barrier", "gate", 9L << 16);

    private final FakeClock clock = FakeClock.startingAt(987_654_321L);
    private final IdleDeadlines deadlines = new IdleDeadlines(IDLE_NANOS);

    @Test
    void aNameIsDueOnlyOnceTheIdleTimeHasPassedSinceThisMemberFirstSawIt() {
        deadlines.saw(List.of(POOL), clock.nanos());
        clock.advance(Duration.ofSeconds(30));
        deadlines.saw(List.of(POOL, GATE), clock.nanos());

        clock.advanceNanos(IDLE_NANOS - Duration.ofSeconds(30).toNanos() - 1);
        assertThat(deadlines.due(clock.nanos(), 100)).isEmpty();
        clock.advanceNanos(1);
        assertThat(deadlines.due(clock.nanos(), 100)).as("seen again, it keeps its first time").containsExactly(POOL);
        assertThat(deadlines.due(clock.nanos(), 100)).as("due until dropped").containsExactly(POOL);
        deadlines.drop(List.of(POOL));
        assertThat(deadlines.due(clock.nanos(), 100)).isEmpty();
        clock.advance(Duration.ofSeconds(30));
        assertThat(deadlines.due(clock.nanos(), 100)).containsExactly(GATE);
        deadlines.drop(List.of(GATE));
        assertThat(deadlines.size()).isZero();
    }

    @Test
    void theNextSweepAsksAfterTheNewestPositionSeenOrFromTheStartAfterASnapshot() {
        deadlines.saw(List.of(GATE, POOL), clock.nanos());
        assertThat(deadlines.lastSince()).isEqualTo(9L << 16);

        deadlines.rescan();

        assertThat(deadlines.lastSince()).isZero();
    }

    @Test
    void atMostTheAskedNumberIsDueAtOnceAndAZeroIdleTimeIsDueAtTheNextSweep() {
        IdleDeadlines now = new IdleDeadlines(0);
        now.saw(List.of(POOL, GATE), clock.nanos());

        assertThat(now.due(clock.nanos(), 1)).containsExactly(POOL);
        now.drop(List.of(POOL));
        assertThat(now.due(clock.nanos(), 1)).containsExactly(GATE);
    }
}
