package io.tenure.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenure.server.LimitExceeded;
import io.tenure.server.Overloaded;
import org.junit.jupiter.api.Test;

/** Over HTTP a shed request is 429 {@code overloaded} with its hint; a limit is 429 {@code limit_exceeded} without one. */
class FailuresTest {
    @Test
    void aShedRequestIs429OverloadedWithItsRetryHint() {
        Failure failure = Failures.of(new Overloaded("acquire", 1_200, "this member is behind"));

        assertThat(failure.code).isEqualTo(ErrorCode.OVERLOADED);
        assertThat(failure.code.status).isEqualTo(429);
        assertThat(failure.code.wire).isEqualTo("overloaded");
        assertThat(failure.extra).containsEntry("retry_after_ms", 1_200L);
        assertThat(failure.getMessage()).isEqualTo("this member is behind");
    }

    @Test
    void aLimitIs429WithoutAHint() {
        Failure failure = Failures.of(new LimitExceeded("max-waiters-per-lock", "queue full"));

        assertThat(failure.code).isEqualTo(ErrorCode.LIMIT_EXCEEDED);
        assertThat(failure.extra).doesNotContainKey("retry_after_ms");
    }
}
