package io.tenure.core;

import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.Result;
import io.tenure.core.kernel.Result.Code;
import io.tenure.core.kernel.Result.Rejected;
import io.tenure.core.lock.LockAcquire;
import io.tenure.core.lock.LockCancel;
import io.tenure.core.lock.LockResult.Cancelled;
import io.tenure.core.lock.LockResult.Granted;
import io.tenure.core.lock.LockResult.Queued;
import io.tenure.core.lock.LockTable;
import org.junit.jupiter.api.Test;

import java.util.function.Consumer;

import static io.tenure.core.Replica.expect;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A client's acquire can be applied twice: it failed over to another member while its first
 * copy was still on its way (a follower forwarding it to the leader, again after a timeout).
 * While the acquire is open, a copy finds its grant or its place. Once it ended (its grant
 * released, its wait withdrawn) a copy naming the same request is refused: applied, it would queue
 * the lease again, or grant it the lock, for a caller that stopped waiting, which then holds a
 * lock it never asked for again until its lease ends.
 */
class LateAcquireTest {
    private static final long REQUEST = 0xF00DL;
    private final Replica replica = new Replica();

    @Test
    void aLateCopyOfAnAcquireWhoseGrantWasReleasedIsRefusedAndChangesNothing() {
        Consumer<Replica> setup = r -> {
            r.grantLease(1);
            r.grantLease(2);
            Granted first = expect(r.run(new LockAcquire("k", 1, null, true, REQUEST)), Granted.class);
            r.enqueue("k", 2);
            long handedTo = r.release("k", 1, first.fencingToken()).nextFencingToken();
            r.release("k", 2, handedTo);
        };
        Replica late = Replica.with(setup);
        Replica untouched = Replica.with(setup);

        Applied copy = late.apply(new LockAcquire("k", 1, null, true, REQUEST));
        untouched.apply(Replica.HARMLESS);

        Rejected refused = expect(copy.result(), Rejected.class);
        assertThat(refused.code()).isEqualTo(Code.FAILED_PRECONDITION);
        assertThat(refused.message()).contains("acquire request " + REQUEST, "lease 1", "lock 'k'", "already ended");
        assertThat(copy.effects()).isEmpty();
        assertThat(late.lock("k")).as("the lock stays free").isNull();
        assertThat(late.snapshot()).isEqualTo(untouched.snapshot());
        assertThat(late.view()).isEqualTo(untouched.view());
    }

    @Test
    void aLateCopyDoesNotQueueTheLeaseAgainBehindAnotherHolder() {
        replica.grantLease(1);
        replica.grantLease(2);
        Granted first = expect(replica.run(new LockAcquire("k", 1, null, true, REQUEST)), Granted.class);
        replica.enqueue("k", 2);
        replica.release("k", 1, first.fencingToken());

        Result late = replica.run(new LockAcquire("k", 1, null, true, REQUEST));

        assertThat(late).isInstanceOf(Rejected.class);
        assertThat(replica.lock("k").leaseId()).isEqualTo(2);
        assertThat(replica.waiters("k")).as("lease 1 is not queued again").isEmpty();
        assertThat(replica.lease(1).waiting()).isEmpty();
    }

    @Test
    void aCopyOfAnAcquireWhoseWaitWasWithdrawnIsRefusedEvenWhenTheWithdrawalCameFirst() {
        replica.grantLease(1);
        replica.grantLease(2);
        long token = replica.acquire("k", 1).fencingToken();
        expect(replica.run(new LockAcquire("k", 2, null, true, REQUEST)), Queued.class);

        expect(replica.run(new LockCancel("k", 2, REQUEST)), Cancelled.class);
        Result copy = replica.run(new LockAcquire("k", 2, null, true, REQUEST));
        // The withdrawal of another acquire, applied before that acquire itself.
        expect(replica.run(new LockCancel("k", 2, REQUEST + 1)), Cancelled.class);
        Result early = replica.run(new LockAcquire("k", 2, null, true, REQUEST + 1));

        assertThat(copy).isInstanceOf(Rejected.class);
        assertThat(early).isInstanceOf(Rejected.class);
        assertThat(replica.waiters("k")).isEmpty();
        assertThat(replica.release("k", 1, token).nextFencingToken()).as("nobody was queued to hand the lock to").isZero();
        assertThat(replica.lock("k")).isNull();
    }

    @Test
    void aWithdrawalThatNamesNoRequestStillEndsTheRequestOfTheWaitItWithdraws() {
        replica.grantLease(1);
        replica.grantLease(2);
        replica.acquire("k", 1);
        expect(replica.run(new LockAcquire("k", 2, null, true, REQUEST)), Queued.class);

        replica.cancel("k", 2);

        assertThat(replica.run(new LockAcquire("k", 2, null, true, REQUEST))).isInstanceOf(Rejected.class);
    }

    @Test
    void whileTheAcquireIsOpenItsCopiesFindItsGrantOrItsPlace() {
        replica.grantLease(1);
        replica.grantLease(2);
        Granted granted = expect(replica.run(new LockAcquire("k", 1, null, true, REQUEST)), Granted.class);
        Queued queued = expect(replica.run(new LockAcquire("k", 2, null, true, REQUEST + 1)), Queued.class);

        Granted again = expect(replica.run(new LockAcquire("k", 1, null, true, REQUEST)), Granted.class);
        Queued samePlace = expect(replica.run(new LockAcquire("k", 2, null, true, REQUEST + 1)), Queued.class);

        assertThat(again.fencingToken()).isEqualTo(granted.fencingToken());
        assertThat(again.again()).isTrue();
        assertThat(samePlace).isEqualTo(queued);
        // The queued acquire ends only when its grant is released: a copy while it holds finds the grant.
        long token = replica.release("k", 1, granted.fencingToken()).nextFencingToken();
        Granted handedOver = expect(replica.run(new LockAcquire("k", 2, null, true, REQUEST + 1)), Granted.class);
        assertThat(handedOver.fencingToken()).isEqualTo(token);
    }

    @Test
    void aNewAcquireOfTheSameLeaseAfterTheReleaseIsGranted() {
        replica.grantLease(1);
        Granted first = expect(replica.run(new LockAcquire("k", 1, null, true, REQUEST)), Granted.class);
        replica.release("k", 1, first.fencingToken());

        Granted second = expect(replica.run(new LockAcquire("k", 1, null, true, REQUEST + 1)), Granted.class);
        Granted unnamed = expect(replica.run(new LockAcquire("k", 1, null, true)), Granted.class);

        assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
        assertThat(unnamed.fencingToken()).as("an acquire naming no request is idempotent per lease, as before")
                .isEqualTo(second.fencingToken());
    }

    @Test
    void theEndedRequestsAreKeptInSnapshotsSoARestoredMemberRefusesTheSameCopies() {
        replica.grantLease(1);
        replica.grantLease(2);
        Granted first = expect(replica.run(new LockAcquire("k", 1, null, true, REQUEST)), Granted.class);
        expect(replica.run(new LockAcquire("k", 2, new byte[] {7}, true, REQUEST + 1)), Queued.class);
        replica.release("k", 1, first.fencingToken());
        byte[] snapshot = replica.snapshot();
        Replica restored = Replica.restore(snapshot);

        assertThat(restored.snapshot()).isEqualTo(snapshot);
        assertThat(restored.state.primitive(LockTable.class).endedAcquireCount()).isEqualTo(1);
        assertThat(restored.run(new LockAcquire("k", 1, null, true, REQUEST))).isInstanceOf(Rejected.class);
        // Lease 2's grant came from its queued acquire: releasing it ends that request too.
        long token = restored.lock("k").fencingToken();
        restored.release("k", 2, token);
        assertThat(restored.run(new LockAcquire("k", 2, null, true, REQUEST + 1))).isInstanceOf(Rejected.class);
    }

    @Test
    void theOldestEndedRequestsAreForgottenFirst() {
        replica.grantLease(1);
        for (long request = 1; request <= LockTable.ENDED_ACQUIRES + 1; request++) {
            replica.run(new LockCancel("k", 1, request));
        }

        assertThat(replica.state.primitive(LockTable.class).endedAcquireCount()).isEqualTo(LockTable.ENDED_ACQUIRES);
        assertThat(replica.run(new LockAcquire("k", 1, null, true, 2))).isInstanceOf(Rejected.class);
        assertThat(replica.run(new LockAcquire("k", 1, null, true, 1))).as("forgotten").isInstanceOf(Granted.class);
    }
}
