package io.tenure.core;

import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.LeaseExpire;
import io.tenure.core.kernel.LeaseResult;
import io.tenure.core.lock.LockRelease;
import io.tenure.core.lock.LockView;
import io.tenure.core.kernel.ReadBarrier;
import io.tenure.core.kernel.Result;
import io.tenure.core.kernel.LeaseRevoke;
import io.tenure.core.lock.LockAcquire;
import io.tenure.core.lock.LockResult.Granted;
import io.tenure.core.kernel.LeaseResult.LeaseEnded;
import io.tenure.core.watch.WatchEvent;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static io.tenure.core.Replica.effects;
import static io.tenure.core.Replica.grantsToWaiters;
import static io.tenure.core.Replica.expect;
import static io.tenure.core.Replica.watched;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Fencing tokens (I2): the stamp of the granting command, strictly increasing per key through
 * every way a lock changes hands, unique across keys; watch revisions are the same numbers.
 */
class FencingTokenTest {
    private final Replica replica = new Replica();

    @Test
    void freshGrantTokenIsTheLogPositionOfTheAcquire() {
        replica.grantLease(1);
        long position = replica.nextPosition();

        Granted granted = replica.acquire("k", 1);

        assertThat(granted.fencingToken()).isEqualTo(position);
        assertThat(replica.lock("k").fencingToken()).isEqualTo(position);
        assertThat(replica.lock("k").createRevision()).isEqualTo(position);
    }

    @Test
    void aReadBarrierChangesNoHolderWaiterOrLeaseAndTokensGoOnIncreasing() {
        replica.grantLease(1);
        replica.grantLease(2);
        long first = replica.acquire("k", 1).fencingToken();
        replica.enqueue("k", 2);
        long renewedAt = replica.lease(1).renewedAt();
        long revision = replica.state.revision();

        Applied barrier = replica.apply(new ReadBarrier());

        expect(barrier.result(), Result.Skipped.class);
        assertThat(barrier.effects()).isEmpty();
        assertThat(replica.lock("k").leaseId()).isEqualTo(1);
        assertThat(replica.lock("k").fencingToken()).isEqualTo(first);
        assertThat(replica.lock("k").waiters()).extracting(LockView.Waiter::leaseId).containsExactly(2L);
        assertThat(replica.lease(1).renewedAt()).as("a barrier renews nothing").isEqualTo(renewedAt);
        assertThat(replica.state.revision()).as("a read does not move the revision").isEqualTo(revision);
        assertThat(replica.release("k", 1, first).nextFencingToken()).isGreaterThan(first);
    }

    @Test
    void tokensStrictlyIncreaseThroughReleaseExpiryRevokeAndANewGrant() {
        for (long id = 1; id <= 5; id++) {
            replica.grantLease(id);
        }
        List<Long> tokens = new ArrayList<>();
        tokens.add(replica.acquire("k", 1).fencingToken());
        replica.enqueue("k", 2);
        replica.enqueue("k", 3);
        replica.enqueue("k", 4);

        long position = replica.nextPosition();
        long viaRelease = replica.release("k", 1, tokens.get(0)).nextFencingToken();
        assertThat(viaRelease).as("hand-off by release is stamped with the release's position").isEqualTo(position);
        tokens.add(viaRelease);

        Applied expiry = replica.apply(new LeaseExpire(2, replica.lease(2).renewedAt()));
        expect(expiry.result(), LeaseEnded.class);
        tokens.add(singleGrant(expiry, "k", 3));

        Applied revoke = replica.apply(new LeaseRevoke(3));
        tokens.add(singleGrant(revoke, "k", 4));

        replica.release("k", 4, tokens.get(tokens.size() - 1));
        assertThat(replica.lock("k")).isNull();
        tokens.add(replica.acquire("k", 5).fencingToken());

        assertThat(tokens).hasSize(5).isSorted().doesNotHaveDuplicates();
    }

    @Test
    void aLeaseEndingWithSeveralLocksHandsEachOverWithItsOwnIncreasingToken() {
        replica.grantLease(1);
        replica.grantLease(2);
        replica.grantLease(3);
        for (String key : List.of("c", "a", "b")) {
            replica.acquire(key, 1);
            replica.enqueue(key, 2);
        }
        long position = replica.nextPosition();

        Applied revoke = replica.apply(new LeaseRevoke(1));
        // Another command in the same log entry, at the very next position: the stamps must not collide.
        Granted next = expect(replica.applyInSameEntry(new LockAcquire("d", 3, null, false)).result(), Granted.class);

        assertThat(revoke.result()).isEqualTo(new LeaseEnded(1, LeaseResult.EndReason.REVOKED, List.of("a", "b", "c")));
        List<Granted> woken = grantsToWaiters(revoke);
        assertThat(woken).extracting(Granted::key).containsExactly("a", "b", "c");
        assertThat(woken).extracting(Granted::leaseId).containsOnly(2L);
        assertThat(woken).extracting(Granted::fencingToken).containsExactly(position, position + 1, position + 2);
        assertThat(next.fencingToken()).as("stamp after the hand-offs, not the position p+1 taken by one").isEqualTo(position + 3);
        for (Granted w : woken) {
            assertThat(replica.lock(w.key()).fencingToken()).isEqualTo(w.fencingToken());
        }
        assertThat(replica.lease(2).held()).containsExactly("a", "b", "c");
    }

    @Test
    void expiriesInConsecutiveSlotsOfOneEntryNeverReuseAStamp() {
        for (long id = 1; id <= 4; id++) {
            replica.grantLease(id);
        }
        replica.acquire("a", 1);
        replica.acquire("b", 1);
        replica.acquire("c", 2);
        replica.enqueue("a", 3);
        replica.enqueue("b", 3);
        replica.enqueue("c", 4);
        long position = replica.nextPosition();

        Applied first = replica.apply(new LeaseExpire(1, replica.lease(1).renewedAt()));
        Applied second = replica.applyInSameEntry(new LeaseExpire(2, replica.lease(2).renewedAt()));

        List<Long> tokens = new ArrayList<>();
        grantsToWaiters(first).forEach(w -> tokens.add(w.fencingToken()));
        grantsToWaiters(second).forEach(w -> tokens.add(w.fencingToken()));
        assertThat(tokens).containsExactly(position, position + 1, position + 2);
        assertThat(replica.state.revision()).isEqualTo(position + 2);
    }

    @Test
    void tokensAreUniqueAcrossKeysAndWatchRevisionsStrictlyIncrease() {
        List<Long> grants = new ArrayList<>();
        List<WatchEvent> events = new ArrayList<>();
        List<Applied> log = new ArrayList<>();
        for (long id = 1; id <= 6; id++) {
            replica.grantLease(id);
        }
        String[] keys = {"x", "y", "z"};
        // All in one log entry, so positions are consecutive: every lease asks for every key, then
        // one lease ends (handing three keys over) and a lease takes a free key at the next slot.
        log.add(replica.apply(Replica.HARMLESS));
        for (int round = 0; round < 5; round++) {
            for (long id = 1; id <= 6; id++) {
                if (replica.lease(id) == null) {
                    continue;
                }
                for (String key : keys) {
                    log.add(replica.applyInSameEntry(new LockAcquire(key, id, null, true)));
                }
            }
            log.add(replica.applyInSameEntry(new LeaseRevoke(round + 1)));
            log.add(replica.applyInSameEntry(new LockAcquire("fresh-" + round, 6, null, false)));
        }
        for (Applied applied : log) {
            if (applied.result() instanceof Granted g && !g.again()) {
                grants.add(g.fencingToken());
            }
            grantsToWaiters(applied).forEach(w -> grants.add(w.fencingToken()));
            events.addAll(watched(applied));
        }

        assertThat(grants).hasSize(3 + 5 * 3 + 5).doesNotHaveDuplicates().isSorted();
        assertThat(events).extracting(WatchEvent::revision).isSorted().doesNotHaveDuplicates();
        Set<Long> putRevisions = new HashSet<>();
        for (WatchEvent e : events) {
            if (e.type() == WatchEvent.Type.PUT) {
                assertThat(e.kv().modRevision()).isEqualTo(e.revision());
                putRevisions.add(e.revision());
            }
        }
        assertThat(putRevisions).as("one PUT per grant, its revision the grant's token").containsExactlyInAnyOrderElementsOf(grants);
    }

    @Test
    void putRevisionEqualsTheGrantTokenAndDeleteFollowsTheRelease() {
        replica.grantLease(1);
        replica.grantLease(2);
        Applied acquire = replica.apply(new LockAcquire("k", 1, null, false));
        long t1 = expect(acquire.result(), Granted.class).fencingToken();
        WatchEvent put = watched(acquire).get(0);
        assertThat(put.type()).isEqualTo(WatchEvent.Type.PUT);
        assertThat(put.revision()).isEqualTo(t1);
        assertThat(put.prevKv()).isNull();
        assertThat(put.kv().leaseId()).isEqualTo(1);
        assertThat(put.kv().holder()).isEqualTo(Replica.clientOf(1));

        replica.enqueue("k", 2);
        Applied release = replica.apply(new LockRelease("k", 1, t1));
        long t2 = grantsToWaiters(release).get(0).fencingToken();
        WatchEvent handOff = watched(release).get(0);
        assertThat(handOff.revision()).isEqualTo(t2);
        assertThat(handOff.kv().leaseId()).isEqualTo(2);
        assertThat(handOff.prevKv().modRevision()).isEqualTo(t1);

        long position = replica.nextPosition();
        Applied free = replica.apply(new LockRelease("k", 2, t2));
        WatchEvent delete = watched(free).get(0);
        assertThat(delete.type()).isEqualTo(WatchEvent.Type.DELETE);
        assertThat(delete.revision()).isEqualTo(position).isGreaterThan(t2);
        assertThat(delete.kv().modRevision()).isEqualTo(position);
        assertThat(delete.prevKv().leaseId()).isEqualTo(2);
    }

    private static long singleGrant(Applied applied, String key, long leaseId) {
        List<Granted> woken = grantsToWaiters(applied);
        assertThat(woken).hasSize(1);
        assertThat(woken.get(0).key()).isEqualTo(key);
        assertThat(woken.get(0).leaseId()).isEqualTo(leaseId);
        return woken.get(0).fencingToken();
    }
}
