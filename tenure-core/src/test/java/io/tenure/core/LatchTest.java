package io.tenure.core;

import io.tenure.core.barrier.BarrierAwait;
import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.Effect;
import io.tenure.core.kernel.Result.Code;
import io.tenure.core.kernel.Result.Rejected;
import io.tenure.core.latch.LatchAwait;
import io.tenure.core.latch.LatchCancel;
import io.tenure.core.latch.LatchCountDown;
import io.tenure.core.latch.LatchResult.CountSet;
import io.tenure.core.latch.LatchResult.CountedDown;
import io.tenure.core.latch.LatchResult.Open;
import io.tenure.core.latch.LatchResult.Waiting;
import io.tenure.core.latch.LatchSetCount;
import io.tenure.core.latch.LatchTable;
import io.tenure.core.lock.LockAcquire;
import io.tenure.core.watch.WatchEvent;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static io.tenure.core.Replica.expect;
import static org.assertj.core.api.Assertions.assertThat;

/** Count-down latches, case by case: the namespace, retries, an await of a latch that is not there, a lease's end, bad input. */
class LatchTest {
    private final Replica replica = new Replica();

    @BeforeEach
    void leases() {
        for (long id = 1; id <= 3; id++) {
            replica.grantLease(id);
        }
    }

    @Test
    void aLatchReleasesItsWaitersTogetherAtZeroAndIsGone() {
        expect(replica.run(new LatchSetCount("done", 2, 0)), CountSet.class);
        expect(replica.run(new LatchAwait("done", 1, true, 11)), Waiting.class);
        expect(replica.run(new LatchAwait("done", 2, true, 12)), Waiting.class);
        expect(replica.run(new LatchCountDown("done", 0)), CountedDown.class);

        Applied last = replica.apply(new LatchCountDown("done", 0));

        assertThat(expect(last.result(), CountedDown.class).count()).isZero();
        assertThat(Replica.effects(last, Effect.Wake.class)).extracting(w -> ((Open) w.result()).leaseId()).containsExactly(1L, 2L);
        assertThat(Replica.watched(last)).singleElement().satisfies(e -> assertThat(e.type()).isEqualTo(WatchEvent.Type.DELETE));
        assertThat(replica.state.primitive(LatchTable.class).latch("done")).isNull();
        assertThat(expect(replica.run(new LatchAwait("done", 3, true, 13)), Open.class).revision()).as("absent: open at once").isZero();
        assertThat(expect(replica.run(new LatchAwait("done", 1, true, 11)), Open.class).revision())
                .as("a retry of a released await is answered with its release").isEqualTo(Replica.watched(last).get(0).revision());
    }

    @Test
    void aSetCountAndACountDownRetriedWithTheirRequestIdAreAppliedOnce() {
        CountSet set = expect(replica.run(new LatchSetCount("done", 3, 7)), CountSet.class);
        assertThat(set.set()).isTrue();
        assertThat(expect(replica.run(new LatchSetCount("done", 3, 7)), CountSet.class)).isEqualTo(set);
        assertThat(expect(replica.run(new LatchSetCount("done", 5, 8)), CountSet.class).set()).as("it exists").isFalse();

        assertThat(expect(replica.run(new LatchCountDown("done", 9)), CountedDown.class).count()).isEqualTo(2);
        assertThat(expect(replica.run(new LatchCountDown("done", 9)), CountedDown.class).count()).isEqualTo(2);
        assertThat(replica.state.primitive(LatchTable.class).count("done")).isEqualTo(2);
        Applied down = replica.apply(new LatchCountDown("done", 10));
        assertThat(new String(Replica.watched(down).get(0).kv().metadata(), StandardCharsets.US_ASCII)).isEqualTo("1");
        assertThat(expect(replica.run(new LatchCountDown("absent", 0)), CountedDown.class).applied()).isFalse();
    }

    /** A latch is a count, as a counter will be: latches have a namespace of their own (seed 004). */
    @Test
    void aLatchMayShareItsNameWithALockAndABarrier() {
        replica.run(new LatchSetCount("shared", 1, 0));
        Applied lock = replica.apply(new LockAcquire("shared", 1, null, true));
        Applied barrier = replica.apply(new BarrierAwait("shared", 1, 2, true, 0));

        assertThat(lock.result()).isInstanceOf(io.tenure.core.lock.LockResult.Granted.class);
        assertThat(barrier.result()).isInstanceOf(io.tenure.core.barrier.BarrierResult.Waiting.class);
        assertThat(replica.state.primitive(LatchTable.class).count("shared")).isEqualTo(1);
        Applied down = replica.apply(new LatchCountDown("shared", 0));
        assertThat(Replica.watched(down)).extracting(io.tenure.core.watch.WatchEvent::kind).containsOnly(LatchTable.NAME);
        assertThat(replica.locks().lock("shared").leaseId()).as("the lock of that name is untouched").isEqualTo(1);
    }

    @Test
    void aLeaseThatEndsLeavesTheLatchWhichKeepsItsCount() {
        replica.run(new LatchSetCount("done", 2, 0));
        expect(replica.run(new LatchAwait("done", 1, true, 0)), Waiting.class);

        replica.revoke(1);

        assertThat(replica.state.primitive(LatchTable.class).latch("done").waiting()).isEmpty();
        assertThat(replica.state.primitive(LatchTable.class).count("done")).isEqualTo(2);
    }

    @Test
    void aWithdrawnAwaitIsNotAppliedAgainByALateCopy() {
        replica.run(new LatchSetCount("done", 1, 0));
        replica.run(new LatchAwait("done", 1, true, 21));
        replica.run(new LatchCancel("done", 1, 21));

        Rejected late = expect(replica.run(new LatchAwait("done", 1, true, 21)), Rejected.class);

        assertThat(late.code()).isEqualTo(Code.FAILED_PRECONDITION);
        assertThat(replica.state.primitive(LatchTable.class).waiting("done")).isZero();
    }

    @Test
    void badInputNamesItsFieldAndChangesNothing() {
        assertThat(expect(replica.run(new LatchSetCount("done", 0, 0)), Rejected.class).message()).startsWith("count must be between 1 and");
        assertThat(expect(replica.run(new LatchSetCount("done", 1_000_001, 0)), Rejected.class).code()).isEqualTo(Code.INVALID_ARGUMENT);
        assertThat(expect(replica.run(new LatchSetCount("", 1, 0)), Rejected.class).message()).startsWith("name");
        assertThat(expect(replica.run(new LatchCountDown("", 0)), Rejected.class).message()).startsWith("name");
        assertThat(expect(replica.run(new LatchAwait("done", 99, true, 0)), Rejected.class).code()).isEqualTo(Code.NOT_FOUND);

        assertThat(replica.state.primitive(LatchTable.class).latchCount()).isZero();
        assertThat(replica.state.primitive(LatchTable.class).latches("", 10)).isEmpty();
    }
}
