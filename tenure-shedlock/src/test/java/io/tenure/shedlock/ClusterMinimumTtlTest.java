package io.tenure.shedlock;

import static io.tenure.shedlock.TenureLockProviderTest.config;
import static io.tenure.shedlock.TenureLockProviderTest.held;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenure.client.InvalidArgumentException;
import io.tenure.testing.TenureExtension;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A cluster grants no lease shorter than 10 election timeouts and 5 s (a single member: 1 s), so a
 * {@code lockAtMostFor} below that is refused by the members, and the provider says which field to
 * change rather than passing on a refusal about a lease the user never asked for.
 */
class ClusterMinimumTtlTest {
    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.members(3);

    @Test
    void aLockAtMostForBelowTheClustersMinimumTtlIsRefusedNamingIt() {
        Duration minimum = tenure.cluster().minTtl();
        assertThat(minimum).isEqualTo(Duration.ofSeconds(5));
        try (TenureLockProvider provider = new TenureLockProvider(tenure.client(), "shedlock/")) {
            assertThatThrownBy(() -> provider.lock(config("hourly", Duration.ofSeconds(2), Duration.ZERO)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("lockAtMostFor of lock 'hourly' (2000 ms) was refused as a lease TTL by the Tenure cluster")
                    .hasMessageContaining("5000 ms")
                    .hasCauseInstanceOf(InvalidArgumentException.class);
            assertThat(tenure.client().describe("shedlock/hourly").held()).isFalse();

            TenureSimpleLock atTheMinimum = held(provider.lock(config("hourly", minimum, Duration.ZERO)));
            assertThat(atTheMinimum.lease().ttl()).isEqualTo(minimum);
            atTheMinimum.unlock();
        }
    }
}
