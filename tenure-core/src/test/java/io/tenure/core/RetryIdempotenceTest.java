package io.tenure.core;

import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.LeaseView;
import io.tenure.core.kernel.Result;
import io.tenure.core.kernel.LeaseGrant;
import io.tenure.core.lock.LockAcquire;
import io.tenure.core.lock.LockRelease;
import io.tenure.core.kernel.Result.Code;
import io.tenure.core.kernel.LeaseResult.LeaseGranted;
import io.tenure.core.lock.LockResult.Queued;
import io.tenure.core.kernel.Result.Rejected;
import io.tenure.core.lock.LockResult.Released;
import org.junit.jupiter.api.Test;

import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A client (or a member forwarding for it) may submit a command twice: the retry must find
 * the outcome of the first one inside the replicated state, not do the work again.
 */
class RetryIdempotenceTest {
    private final Replica replica = new Replica();

    @Test
    void acquiringAgainWhileQueuedKeepsThePlaceInTheQueue() {
        for (long id = 1; id <= 3; id++) {
            replica.grantLease(id);
        }
        long token = replica.acquire("k", 1).fencingToken();
        Queued first = replica.enqueue("k", 2);
        replica.enqueue("k", 3);

        Result queuedRetry = replica.run(new LockAcquire("k", 2, null, true));
        Result tryRetry = replica.run(new LockAcquire("k", 2, null, false));
        Result behindRetry = replica.run(new LockAcquire("k", 3, null, true));

        assertThat(queuedRetry).isEqualTo(first);
        assertThat(tryRetry).as("a try-lock retry of a queued lease reports its place, not Busy").isEqualTo(first);
        assertThat(((Queued) behindRetry).ahead()).isEqualTo(1);
        assertThat(replica.waiters("k")).containsExactly(2L, 3L);
        assertThat(replica.lock("k").waiters().get(0).joinedAt()).isEqualTo(first.joinedAt());
        assertThat(replica.lease(2).waiting()).containsExactly("k");

        long second = replica.release("k", 1, token).nextFencingToken();
        assertThat(replica.lock("k").leaseId()).isEqualTo(2);
        replica.release("k", 2, second);
        assertThat(replica.lock("k").leaseId()).isEqualTo(3);
        assertThat(replica.lock("k").waiters()).as("no second queue entry for lease 2").isEmpty();
    }

    @Test
    void retriedReleaseAfterAHandOffReturnsTheSameReleasedAndChangesNothing() {
        Consumer<Replica> setup = r -> {
            r.grantLease(1);
            r.grantLease(2);
            long token = r.acquire("k", 1).fencingToken();
            r.enqueue("k", 2);
            r.release("k", 1, token);
        };
        Replica retried = Replica.with(setup);
        Replica untouched = Replica.with(setup);
        long token = Replica.position(3, 0); // lease 1's acquire, the third command of the setup
        long handedTo = retried.lock("k").fencingToken();

        Applied retry = retried.apply(new LockRelease("k", 1, token));
        untouched.apply(Replica.HARMLESS);

        assertThat(retry.result()).isEqualTo(new Released("k", handedTo));
        assertThat(retry.effects()).as("nobody is woken twice").isEmpty();
        assertThat(retried.snapshot()).isEqualTo(untouched.snapshot());
        assertThat(retried.view()).isEqualTo(untouched.view());
    }

    @Test
    void retriedReleaseOfALockThatBecameFreeReturnsReleasedWithNoSuccessor() {
        replica.grantLease(1);
        long token = replica.acquire("k", 1).fencingToken();
        replica.release("k", 1, token);

        assertThat(replica.run(new LockRelease("k", 1, token))).isEqualTo(new Released("k", 0));
        assertThat(replica.lock("k")).isNull();
    }

    @Test
    void retriedReleaseAfterTheLeaseTookTheLockAgainDoesNotReleaseTheNewHold() {
        replica.grantLease(1);
        long old = replica.acquire("k", 1).fencingToken();
        replica.release("k", 1, old);
        long current = replica.acquire("k", 1).fencingToken();

        assertThat(replica.run(new LockRelease("k", 1, old))).isEqualTo(new Released("k", 0));
        assertThat(replica.lock("k").fencingToken()).isEqualTo(current);
        assertThat(replica.lease(1).held()).containsExactly("k");
    }

    @Test
    void aRecordedReleaseDoesNotExcuseAnotherLeaseOrKeyUsingTheSameToken() {
        replica.grantLease(1);
        replica.grantLease(2);
        long token = replica.acquire("k", 1).fencingToken();
        replica.release("k", 1, token);
        replica.acquire("other", 1);

        Result otherLease = replica.run(new LockRelease("k", 2, token));
        Result otherKey = replica.run(new LockRelease("other", 1, token));

        assertThat(otherLease).isInstanceOf(Rejected.class);
        assertThat(((Rejected) otherLease).code()).isEqualTo(Code.FAILED_PRECONDITION);
        assertThat(otherKey).isInstanceOf(Rejected.class);
        assertThat(((Rejected) otherKey).code()).isEqualTo(Code.FAILED_PRECONDITION);
        assertThat(replica.lock("other").leaseId()).isEqualTo(1);
    }

    @Test
    void retriedReleaseStillSucceedsAfterTheLeaseEnded() {
        replica.grantLease(1);
        long token = replica.acquire("k", 1).fencingToken();
        replica.release("k", 1, token);
        replica.revoke(1);

        assertThat(replica.run(new LockRelease("k", 1, token))).isEqualTo(new Released("k", 0));
    }

    @Test
    void leaseGrantRetriedWithTheSameParametersReturnsTheSameLease() {
        LeaseGranted first = replica.grantLease(5, 4_000, "worker");
        LeaseView before = replica.lease(5);

        Result retry = replica.run(new LeaseGrant(5, 4_000, "worker"));

        assertThat(retry).isEqualTo(first);
        assertThat(replica.lease(5)).isEqualTo(before);
        assertThat(replica.state.leaseCount()).isEqualTo(1);
    }

    @Test
    void leaseGrantWithoutAClientIdIsTheSameAsAnEmptyOne() {
        replica.grantLease(5, 4_000, null);

        assertThat(replica.run(new LeaseGrant(5, 4_000, ""))).isEqualTo(new LeaseGranted(5, 4_000));
        assertThat(replica.lease(5).clientId()).isEmpty();
    }

    @Test
    void leaseGrantOfATakenIdWithAnotherTtlOrClientIsAlreadyExists() {
        replica.grantLease(5, 4_000, "worker");
        LeaseView before = replica.lease(5);

        Result otherTtl = replica.run(new LeaseGrant(5, 5_000, "worker"));
        Result otherClient = replica.run(new LeaseGrant(5, 4_000, "intruder"));

        for (Result r : new Result[] {otherTtl, otherClient}) {
            assertThat(r).isInstanceOf(Rejected.class);
            assertThat(((Rejected) r).code()).isEqualTo(Code.ALREADY_EXISTS);
            assertThat(((Rejected) r).message()).contains("lease 5");
        }
        assertThat(replica.lease(5)).isEqualTo(before);
    }
}
