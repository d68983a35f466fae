package io.tenure.core;

import io.tenure.core.kernel.Applied;
import io.tenure.core.lock.LockView;
import io.tenure.core.kernel.Result;
import io.tenure.core.lock.LockAcquire;
import io.tenure.core.lock.LockRelease;
import io.tenure.core.lock.LockResult.Busy;
import io.tenure.core.lock.LockResult.Granted;
import io.tenure.core.lock.LockResult.Queued;
import io.tenure.core.lock.LockResult.Released;
import io.tenure.core.watch.WatchEvent;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static io.tenure.core.Replica.effects;
import static io.tenure.core.Replica.grantsToWaiters;
import static io.tenure.core.Replica.waitsEnded;
import static io.tenure.core.Replica.expect;
import static io.tenure.core.Replica.watched;
import static org.assertj.core.api.Assertions.assertThat;

/** The FIFO wait queue of a lock (I7) and reentrant acquisition by the holding lease. */
class LockQueueTest {
    private final Replica replica = new Replica();

    @Test
    void waitersAreGrantedStrictlyInJoinOrderOnePerRelease() {
        long[] leases = {1, 2, 3, 4, 5};
        for (long id : leases) {
            replica.grantLease(id);
        }
        long token = replica.acquire("k", 1).fencingToken();
        List<Long> joinedAt = new ArrayList<>();
        for (int i = 1; i < leases.length; i++) {
            long position = replica.nextPosition();
            Queued queued = replica.enqueue("k", leases[i]);
            assertThat(queued.joinedAt()).isEqualTo(position);
            assertThat(queued.ahead()).isEqualTo(i - 1);
            assertThat(queued.holder()).isEqualTo(Replica.clientOf(1));
            joinedAt.add(position);
        }
        assertThat(replica.lock("k").waiters()).extracting(LockView.Waiter::joinedAt).containsExactlyElementsOf(joinedAt);
        assertThat(replica.waiters("k")).containsExactly(2L, 3L, 4L, 5L);

        long holder = 1;
        for (int i = 1; i < leases.length; i++) {
            Applied applied = replica.apply(new LockRelease("k", holder, token));
            Released released = expect(applied.result(), Released.class);
            List<Granted> woken = grantsToWaiters(applied);

            assertThat(woken).as("one release wakes exactly one waiter")
                    .containsExactly(new Granted("k", leases[i], released.nextFencingToken(), false));
            assertThat(released.nextFencingToken()).isGreaterThan(token);
            holder = leases[i];
            token = released.nextFencingToken();
            assertThat(replica.lock("k").leaseId()).isEqualTo(holder);
            assertThat(replica.lock("k").fencingToken()).isEqualTo(token);
            assertThat(replica.waiters("k")).containsExactlyElementsOf(Arrays.stream(leases, i + 1, leases.length).boxed().toList());
            assertThat(waitsEnded(applied)).isEmpty();
        }

        Applied last = replica.apply(new LockRelease("k", holder, token));
        assertThat(last.result()).isEqualTo(new Released("k", 0));
        assertThat(grantsToWaiters(last)).isEmpty();
        assertThat(watched(last)).extracting(WatchEvent::type).containsExactly(WatchEvent.Type.DELETE);
        assertThat(replica.lock("k")).isNull();
        assertThat(replica.lease(holder).held()).isEmpty();
    }

    @Test
    void queueOrderIsJoinOrderNotLeaseIdOrder() {
        for (long id : new long[] {1, 9, 3, 7}) {
            replica.grantLease(id);
        }
        long token = replica.acquire("k", 1).fencingToken();
        replica.enqueue("k", 9);
        replica.enqueue("k", 3);
        replica.enqueue("k", 7);

        List<Long> grantedInOrder = new ArrayList<>();
        long holder = 1;
        while (replica.lock("k") != null) {
            Applied applied = replica.apply(new LockRelease("k", holder, token));
            List<Granted> woken = grantsToWaiters(applied);
            assertThat(woken).hasSizeLessThanOrEqualTo(1);
            if (woken.isEmpty()) {
                break;
            }
            holder = woken.get(0).leaseId();
            token = woken.get(0).fencingToken();
            grantedInOrder.add(holder);
        }
        assertThat(grantedInOrder).containsExactly(9L, 3L, 7L);
    }

    @Test
    void oneReleaseAmongManyWaitersWakesOnlyTheFirstAndLeavesTheRestInPlace() {
        replica.grantLease(100);
        long token = replica.acquire("k", 100).fencingToken();
        List<Long> queue = new ArrayList<>();
        for (long id = 1; id <= 10; id++) {
            replica.grantLease(id);
            replica.enqueue("k", id);
            queue.add(id);
        }
        List<LockView.Waiter> before = replica.lock("k").waiters();

        Applied applied = replica.apply(new LockRelease("k", 100, token));

        assertThat(grantsToWaiters(applied)).extracting(Granted::leaseId).containsExactly(1L);
        assertThat(replica.lock("k").waiters()).containsExactlyElementsOf(before.subList(1, before.size()));
        for (long id = 2; id <= 10; id++) {
            assertThat(replica.lease(id).waiting()).containsExactly("k");
            assertThat(replica.lease(id).held()).isEmpty();
        }
        assertThat(replica.lease(1).held()).containsExactly("k");
        assertThat(replica.lease(1).waiting()).isEmpty();
    }

    @Test
    void handOffGivesTheWaiterItsOwnMetadataAndBumpsTheVersion() {
        replica.grantLease(1);
        replica.grantLease(2);
        byte[] holderMeta = "holder".getBytes(StandardCharsets.UTF_8);
        byte[] waiterMeta = "waiter".getBytes(StandardCharsets.UTF_8);
        Granted first = expect(replica.run(new LockAcquire("k", 1, holderMeta, false)), Granted.class);
        replica.enqueue("k", 2, waiterMeta);
        LockView held = replica.lock("k");
        assertThat(held.metadata()).isEqualTo(holderMeta);
        assertThat(held.version()).isEqualTo(1);
        assertThat(held.createRevision()).isEqualTo(first.fencingToken());

        Applied applied = replica.apply(new LockRelease("k", 1, first.fencingToken()));

        LockView handed = replica.lock("k");
        assertThat(handed.metadata()).isEqualTo(waiterMeta);
        assertThat(handed.holder()).isEqualTo(Replica.clientOf(2));
        assertThat(handed.version()).isEqualTo(2);
        assertThat(handed.createRevision()).as("still the same lock, created by the first grant").isEqualTo(first.fencingToken());
        WatchEvent put = watched(applied).get(0);
        assertThat(put.type()).isEqualTo(WatchEvent.Type.PUT);
        assertThat(put.kv().metadata()).isEqualTo(waiterMeta);
        assertThat(put.prevKv().metadata()).isEqualTo(holderMeta);
        assertThat(put.prevKv().leaseId()).isEqualTo(1);
    }

    @Test
    void tryLockOnAHeldLockIsBusyAndDoesNotJoinTheQueue() {
        replica.grantLease(1);
        replica.grantLease(2);
        replica.grantLease(3);
        replica.acquire("k", 1);
        replica.enqueue("k", 2);

        Result result = replica.run(new LockAcquire("k", 3, null, false));

        assertThat(result).isEqualTo(new Busy("k", Replica.clientOf(1), 1, 1));
        assertThat(replica.waiters("k")).containsExactly(2L);
        assertThat(replica.lease(3).waiting()).isEmpty();
    }

    @Test
    void acquiringAHeldLockAgainReturnsTheSameTokenWithAgainSet() {
        replica.grantLease(1);
        Granted first = replica.acquire("k", 1);
        assertThat(first.again()).isFalse();

        Applied tryAgain = replica.apply(new LockAcquire("k", 1, null, false));
        Applied queueAgain = replica.apply(new LockAcquire("k", 1, null, true));

        for (Applied again : List.of(tryAgain, queueAgain)) {
            assertThat(again.result()).isEqualTo(new Granted("k", 1, first.fencingToken(), true));
            assertThat(again.effects()).as("a re-grant is no change: no watch event, nobody woken").isEmpty();
        }
        assertThat(replica.lock("k").version()).isEqualTo(1);
        assertThat(replica.lock("k").waiters()).as("the holder never queues behind itself").isEmpty();
        assertThat(replica.lease(1).waiting()).isEmpty();
    }

    @Test
    void oneReleaseFreesAReacquiredLockBecauseThereIsNoHoldCount() {
        replica.grantLease(1);
        replica.grantLease(2);
        long token = replica.acquire("k", 1).fencingToken();
        replica.acquire("k", 1);
        replica.acquire("k", 1);

        assertThat(replica.release("k", 1, token).nextFencingToken()).isZero();

        assertThat(replica.lock("k")).isNull();
        assertThat(replica.lease(1).held()).isEmpty();
        Granted other = replica.acquire("k", 2);
        assertThat(other.again()).isFalse();
        assertThat(other.fencingToken()).isGreaterThan(token);
    }
}
