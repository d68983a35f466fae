package io.tenure.it;

import io.tenure.client.Lease;
import io.tenure.client.TenureClient;
import io.tenure.client.TenureCountDownLatch;
import io.tenure.testing.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A count-down latch across {@code kill -9} of the leader, with real processes: the count and the
 * waiters in arrival order survive (the waits fail over to a survivor), nobody is released early,
 * and the count-downs after the failover release every waiter together at zero.
 */
@ExtendWith(ItLogs.class)
class LatchFailoverTest {
    static final Duration TTL = Duration.ofSeconds(30);
    static final String LATCH = "failover/latch";

    @TempDir
    Path work;

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void theWaitersOfALatchSurviveALeaderKillAndAreReleasedTogetherAtZero() throws Exception {
        try (Cluster cluster = Cluster.start(work, 3);
             TenureClient client = TenureClient.connect(cluster.endpoints())) {
            TenureCountDownLatch latch = client.countDownLatch(LATCH);
            assertThat(latch.trySetCount(3)).isTrue();
            assertThat(latch.countDown()).isEqualTo(2);
            List<Lease> leases = new ArrayList<>();
            List<CompletableFuture<Boolean>> waiting = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                Lease lease = client.grantLease(TTL, "waiter-" + i);
                leases.add(lease);
                waiting.add(client.countDownLatch(LATCH, lease).awaitAsync());
                int count = i + 1;
                Await.until("latch " + LATCH + " to have " + count + " waiting", Duration.ofSeconds(30),
                        () -> latch.describe().waiting().size() >= count);
            }

            String leader = cluster.leader();
            cluster.kill9(leader);
            String newLeader = cluster.awaitNewLeader(leader, Cluster.ELECTION_LIMIT);

            TenureCountDownLatch.Description after = latch.describe();
            assertThat(after.count()).as("the count after " + leader + " was killed (" + newLeader + " leads)").isEqualTo(2);
            assertThat(after.waiting()).extracting(TenureCountDownLatch.Waiter::clientId)
                    .containsExactly("waiter-0", "waiter-1", "waiter-2");
            assertThat(waiting).as("nobody released early").noneMatch(CompletableFuture::isDone);
            assertThat(latch.countDown()).isEqualTo(1);
            assertThat(waiting).as("nobody released above zero").noneMatch(CompletableFuture::isDone);

            assertThat(latch.countDown()).isZero();

            for (CompletableFuture<Boolean> waiter : waiting) {
                assertThat(waiter.get(30, TimeUnit.SECONDS)).isTrue();
            }
            assertThat(latch.describe().exists()).isFalse();
            leases.forEach(Lease::revoke);
        }
    }
}
