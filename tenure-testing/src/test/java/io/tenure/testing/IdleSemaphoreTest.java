package io.tenure.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenure.client.FailedPreconditionException;
import io.tenure.client.Lease;
import io.tenure.client.LockHandle;
import io.tenure.client.SemaphoreDescription;
import io.tenure.client.SemaphorePermit;
import io.tenure.client.TenureClient;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A semaphore nobody holds or waits for stays idle, keeping its limit and its name's kind, until
 * the leader forgets it after the member's idle time (here 1 s), through the log.
 */
class IdleSemaphoreTest {
    private static final Duration TTL = Duration.ofSeconds(10);

    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.of(TenureCluster.builder().members(1)
            .config(c -> c.withLimits(c.limits().withIdleTime(Duration.ofSeconds(1)))));

    @Test
    void anIdleSemaphoreKeepsItsLimitUntilTheLeaderForgetsItThenAnotherLimitOrKindMayHaveTheName() {
        TenureClient client = tenure.client();
        Lease lease = client.grantLease(TTL, "a");
        long releasedAfter;
        try (SemaphorePermit permit = client.semaphore("idle/pool", 3, lease).acquire(2)) {
            releasedAfter = permit.fencingToken();
        }

        SemaphoreDescription idle = client.semaphore("idle/pool", 3).describe();
        assertThat(idle.exists()).isTrue();
        assertThat(idle.isIdle()).isTrue();
        assertThat(idle.idleSinceRevision()).isGreaterThan(releasedAfter);
        // Forgetting takes a second or two: these refusals come first, within milliseconds of the release.
        assertThatThrownBy(() -> client.semaphore("idle/pool", 5, lease).tryAcquire(1))
                .isInstanceOf(FailedPreconditionException.class).hasMessageContaining("limit 3, not 5");
        assertThatThrownBy(() -> client.lock("idle/pool", lease).tryAcquire())
                .isInstanceOf(FailedPreconditionException.class).hasMessageContaining("is a semaphore, not a lock", "idle since");

        Await.until("the idle semaphore forgotten", Duration.ofSeconds(20),
                () -> !client.semaphore("idle/pool", 3).describe().exists());
        try (SemaphorePermit five = client.semaphore("idle/pool", 5, lease).acquire(5)) {
            assertThat(five.permits()).isEqualTo(5);
        }
        Await.until("forgotten again", Duration.ofSeconds(20), () -> !client.semaphore("idle/pool", 5).describe().exists());
        try (LockHandle lock = client.lock("idle/pool", lease).acquire()) {
            assertThat(lock.fencingToken()).as("the name is a lock's now, its token above the semaphore's").isGreaterThan(releasedAfter);
        }
        lease.revoke();
    }
}
