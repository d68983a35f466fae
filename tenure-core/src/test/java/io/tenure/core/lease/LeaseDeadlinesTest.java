package io.tenure.core.lease;

import io.tenure.core.lease.LeaseDeadlines.Due;
import io.tenure.core.testing.FakeClock;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * When the leader may expire a lease, on its own monotonic clock (I5): never sooner than the TTL
 * after it applied the latest renewal, and again and again until the expiry is applied.
 */
class LeaseDeadlinesTest {
    private static final long TTL_MILLIS = 5_000;
    private static final long TTL_NANOS = Duration.ofMillis(TTL_MILLIS).toNanos();
    private static final long RETRY_NANOS = Duration.ofMillis(500).toNanos();
    private static final long GRANTED_AT = 7L << 16;

    private final FakeClock clock = FakeClock.startingAt(123_456_789L);
    private final LeaseDeadlines deadlines = new LeaseDeadlines();

    @Test
    void aLeaseIsNeverDueBeforeItsTtlHasPassedSinceTheRenewalWasApplied() {
        deadlines.renewed(1, TTL_MILLIS, GRANTED_AT, clock.nanos());

        clock.advanceNanos(TTL_NANOS - 1);
        assertThat(deadlines.due(clock.nanos(), RETRY_NANOS)).isEmpty();
        assertThat(deadlines.remaining(1, clock.nanos())).isEqualTo(1);

        clock.advanceNanos(1);
        assertThat(deadlines.due(clock.nanos(), RETRY_NANOS)).containsExactly(new Due(1, GRANTED_AT));
    }

    @Test
    void aDueLeaseIsReturnedAgainAfterTheRetryIntervalUntilItEnds() {
        deadlines.renewed(1, TTL_MILLIS, GRANTED_AT, clock.nanos());
        clock.advance(Duration.ofMillis(TTL_MILLIS));
        assertThat(deadlines.due(clock.nanos(), RETRY_NANOS)).containsExactly(new Due(1, GRANTED_AT));

        assertThat(deadlines.due(clock.nanos(), RETRY_NANOS)).as("not again at once").isEmpty();
        clock.advanceNanos(RETRY_NANOS - 1);
        assertThat(deadlines.due(clock.nanos(), RETRY_NANOS)).isEmpty();
        clock.advanceNanos(1);
        assertThat(deadlines.due(clock.nanos(), RETRY_NANOS)).as("the expiry proposal was lost: retried")
                .containsExactly(new Due(1, GRANTED_AT));

        deadlines.ended(1);
        clock.advance(Duration.ofMinutes(5));
        assertThat(deadlines.due(clock.nanos(), RETRY_NANOS)).isEmpty();
        assertThat(deadlines.knows(1)).isFalse();
        assertThat(deadlines.size()).isZero();
        assertThat(deadlines.remaining(1, clock.nanos())).isEqualTo(-1);
    }

    @Test
    void aRenewalPushesTheDeadlineAndTheExpiryIsConditionalOnIt() {
        long renewedAt = GRANTED_AT + (3L << 16);
        deadlines.renewed(1, TTL_MILLIS, GRANTED_AT, clock.nanos());
        clock.advance(Duration.ofSeconds(3));
        deadlines.renewed(1, TTL_MILLIS, renewedAt, clock.nanos());

        clock.advance(Duration.ofSeconds(2));
        assertThat(deadlines.due(clock.nanos(), RETRY_NANOS)).as("the first deadline is superseded").isEmpty();
        assertThat(deadlines.remaining(1, clock.nanos())).isEqualTo(Duration.ofSeconds(3).toNanos());

        clock.advance(Duration.ofSeconds(3));
        assertThat(deadlines.due(clock.nanos(), RETRY_NANOS)).containsExactly(new Due(1, renewedAt));
    }

    @Test
    void aRenewalAfterTheLeaseWasDueStopsTheRetries() {
        deadlines.renewed(1, TTL_MILLIS, GRANTED_AT, clock.nanos());
        clock.advance(Duration.ofMillis(TTL_MILLIS));
        assertThat(deadlines.due(clock.nanos(), RETRY_NANOS)).hasSize(1);

        deadlines.renewed(1, TTL_MILLIS, GRANTED_AT + 1, clock.nanos());
        clock.advanceNanos(RETRY_NANOS);

        assertThat(deadlines.due(clock.nanos(), RETRY_NANOS)).isEmpty();
        assertThat(deadlines.remaining(1, clock.nanos())).isEqualTo(TTL_NANOS - RETRY_NANOS);
    }

    @Test
    void everyDueLeaseIsReturnedInDeadlineOrderAndOthersWait() {
        deadlines.renewed(3, 3_000, 30, clock.nanos());
        deadlines.renewed(1, 1_000, 10, clock.nanos());
        deadlines.renewed(2, 2_000, 20, clock.nanos());
        deadlines.renewed(9, 9_000, 90, clock.nanos());

        clock.advance(Duration.ofSeconds(3));

        assertThat(deadlines.due(clock.nanos(), RETRY_NANOS)).containsExactly(new Due(1, 10), new Due(2, 20), new Due(3, 30));
        assertThat(deadlines.size()).isEqualTo(4);
        assertThat(deadlines.remaining(9, clock.nanos())).isEqualTo(Duration.ofSeconds(6).toNanos());
    }

    @Test
    void remainingCountsDownToZeroAndIsMinusOneForAnUnknownLease() {
        deadlines.renewed(1, TTL_MILLIS, GRANTED_AT, clock.nanos());

        assertThat(deadlines.remaining(1, clock.nanos())).isEqualTo(TTL_NANOS);
        clock.advance(Duration.ofSeconds(2));
        assertThat(deadlines.remaining(1, clock.nanos())).isEqualTo(TTL_NANOS - Duration.ofSeconds(2).toNanos());
        clock.advance(Duration.ofSeconds(10));
        assertThat(deadlines.remaining(1, clock.nanos())).isZero();
        assertThat(deadlines.remaining(2, clock.nanos())).isEqualTo(-1);
        assertThat(deadlines.knows(1)).isTrue();
        assertThat(deadlines.knows(2)).isFalse();
    }

    @Test
    void nanosUntilNextIsTheEarliestLiveDeadline() {
        assertThat(deadlines.nanosUntilNext(clock.nanos())).as("no lease known").isEqualTo(-1);

        deadlines.renewed(1, 2_000, 10, clock.nanos());
        deadlines.renewed(2, 4_000, 20, clock.nanos());
        assertThat(deadlines.nanosUntilNext(clock.nanos())).isEqualTo(Duration.ofSeconds(2).toNanos());

        clock.advance(Duration.ofSeconds(1));
        deadlines.renewed(1, 2_000, 11, clock.nanos());
        assertThat(deadlines.nanosUntilNext(clock.nanos())).as("lease 1 renewed: still first, 2 s away")
                .isEqualTo(Duration.ofSeconds(2).toNanos());

        deadlines.ended(1);
        assertThat(deadlines.nanosUntilNext(clock.nanos())).as("lease 1 ended: lease 2's deadline")
                .isEqualTo(Duration.ofSeconds(3).toNanos());

        clock.advance(Duration.ofSeconds(5));
        assertThat(deadlines.nanosUntilNext(clock.nanos())).as("overdue").isZero();

        deadlines.ended(2);
        assertThat(deadlines.nanosUntilNext(clock.nanos())).isEqualTo(-1);
    }

    @Test
    void aNegativeClockOriginWorksLikeAnyOther() {
        FakeClock negative = FakeClock.startingAt(-Duration.ofDays(3).toNanos());
        deadlines.renewed(1, TTL_MILLIS, GRANTED_AT, negative.nanos());

        negative.advanceNanos(TTL_NANOS - 1);
        assertThat(deadlines.due(negative.nanos(), RETRY_NANOS)).isEmpty();
        negative.advanceNanos(1);
        assertThat(deadlines.due(negative.nanos(), RETRY_NANOS)).containsExactly(new Due(1, GRANTED_AT));
    }

    /**
     * Renewals applied at one instant: the server reads the clock once per log entry, and an
     * entry may carry a grant and a renewal of the same lease, or a renewal batch naming a lease
     * twice. The lease must still be due once, not once per renewal.
     */
    @Test
    void aLeaseRenewedTwiceAtTheSameInstantIsDueOnce() {
        deadlines.renewed(1, TTL_MILLIS, GRANTED_AT, clock.nanos());
        deadlines.renewed(1, TTL_MILLIS, GRANTED_AT + 1, clock.nanos());

        clock.advance(Duration.ofMillis(TTL_MILLIS));
        assertThat(deadlines.due(clock.nanos(), RETRY_NANOS)).containsExactly(new Due(1, GRANTED_AT + 1));

        clock.advanceNanos(RETRY_NANOS);
        assertThat(deadlines.due(clock.nanos(), RETRY_NANOS)).as("and once per retry").containsExactly(new Due(1, GRANTED_AT + 1));
    }

    /**
     * {@code System.nanoTime()} has an arbitrary origin; its Javadoc asks for {@code t1 - t0 < 0}
     * comparisons because readings may overflow. A TTL that spans the wrap of a long must still
     * be a whole TTL (I5).
     */
    @Test
    void aDeadlinePastTheWrapOfTheClockIsNotDueEarly() {
        FakeClock nearWrap = FakeClock.startingAt(Long.MAX_VALUE - Duration.ofSeconds(1).toNanos());
        deadlines.renewed(1, TTL_MILLIS, GRANTED_AT, nearWrap.nanos());

        assertThat(deadlines.due(nearWrap.nanos(), RETRY_NANOS)).as("just renewed").isEmpty();
        nearWrap.advance(Duration.ofSeconds(2));
        assertThat(deadlines.due(nearWrap.nanos(), RETRY_NANOS)).as("2 s of a 5 s TTL, clock wrapped").isEmpty();
        assertThat(deadlines.remaining(1, nearWrap.nanos())).isEqualTo(Duration.ofSeconds(3).toNanos());
        nearWrap.advance(Duration.ofSeconds(3));
        assertThat(deadlines.due(nearWrap.nanos(), RETRY_NANOS)).containsExactly(new Due(1, GRANTED_AT));
    }
}
