package io.tenure.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The request rate limit's token bucket, on a clock the test moves (the limit against a real member: tenure-testing's LimitsTest). */
class RequestRateGuardTest {
    @Test
    void theRequestRateGuardRefusesBeyondItsRateButNotKeepAlives() {
        long[] now = {0};
        RequestRateGuard guard = new RequestRateGuard(3, () -> now[0]);
        assertThat(guard.tryAdmit()).isTrue();
        assertThat(guard.tryAdmit()).isTrue();
        assertThat(guard.tryAdmit()).isTrue();
        assertThat(guard.tryAdmit()).isFalse();
        assertThat(guard.refusal().getMessage()).contains("--max-requests-per-second").contains("3 requests per second");
        now[0] = TimeUnit.MILLISECONDS.toNanos(334);
        assertThat(guard.tryAdmit()).as("a third of a second refills one").isTrue();
        assertThat(guard.tryAdmit()).isFalse();
        assertThat(new RequestRateGuard(0, () -> 0).tryAdmit()).as("0 = no guard").isTrue();
    }
}
