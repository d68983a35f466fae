package io.tenure.core;

import io.tenure.core.barrier.BarrierAwait;
import io.tenure.core.barrier.DoubleBarrierEnter;
import io.tenure.core.barrier.DoubleBarrierLeave;
import io.tenure.core.barrier.DoubleBarrierResult.Entered;
import io.tenure.core.barrier.DoubleBarrierResult.Entering;
import io.tenure.core.barrier.DoubleBarrierResult.Leaving;
import io.tenure.core.barrier.DoubleBarrierResult.Left;
import io.tenure.core.barrier.DoubleBarrierResult.NotEntered;
import io.tenure.core.barrier.DoubleBarrierTable;
import io.tenure.core.barrier.DoubleBarrierView;
import io.tenure.core.barrier.DoubleBarrierWithdraw;
import io.tenure.core.election.ElectionCampaign;
import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.Result.Code;
import io.tenure.core.kernel.Result.Rejected;
import io.tenure.core.lock.LockAcquire;
import io.tenure.core.semaphore.SemaphoreAcquire;
import io.tenure.core.watch.WatchEvent;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static io.tenure.core.Replica.expect;
import static org.assertj.core.api.Assertions.assertThat;

/** Double barriers, one rule per scenario; {@link DoubleBarrierModelTest} explores their combinations. */
class DoubleBarrierTest {
    private final Replica replica = new Replica();

    @BeforeEach
    void leases() {
        for (long id = 1; id <= 5; id++) {
            replica.grantLease(id);
        }
    }

    private Applied enter(String name, long lease, int parties) {
        return replica.apply(new DoubleBarrierEnter(name, lease, parties, true, 0));
    }

    private Applied leave(String name, long lease) {
        return replica.apply(new DoubleBarrierLeave(name, lease, true));
    }

    private DoubleBarrierView view(String name) {
        return replica.state.primitive(DoubleBarrierTable.class).barrier(name);
    }

    /** The watch events of a command as "PHASE lease version" (a PUT) or "DELETE". */
    private static List<String> events(Applied applied) {
        return Replica.watched(applied).stream().map(e -> e.type() == WatchEvent.Type.DELETE ? "DELETE"
                : new String(e.kv().metadata(), StandardCharsets.UTF_8) + " " + e.kv().leaseId() + " " + e.kv().version()).toList();
    }

    @Test
    void watchesSeeEachPhaseWithRevisionsThatIncrease() {
        assertThat(events(enter("round", 1, 2))).containsExactly("entering 1 1");
        Applied in = enter("round", 2, 2);
        assertThat(events(in)).containsExactly("entering 2 2", "in 2 2");
        long entered = expect(in.result(), Entered.class).revision();
        assertThat(Replica.watched(in).get(1).revision()).as("the entry's revision").isEqualTo(entered);

        assertThat(events(leave("round", 1))).containsExactly("leaving 1 1");
        Applied out = leave("round", 2);
        assertThat(events(out)).containsExactly("leaving 2 0", "DELETE");
        assertThat(Replica.watched(out).get(1).revision()).isEqualTo(expect(out.result(), Left.class).revision());
        assertThat(view("round")).isNull();
    }

    @Test
    void anEnterWhileAGenerationIsInsideWaitsForTheNextOne() {
        enter("round", 1, 2);
        enter("round", 2, 2);
        Entering next = expect(enter("round", 3, 2).result(), Entering.class);
        assertThat(next.inside()).isEqualTo(2);
        assertThat(expect(replica.run(new DoubleBarrierEnter("round", 4, 2, false, 0)), NotEntered.class).entering())
                .as("an enter that does not wait does not enter a generation in progress").isEqualTo(1);
        enter("round", 4, 2);
        leave("round", 1);
        assertThat(expect(enter("round", 1, 2).result(), Rejected.class).message())
                .as("a party waiting to leave may not enter again yet").contains("has left double barrier 'round'");

        Applied last = leave("round", 2);

        assertThat(events(last)).containsExactly("leaving 2 0", "out 3 2", "in 4 2");
        assertThat(Replica.grantsToWaiters(last)).isEmpty();
        DoubleBarrierView view = view("round");
        assertThat(view.inside()).extracting(DoubleBarrierView.Party::leaseId).containsExactly(3L, 4L);
        assertThat(view.entering()).isEmpty();
    }

    @Test
    void aLateCopyOfAnEnterAfterItsLeaseLeftDoesNotEnterTheNextGeneration() {
        replica.run(new DoubleBarrierEnter("round", 1, 1, true, 77));
        expect(replica.run(new DoubleBarrierEnter("round", 1, 1, true, 77)), Entered.class);
        expect(replica.run(new DoubleBarrierLeave("round", 1, true)), Left.class);

        Rejected late = expect(replica.run(new DoubleBarrierEnter("round", 1, 1, true, 77)), Rejected.class);

        assertThat(late.code()).isEqualTo(Code.FAILED_PRECONDITION);
        assertThat(view("round")).isNull();
        expect(replica.run(new DoubleBarrierEnter("round", 1, 1, true, 78)), Entered.class);
    }

    @Test
    void aWithdrawalLeavesTheBarrierHalfEnteredAndAnEndedLeaseInsideCountsAsLeft() {
        enter("round", 1, 3);
        enter("round", 2, 3);
        expect(replica.run(new DoubleBarrierWithdraw("round", 1, 0)), NotEntered.class);
        assertThat(view("round").entering()).extracting(DoubleBarrierView.Party::leaseId).containsExactly(2L);
        enter("round", 3, 3);
        expect(enter("round", 4, 3).result(), Entered.class);
        expect(replica.run(new DoubleBarrierWithdraw("round", 2, 0)), Entered.class);
        expect(leave("round", 2).result(), Leaving.class);
        expect(leave("round", 3).result(), Leaving.class);

        Applied ended = replica.apply(new io.tenure.core.kernel.LeaseRevoke(4));

        assertThat(Replica.effects(ended, io.tenure.core.kernel.Effect.Wake.class)).extracting(w -> w.result().getClass().getSimpleName())
                .containsExactly("Left", "Left");
        assertThat(view("round")).isNull();
    }

    @Test
    void aNameIsOfOneKindAmongBarriersAndBadInputChangesNothing() {
        replica.run(new LockAcquire("a-lock", 1, null, false));
        replica.run(new SemaphoreAcquire("a-semaphore", 1, 2, 1, false, 0));
        replica.run(new ElectionCampaign("an-election", 1, new byte[0], false, 0));
        replica.run(new BarrierAwait("a-barrier", 1, 2, true, 0));
        String before = replica.view();

        // Barriers and double barriers share a namespace of their own: a lock's, a semaphore's or an election's name is free.
        for (String other : new String[] {"a-lock", "a-semaphore", "an-election"}) {
            assertThat(enter(other, 2, 1).result()).as(other).isInstanceOf(io.tenure.core.barrier.DoubleBarrierResult.class)
                    .isNotInstanceOf(Rejected.class);
            leave(other, 2);
        }
        before = replica.view();
        assertThat(expect(enter("a-barrier", 2, 2).result(), Rejected.class).message()).contains("is a barrier, not a double barrier");
        assertThat(expect(leave("a-barrier", 2).result(), Rejected.class).message()).contains("is a barrier, not a double barrier");
        Rejected zero = expect(enter("round", 2, 0).result(), Rejected.class);
        assertThat(zero.code()).isEqualTo(Code.INVALID_ARGUMENT);
        assertThat(zero.message()).contains("parties must be between 1 and 1000000, got 0");
        assertThat(expect(enter("", 2, 2).result(), Rejected.class).message()).contains("name");
        assertThat(expect(enter("round", 99, 2).result(), Rejected.class).code()).isEqualTo(Code.NOT_FOUND);
        enter("round", 2, 3);
        Rejected other = expect(enter("round", 3, 4).result(), Rejected.class);
        assertThat(other.code()).isEqualTo(Code.FAILED_PRECONDITION);
        assertThat(other.message()).contains("parties", "has 3 parties, not 4");
        assertThat(expect(replica.run(new BarrierAwait("round", 3, 3, true, 0)), Rejected.class).message())
                .contains("'round' is a double barrier, not a barrier");
        assertThat(view("round").entering()).hasSize(1);
        replica.run(new DoubleBarrierWithdraw("round", 2, 0));
        String after = replica.view();
        assertThat(after.substring(after.indexOf("\nleases="), after.indexOf("\nhorizon=")))
                .as("the refusals changed nothing").isEqualTo(before.substring(before.indexOf("\nleases="), before.indexOf("\nhorizon=")));
    }
}
