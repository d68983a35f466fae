package io.tenure.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenure.client.Lease;
import io.tenure.client.LockHandle;
import io.tenure.client.TenureClient;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The extension as a user registers it: one real member for the class, injected client. */
class TenureExtensionTest {
    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.members(1);

    @Test
    void aClientParameterTalksToTheRunningMember(TenureClient client) {
        try (Lease lease = client.grantLease(Duration.ofSeconds(5), "worker-1");
             LockHandle lock = client.acquire("jobs/nightly", lease, Duration.ZERO, null)) {
            assertThat(lock.fencingToken()).isPositive();
            assertThat(client.status().getLeader()).isEqualTo("n1");
        }
    }

    @Test
    void theClusterParameterIsTheSameMembers(TenureCluster cluster) {
        assertThat(cluster.endpoints()).containsExactlyElementsOf(tenure.endpoints());
        assertThat(cluster.minTtl()).isEqualTo(Duration.ofSeconds(1));
        assertThat(cluster.isRunning(0)).isTrue();
    }
}
