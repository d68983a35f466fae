package io.tenure.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenure.core.lock.LockResult.Granted;
import io.tenure.core.lock.LockTable;
import org.junit.jupiter.api.Test;

/**
 * Idle state is collected (seed 004, "Garbage Collection"): a lock with no holder and no waiter
 * leaves nothing behind, an ended lease leaves nothing but the bounded memory of recent
 * releases, and collecting never changes a key's token sequence (tokens are log positions, not
 * per-key counters that a collected entry could reset).
 */
class IdleStateTest {
    private final Replica replica = new Replica();

    @Test
    void aFreedLockLeavesNoStateAndItsNextTokenIsStillLarger() {
        replica.grantLease(1);
        long previous = 0;
        for (int round = 0; round < 100; round++) {
            for (int key = 0; key < 50; key++) {
                Granted granted = replica.acquire("job-" + key, 1);
                if (key == 7) {
                    assertThat(granted.fencingToken()).isGreaterThan(previous);
                    previous = granted.fencingToken();
                }
                replica.release("job-" + key, 1, granted.fencingToken());
            }
            assertThat(replica.locks().lockCount()).as("locks left after round " + round).isZero();
        }
        assertThat(replica.locks().waiterCount()).isZero();
    }

    @Test
    void anEndedLeaseLeavesNoLeaseNoWaitAndNoPerClientCount() {
        replica.grantLease(1);
        replica.grantLease(2);
        replica.acquire("a", 1);
        replica.enqueue("a", 2);
        replica.acquire("b", 2);
        assertThat(replica.state.leaseCount(Replica.clientOf(2))).isEqualTo(1);
        assertThat(replica.state.holdsAndWaits(Replica.clientOf(2))).isEqualTo(2);

        Replica restored = Replica.restore(replica.snapshot());
        assertThat(restored.state.leaseCount(Replica.clientOf(2))).as("per-client counts survive a snapshot").isEqualTo(1);
        assertThat(restored.state.holdsAndWaits(Replica.clientOf(2))).isEqualTo(2);

        replica.revoke(2);
        replica.revoke(1);

        assertThat(replica.state.leaseCount()).isZero();
        assertThat(replica.locks().lockCount()).isZero();
        assertThat(replica.state.leaseCount(Replica.clientOf(2))).isZero();
        assertThat(replica.state.holdsAndWaits(Replica.clientOf(2))).isZero();
    }

    @Test
    void theRememberedReleasesAreBounded() {
        replica.grantLease(1);
        for (int i = 0; i < LockTable.RECENT_RELEASES + 1_000; i++) {
            Granted granted = replica.acquire("k", 1);
            replica.release("k", 1, granted.fencingToken());
        }
        assertThat(replica.locks().recentReleaseCount()).isEqualTo(LockTable.RECENT_RELEASES);
    }
}
