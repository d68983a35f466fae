package io.tenure.it;

import io.tenure.client.FailedPreconditionException;
import io.tenure.client.Lease;
import io.tenure.client.SemaphoreDescription;
import io.tenure.client.SemaphorePermit;
import io.tenure.client.TenureClient;
import io.tenure.testing.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * An idle semaphore across {@code kill -9} of the leader, with real processes: the new leader
 * forgets it after the idle time (here 6 s) counted from when it saw it idle as a follower, never
 * before the idle time since the release was sent, and keeps its limit until then.
 */
@ExtendWith(ItLogs.class)
class IdleSemaphoreFailoverTest {
    static final Duration IDLE = Duration.ofSeconds(6);
    static final String POOL = "idle/pool";

    @TempDir
    Path work;

    @Test
    @Timeout(value = 4, unit = TimeUnit.MINUTES)
    void theNewLeaderForgetsAnIdleSemaphoreNoEarlierThanTheIdleTime() throws Exception {
        Cluster.Options options = new Cluster.Options().size(3)
                .memberArgs(name -> List.of("--idle-time", IDLE.toSeconds() + "s"));
        try (Cluster cluster = Cluster.start(work, options);
             TenureClient client = TenureClient.connect(cluster.endpoints())) {
            Lease lease = client.grantLease(Duration.ofSeconds(30), "idle");
            SemaphorePermit permit = client.semaphore(POOL, 3, lease).acquire(1, Duration.ofSeconds(10));
            long releasedFrom = System.nanoTime(); // the semaphore cannot be idle before this
            permit.release();
            cluster.kill9(cluster.leader());

            // Until it is forgotten it keeps its limit; and it is never forgotten before the idle time.
            assertThatThrownBy(() -> client.semaphore(POOL, 5, lease).tryAcquire(1))
                    .isInstanceOf(FailedPreconditionException.class).hasMessageContaining("limit 3, not 5");
            long[] forgottenBy = {0};
            Await.every(Duration.ofMillis(100)).until("the idle semaphore forgotten", Duration.ofMinutes(2), () -> {
                SemaphoreDescription read = client.semaphore(POOL, 3).describe();
                if (read.exists()) {
                    assertThat(read.isIdle()).isTrue();
                    assertThat(read.limit()).isEqualTo(3);
                    return false;
                }
                forgottenBy[0] = System.nanoTime();
                return true;
            });
            assertThat(Duration.ofNanos(forgottenBy[0] - releasedFrom)).as("never before the idle time").isGreaterThanOrEqualTo(IDLE);

            try (SemaphorePermit five = client.semaphore(POOL, 5, lease).acquire(5, Duration.ofSeconds(10))) {
                assertThat(five.fencingToken()).isGreaterThan(permit.fencingToken());
            }
            lease.revoke();
        }
    }
}
