package io.tenure.core;

import io.tenure.core.kernel.Applied;
import io.tenure.core.lock.LockCancel;
import io.tenure.core.kernel.Effect;
import io.tenure.core.lock.LockResult.Cancelled;
import io.tenure.core.lock.LockResult.Granted;
import org.junit.jupiter.api.Test;

import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A waiter's timeout races the grant through the log: whichever the log orders first wins, and
 * the caller learns the truth (ARCHITECTURE.md, "The path of one Lock call", step 4).
 */
class WaitCancelTest {
    private final Replica replica = new Replica();

    @Test
    void cancelAppliedAfterTheGrantReturnsTheGrantSoTheCallerOwnsTheLock() {
        replica.grantLease(1);
        replica.grantLease(2);
        long first = replica.acquire("k", 1).fencingToken();
        replica.enqueue("k", 2);
        long handedOver = replica.release("k", 1, first).nextFencingToken();
        String before = replica.view();

        Applied cancel = replica.apply(new LockCancel("k", 2));

        assertThat(cancel.result()).isEqualTo(new Granted("k", 2, handedOver, true));
        assertThat(cancel.effects()).isEmpty();
        assertThat(replica.lock("k").leaseId()).isEqualTo(2);
        assertThat(replica.lock("k").fencingToken()).isEqualTo(handedOver);
        assertThat(withoutPositions(replica.view())).isEqualTo(withoutPositions(before));
        // The caller now owns it and can release it with that token.
        assertThat(replica.release("k", 2, handedOver).nextFencingToken()).isZero();
    }

    @Test
    void cancelWhileQueuedLeavesTheQueueAndTheLeasesWaitingSet() {
        for (long id = 1; id <= 4; id++) {
            replica.grantLease(id);
        }
        long token = replica.acquire("k", 1).fencingToken();
        replica.enqueue("k", 2);
        replica.enqueue("k", 3);
        replica.enqueue("k", 4);

        Applied cancel = replica.apply(new LockCancel("k", 3));

        Cancelled cancelled = new Cancelled("k", 3, Replica.clientOf(1), 2);
        assertThat(cancel.result()).isEqualTo(cancelled);
        assertThat(cancel.effects()).as("the calls parked for this wait, on any member, are told; nobody else")
                .containsExactly(new Effect.Wake(Replica.lockWait("k", 3), cancelled));
        assertThat(replica.waiters("k")).containsExactly(2L, 4L);
        assertThat(replica.lease(3).waiting()).isEmpty();
        assertThat(replica.lease(3).held()).isEmpty();

        long second = replica.release("k", 1, token).nextFencingToken();
        assertThat(replica.lock("k").leaseId()).isEqualTo(2);
        replica.release("k", 2, second);
        assertThat(replica.lock("k").leaseId()).as("the cancelled waiter is skipped").isEqualTo(4);
    }

    @Test
    void cancellingOneOfSeveralWaitsKeepsTheOthers() {
        replica.grantLease(1);
        replica.grantLease(2);
        replica.acquire("a", 1);
        replica.acquire("b", 1);
        replica.enqueue("a", 2);
        replica.enqueue("b", 2);

        replica.cancel("a", 2);

        assertThat(replica.lease(2).waiting()).containsExactly("b");
        assertThat(replica.waiters("a")).isEmpty();
        assertThat(replica.waiters("b")).containsExactly(2L);
    }

    @Test
    void cancelOfNothingIsHarmless() {
        Consumer<Replica> setup = r -> {
            r.grantLease(1);
            r.grantLease(2);
            r.acquire("k", 1);
        };
        Replica touched = Replica.with(setup);
        Replica untouched = Replica.with(setup);

        assertThat(touched.cancel("free-lock", 2)).isEqualTo(new Cancelled("free-lock", 2, "", 0));
        assertThat(touched.cancel("k", 2)).as("held by another, not queued").isEqualTo(new Cancelled("k", 2, Replica.clientOf(1), 0));
        assertThat(touched.cancel("k", 77)).as("unknown lease").isEqualTo(new Cancelled("k", 77, Replica.clientOf(1), 0));
        assertThat(touched.cancel("", 2)).as("no name")
                .isEqualTo(new io.tenure.core.kernel.Result.Rejected(io.tenure.core.kernel.Result.Code.INVALID_ARGUMENT, "name must not be empty"));
        for (int i = 0; i < 4; i++) {
            untouched.apply(Replica.HARMLESS);
        }

        assertThat(touched.snapshot()).isEqualTo(untouched.snapshot());
        assertThat(touched.view()).isEqualTo(untouched.view());
    }

    @Test
    void retriedCancelAfterWithdrawingIsStillCancelled() {
        replica.grantLease(1);
        replica.grantLease(2);
        replica.acquire("k", 1);
        replica.enqueue("k", 2);

        assertThat(replica.cancel("k", 2)).isEqualTo(new Cancelled("k", 2, Replica.clientOf(1), 0));
        assertThat(replica.cancel("k", 2)).isEqualTo(new Cancelled("k", 2, Replica.clientOf(1), 0));
        assertThat(replica.waiters("k")).isEmpty();
    }

    private static String withoutPositions(String view) {
        return view.substring(view.indexOf('\n'));
    }
}
