package io.tenure.server.http;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The 409 retry hint: the holder's remaining TTL plus one lease period per waiter, bounded. */
class HttpRetryHintTest {
    @Test
    void growsWithTheHoldersRemainingTtlAndTheQueue() {
        assertThat(RetryHint.recommend(4_000, 0, 10_000)).isEqualTo(4_000);
        assertThat(RetryHint.recommend(4_000, 1, 10_000)).isEqualTo(14_000);
        assertThat(RetryHint.recommend(4_000, 2, 10_000)).isEqualTo(24_000);
        assertThat(RetryHint.recommend(9_000, 2, 10_000)).isEqualTo(29_000);
    }

    @Test
    void isBoundedAndNeverNegative() {
        assertThat(RetryHint.recommend(0, 0, 10_000)).isEqualTo(RetryHint.MIN_MS);
        assertThat(RetryHint.recommend(-1, 0, 10_000)).isEqualTo(RetryHint.MIN_MS);
        assertThat(RetryHint.recommend(10_000, 10, 86_400_000)).isEqualTo(RetryHint.MAX_MS);
        assertThat(RetryHint.recommend(Long.MAX_VALUE, Integer.MAX_VALUE, Long.MAX_VALUE)).isEqualTo(RetryHint.MAX_MS);
        assertThat(RetryHint.recommend(1_000, -4, -5)).isEqualTo(1_000);
    }

    @Test
    void isTheSameForTheSameState() {
        assertThat(RetryHint.recommend(3_210, 3, 5_000)).isEqualTo(RetryHint.recommend(3_210, 3, 5_000));
    }
}
