package io.tenure.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenure.client.Lease;
import io.tenure.client.LeaseLoss;
import io.tenure.client.LockDescription;
import io.tenure.client.LockHandle;
import io.tenure.client.TenureClient;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Invariants I5 and I6 for a lease that is never renewed ({@code TenureClient.grantExpiringLease},
 * what the ShedLock provider holds its locks with), against a real member: the client gives it up
 * while the member still holds its lock, and the member ends it no sooner than its TTL after the
 * grant was sent, and not much later.
 */
class ExpiringLeaseTest {
    private static final Duration TTL = Duration.ofSeconds(6);

    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.members(1);

    @Test
    void theClientGivesItUpBeforeTheMemberEndsItAndTheMemberEndsItAtItsTtl() throws Exception {
        TenureClient client = tenure.client();
        long sentAt = System.nanoTime();
        Lease lease = client.grantExpiringLease(TTL, "expiring-holder");
        LockHandle held = client.lock("expiring/lock", lease).acquire(Duration.ofSeconds(10));

        LeaseLoss loss = lease.lost().get(30, TimeUnit.SECONDS);
        long lostAt = System.nanoTime();
        assertThat(loss.reason()).isEqualTo(LeaseLoss.Reason.EXPIRED);
        assertThat(lostAt - sentAt).as("given up at 5/6 of the TTL after the grant's send, no sooner")
                .isGreaterThanOrEqualTo(TTL.toNanos() - TTL.toNanos() / 6);
        // I6: when the client gives it up, the member has not ended it yet (it ends at the TTL, a
        // sixth of it, a second here, later).
        LockDescription atLoss = client.describe("expiring/lock");
        assertThat(atLoss.held()).as("still held on the member when the client gave it up").isTrue();
        assertThat(atLoss.leaseId()).isEqualTo(lease.id());
        assertThat(atLoss.fencingToken()).isEqualTo(held.fencingToken());

        // I5: the member ends it, no sooner than the TTL after the send, and the next holder gets a larger token.
        Lease next = client.grantLease(Duration.ofSeconds(30), "next-holder");
        LockHandle after = client.lock("expiring/lock", next).acquire(Duration.ofSeconds(20));
        long grantedAt = System.nanoTime();
        assertThat(grantedAt - sentAt).as("the member kept the expiring lease for its whole TTL")
                .isGreaterThanOrEqualTo(TTL.toNanos());
        assertThat(Duration.ofNanos(grantedAt - sentAt)).as("and ended it soon after").isLessThan(TTL.plusSeconds(10));
        assertThat(after.fencingToken()).isGreaterThan(held.fencingToken());
        next.revoke();
    }
}
