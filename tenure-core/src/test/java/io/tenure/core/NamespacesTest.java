package io.tenure.core;

import io.tenure.core.barrier.BarrierAwait;
import io.tenure.core.barrier.BarrierResult;
import io.tenure.core.barrier.BarrierTable;
import io.tenure.core.election.ElectionCampaign;
import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.Result.Rejected;
import io.tenure.core.lock.LockTable;
import io.tenure.core.semaphore.SemaphoreAcquire;
import io.tenure.core.semaphore.SemaphoreTable;
import io.tenure.core.watch.WatchEvent;
import org.junit.jupiter.api.Test;

import static io.tenure.core.Replica.expect;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which names clash (seed 004, issue 17): locks, semaphores and elections share one namespace,
 * and a name of one refuses the others; barriers have a namespace of their own, so a barrier may
 * have a lock's name. Every watch event names its kind, which tells them apart.
 */
class NamespacesTest {
    private final Replica replica = new Replica();

    @Test
    void aBarrierMayShareItsNameWithALockAndEachEventNamesItsKind() {
        replica.grantLease(1);
        replica.grantLease(2);
        Applied lock = replica.apply(new io.tenure.core.lock.LockAcquire("jobs/x", 1, null, false));
        Applied arrival = replica.apply(new BarrierAwait("jobs/x", 2, 2, true, 0));

        assertThat(arrival.result()).isInstanceOf(BarrierResult.Waiting.class);
        assertThat(Replica.watched(lock)).extracting(WatchEvent::kind).containsExactly(LockTable.NAME);
        assertThat(Replica.watched(arrival)).extracting(WatchEvent::kind).containsExactly(BarrierTable.NAME);
        assertThat(replica.state.primitive(BarrierTable.class).barrier("jobs/x").parties()).isEqualTo(2);
        assertThat(replica.locks().lock("jobs/x").leaseId()).isEqualTo(1);

        // The lock's namespace is still one: a semaphore or an election on the lock's name is refused.
        assertThat(expect(replica.run(new SemaphoreAcquire("jobs/x", 2, 2, 1, true, 0)), Rejected.class).message())
                .contains("'jobs/x' is a lock, not a semaphore");
        assertThat(expect(replica.run(new ElectionCampaign("jobs/x", 2, null, true, 0)), Rejected.class).message())
                .contains("'jobs/x' is a lock, not an election");

        // And both survive a snapshot, each in its own namespace.
        Replica restored = Replica.restore(replica.snapshot());
        assertThat(restored.state.primitive(BarrierTable.class).barrier("jobs/x")).isNotNull();
        assertThat(expect(restored.run(new SemaphoreAcquire("jobs/x", 2, 2, 1, true, 0)), Rejected.class).message())
                .contains("is a lock");
        assertThat(restored.state.primitive(SemaphoreTable.class).semaphore("jobs/x")).isNull();
    }
}
