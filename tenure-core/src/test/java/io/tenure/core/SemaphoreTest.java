package io.tenure.core;

import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.Effect;
import io.tenure.core.kernel.IdleForget;
import io.tenure.core.kernel.IdleName;
import io.tenure.core.kernel.Result;
import io.tenure.core.kernel.Result.Code;
import io.tenure.core.kernel.Result.Rejected;
import io.tenure.core.lock.LockAcquire;
import io.tenure.core.semaphore.SemaphoreAcquire;
import io.tenure.core.semaphore.SemaphoreCancel;
import io.tenure.core.semaphore.SemaphoreRelease;
import io.tenure.core.semaphore.SemaphoreResult.Busy;
import io.tenure.core.semaphore.SemaphoreResult.Granted;
import io.tenure.core.semaphore.SemaphoreResult.Queued;
import io.tenure.core.semaphore.SemaphoreResult.Released;
import io.tenure.core.semaphore.SemaphoreTable;
import io.tenure.core.semaphore.SemaphoreView;
import io.tenure.core.watch.WatchEvent;
import org.junit.jupiter.api.Test;

import java.util.List;

import static io.tenure.core.Replica.expect;
import static org.assertj.core.api.Assertions.assertThat;

/** The semaphore's rules, one scenario each; {@link SemaphoreModelTest} explores their combinations. */
class SemaphoreTest {
    private final Replica replica = new Replica();

    private Granted acquire(String name, long lease, int limit, int permits) {
        return expect(replica.run(new SemaphoreAcquire(name, lease, limit, permits, true, 0)), Granted.class);
    }

    private Queued enqueue(String name, long lease, int limit, int permits) {
        return expect(replica.run(new SemaphoreAcquire(name, lease, limit, permits, true, 0)), Queued.class);
    }

    private SemaphoreTable table() {
        return replica.state.primitive(SemaphoreTable.class);
    }

    private SemaphoreView view(String name) {
        return replica.state.primitive(SemaphoreTable.class).semaphore(name);
    }

    @Test
    void aHeadWaiterThatNeedsThreePermitsIsNotPassedByALaterOneThatNeedsOne() {
        for (long id = 1; id <= 4; id++) {
            replica.grantLease(id);
        }
        Granted first = acquire("pool", 1, 4, 2);
        enqueue("pool", 2, 4, 3);
        Queued small = enqueue("pool", 3, 4, 1);
        Busy tried = expect(replica.run(new SemaphoreAcquire("pool", 4, 4, 1, false, 0)), Busy.class);

        assertThat(small.ahead()).isEqualTo(1);
        assertThat(small.available()).as("two permits are free, and still the small request waits").isEqualTo(2);
        assertThat(tried.available()).isEqualTo(2);
        assertThat(tried.waiters()).isEqualTo(2);

        Applied release = replica.apply(new SemaphoreRelease("pool", 1, first.fencingToken()));

        assertThat(expect(release.result(), Released.class).handedTo()).isEqualTo(2);
        List<Granted> woken = Replica.effects(release, Effect.Wake.class).stream().map(w -> (Granted) w.result()).toList();
        assertThat(woken).extracting(Granted::leaseId).containsExactly(2L, 3L);
        assertThat(woken.get(1).fencingToken()).as("each grant its own token").isGreaterThan(woken.get(0).fencingToken())
                .isGreaterThan(first.fencingToken());
        assertThat(view("pool").available()).isZero();
    }

    @Test
    void theLimitIsFixedWhileTheSemaphoreExistsIdleIncludedAndFreeOnceItIsForgotten() {
        replica.grantLease(1);
        replica.grantLease(2);
        Granted held = acquire("pool", 1, 3, 1);

        Rejected mismatch = expect(replica.run(new SemaphoreAcquire("pool", 2, 5, 1, true, 0)), Rejected.class);
        Rejected otherPermits = expect(replica.run(new SemaphoreAcquire("pool", 1, 3, 2, true, 0)), Rejected.class);

        assertThat(mismatch.code()).isEqualTo(Code.FAILED_PRECONDITION);
        assertThat(mismatch.message()).contains("limit 3", "not 5");
        assertThat(otherPermits.message()).contains("holds 1 permits", "not 2");
        replica.run(new SemaphoreRelease("pool", 1, held.fencingToken()));
        long idleSince = table().idleSince("pool");
        assertThat(idleSince).as("idle once nobody holds or waits").isPositive();
        assertThat(view("pool").limit()).as("an idle semaphore keeps its limit").isEqualTo(3);
        assertThat(view("pool").holders()).isEmpty();
        assertThat(expect(replica.run(new SemaphoreAcquire("pool", 2, 5, 1, true, 0)), Rejected.class).message())
                .contains("limit 3", "not 5");

        // Used again, it is no longer idle since then: the leader's forget of that position passes it by.
        Granted again = acquire("pool", 2, 3, 1);
        assertThat(table().idleSince("pool")).isZero();
        replica.run(new SemaphoreRelease("pool", 2, again.fencingToken()));
        Result.Forgotten stale = expect(replica.run(new IdleForget(List.of(new IdleName("semaphore", "pool", idleSince)))),
                Result.Forgotten.class);
        assertThat(stale.forgotten()).isZero();
        assertThat(stale.stayed()).isOne();
        assertThat(view("pool")).isNotNull();

        Result.Forgotten forgotten = expect(replica.run(new IdleForget(List.of(
                new IdleName("semaphore", "pool", table().idleSince("pool"))))), Result.Forgotten.class);
        assertThat(forgotten.forgotten()).isOne();
        assertThat(view("pool")).as("gone once forgotten").isNull();
        assertThat(acquire("pool", 2, 5, 5).permits()).isEqualTo(5);
    }

    @Test
    void badLimitsAndPermitsAreRefusedNamingTheField() {
        replica.grantLease(1);
        assertThat(refusal(new SemaphoreAcquire("pool", 1, 0, 1, true, 0))).contains("limit must be between 1 and");
        assertThat(refusal(new SemaphoreAcquire("pool", 1, 2, 0, true, 0))).contains("permits must be at least 1");
        assertThat(refusal(new SemaphoreAcquire("pool", 1, 2, 3, true, 0))).contains("permits must not exceed the limit");
        assertThat(refusal(new SemaphoreAcquire("", 1, 2, 1, true, 0))).contains("name must not be empty");
        assertThat(view("pool")).isNull();
    }

    private String refusal(SemaphoreAcquire acquire) {
        Rejected rejected = expect(replica.run(acquire), Rejected.class);
        assertThat(rejected.code()).isEqualTo(Code.INVALID_ARGUMENT);
        return rejected.message();
    }

    @Test
    void aNameIsOneKindWhileItIsHeldOrWaitedFor() {
        replica.grantLease(1);
        replica.grantLease(2);
        Granted permit = acquire("jobs/a", 1, 2, 1);
        long lockToken = replica.acquire("jobs/b", 1).fencingToken();

        Rejected lockOnSemaphore = expect(replica.run(new LockAcquire("jobs/a", 2, null, true)), Rejected.class);
        Rejected semaphoreOnLock = expect(replica.run(new SemaphoreAcquire("jobs/b", 2, 2, 1, true, 0)), Rejected.class);

        assertThat(lockOnSemaphore.code()).isEqualTo(Code.FAILED_PRECONDITION);
        assertThat(lockOnSemaphore.message()).contains("'jobs/a' is a semaphore, not a lock");
        assertThat(semaphoreOnLock.message()).contains("'jobs/b' is a lock, not a semaphore");
        replica.run(new SemaphoreRelease("jobs/a", 1, permit.fencingToken()));
        replica.release("jobs/b", 1, lockToken);
        assertThat(expect(replica.run(new LockAcquire("jobs/a", 2, null, true)), Rejected.class).message())
                .as("an idle semaphore's name stays a semaphore's").contains("'jobs/a' is a semaphore, not a lock", "idle since");
        // Restored from a snapshot, the idle semaphore is idle still, since the same position.
        assertThat(Replica.restore(replica.snapshot()).state.primitive(SemaphoreTable.class).idleSince("jobs/a"))
                .isEqualTo(table().idleSince("jobs/a"));
        replica.run(new IdleForget(List.of(new IdleName("semaphore", "jobs/a", table().idleSince("jobs/a")))));
        assertThat(replica.run(new LockAcquire("jobs/a", 2, null, true))).isInstanceOf(io.tenure.core.lock.LockResult.Granted.class);
        assertThat(replica.run(new SemaphoreAcquire("jobs/b", 2, 2, 1, true, 0))).isInstanceOf(Granted.class);
        // The namespace is rebuilt from a snapshot.
        Replica restored = Replica.restore(replica.snapshot());
        assertThat(restored.run(new SemaphoreAcquire("jobs/a", 1, 2, 1, true, 0))).isInstanceOf(Rejected.class);
        assertThat(restored.run(new LockAcquire("jobs/b", 1, null, true))).isInstanceOf(Rejected.class);
    }

    @Test
    void theReadOnlyChecksSayWhatAReleaseOrAnAcquireWouldRefuse() {
        replica.grantLease(1);
        replica.grantLease(2);
        Granted held = acquire("pool", 1, 3, 2);
        replica.acquire("jobs/lock", 2);
        SemaphoreTable table = replica.state.primitive(SemaphoreTable.class);
        SemaphoreView before = view("pool");

        SemaphoreTable.Refusal staleToken = table.notHeld("pool", 1, held.fencingToken() + 1);
        SemaphoreTable.Refusal noGrant = table.notHeld("pool", 2, held.fencingToken());
        SemaphoreTable.Refusal otherLimit = table.conflict("pool", 5);
        SemaphoreTable.Refusal aLock = table.conflict("jobs/lock", 3);

        assertThat(table.notHeld("pool", 1, held.fencingToken())).isNull();
        assertThat(table.permitsHeld("pool", 1)).isEqualTo(2);
        assertThat(table.permitsHeld("pool", 2)).isZero();
        assertThat(table.conflict("pool", 3)).isNull();
        assertThat(table.conflict("free", 7)).isNull();
        assertThat(staleToken.field()).isEqualTo("fencing_token");
        assertThat(noGrant.field()).isEqualTo("lease_id");
        assertThat(otherLimit.field()).isEqualTo("limit");
        assertThat(aLock.field()).isEqualTo("name");
        assertThat(aLock.message()).contains("'jobs/lock' is a lock, not a semaphore");
        assertThat(view("pool")).as("the checks change nothing").isEqualTo(before);
        // The same messages as the commands they foresee.
        assertThat(staleToken.message()).isEqualTo(refused(new SemaphoreRelease("pool", 1, held.fencingToken() + 1)));
        assertThat(noGrant.message()).isEqualTo(refused(new SemaphoreRelease("pool", 2, held.fencingToken())));
        assertThat(otherLimit.message()).isEqualTo(refused(new SemaphoreAcquire("pool", 2, 5, 1, true, 0)));
        assertThat(aLock.message()).isEqualTo(refused(new SemaphoreAcquire("jobs/lock", 1, 3, 1, true, 0)));
        assertThat(view("pool")).isEqualTo(before);
    }

    private String refused(io.tenure.core.kernel.Command command) {
        Rejected rejected = expect(replica.run(command), Rejected.class);
        assertThat(rejected.code()).isEqualTo(Code.FAILED_PRECONDITION);
        return rejected.message();
    }

    @Test
    void aLeaseThatEndsReturnsItsPermitsAndLeavesTheQueue() {
        for (long id = 1; id <= 3; id++) {
            replica.grantLease(id);
        }
        acquire("pool", 1, 2, 2);
        enqueue("pool", 2, 2, 1);
        enqueue("pool", 3, 2, 2);

        Applied ended = replica.apply(new io.tenure.core.kernel.LeaseRevoke(1));

        List<Long> woken = Replica.effects(ended, Effect.Wake.class).stream().map(w -> w.key().leaseId()).toList();
        assertThat(woken).as("lease 2 is granted one permit; lease 3 needs two and waits").containsExactly(2L);
        assertThat(view("pool").holders()).extracting(SemaphoreView.Holder::leaseId).containsExactly(2L);
        Applied second = replica.apply(new io.tenure.core.kernel.LeaseRevoke(2));
        assertThat(Replica.effects(second, Effect.Wake.class)).extracting(w -> w.key().leaseId()).containsExactly(3L);
        Applied last = replica.apply(new io.tenure.core.kernel.LeaseRevoke(3));
        assertThat(view("pool").holders()).isEmpty();
        assertThat(view("pool").waiters()).isEmpty();
        assertThat(table().idleSince("pool")).as("idle since the lease's end").isPositive();
        assertThat(Replica.watched(last)).extracting(WatchEvent::type).as("watchers see the semaphore go").containsExactly(WatchEvent.Type.DELETE);
    }

    @Test
    void aLateCopyOfAnEndedAcquireIsRefusedAndAWithdrawalLetsSmallerWaitersIn() {
        for (long id = 1; id <= 3; id++) {
            replica.grantLease(id);
        }
        Granted first = expect(replica.run(new SemaphoreAcquire("pool", 1, 3, 2, true, 77)), Granted.class);
        expect(replica.run(new SemaphoreAcquire("pool", 2, 3, 3, true, 78)), Queued.class);
        enqueue("pool", 3, 3, 1);

        Applied withdrawn = replica.apply(new SemaphoreCancel("pool", 2, 78));
        assertThat(Replica.effects(withdrawn, Effect.Wake.class)).extracting(w -> w.key().leaseId())
                .as("lease 2's call hears 'not acquired'; lease 3, behind it, now fits").containsExactly(2L, 3L);
        replica.run(new SemaphoreRelease("pool", 1, first.fencingToken()));

        Result late = replica.run(new SemaphoreAcquire("pool", 1, 3, 2, true, 77));
        Result lateWaiter = replica.run(new SemaphoreAcquire("pool", 2, 3, 3, true, 78));

        assertThat(((Rejected) late).message()).contains("acquire request 77", "already ended");
        assertThat(lateWaiter).isInstanceOf(Rejected.class);
        assertThat(view("pool").holders()).extracting(SemaphoreView.Holder::leaseId).containsExactly(3L);
        assertThat(view("pool").waiters()).isEmpty();
    }
}
