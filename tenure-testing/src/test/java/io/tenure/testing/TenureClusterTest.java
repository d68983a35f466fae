package io.tenure.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenure.client.Lease;
import io.tenure.client.LockHandle;
import io.tenure.client.TenureClient;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Three real members in this JVM: a lock survives the loss of the leader, and a stopped member comes back. */
class TenureClusterTest {
    @Test
    void aLockOutlivesItsLeaderAndTheMemberRejoins() {
        try (TenureCluster cluster = TenureCluster.start(3)) {
            TenureClient client = cluster.newClient();
            Lease lease = client.grantLease(cluster.minTtl().multipliedBy(2), "worker");
            LockHandle lock = client.acquire("migrations", lease, Duration.ZERO, null);

            int leader = cluster.leader();
            cluster.stop(leader);
            assertThat(cluster.isRunning(leader)).isFalse();
            int next = cluster.leader();
            assertThat(next).isNotEqualTo(leader);

            // The lease is still kept alive through the other members, and the grant stands with its token.
            assertThat(lease.isValid()).isTrue();
            assertThat(lock.isValid()).isTrue();
            assertThat(client.describe("migrations").fencingToken()).isEqualTo(lock.fencingToken());
            assertThat(client.describe("migrations").leaseId()).isEqualTo(lease.id());
            lock.release();
            try (LockHandle again = client.acquire("migrations", lease, Duration.ZERO, null)) {
                assertThat(again.fencingToken()).isGreaterThan(lock.fencingToken());
            }

            cluster.restart(leader);
            assertThat(cluster.isRunning(leader)).isTrue();
            try (TenureClient direct = cluster.newClient(java.util.List.of(cluster.endpoint(leader)))) {
                assertThat(direct.status().getMembersCount()).isEqualTo(3);
            }
        }
    }
}
