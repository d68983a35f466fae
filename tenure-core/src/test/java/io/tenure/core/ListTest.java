package io.tenure.core;

import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.Effect;
import io.tenure.core.kernel.Result;
import io.tenure.core.kernel.Result.Code;
import io.tenure.core.kernel.Result.Rejected;
import io.tenure.core.list.ListAbandon;
import io.tenure.core.list.ListCancel;
import io.tenure.core.list.ListPop;
import io.tenure.core.list.ListPush;
import io.tenure.core.list.ListResult.Empty;
import io.tenure.core.list.ListResult.Left;
import io.tenure.core.list.ListResult.Popped;
import io.tenure.core.list.ListResult.Pushed;
import io.tenure.core.list.ListResult.Returned;
import io.tenure.core.list.ListResult.Waiting;
import io.tenure.core.list.ListReturn;
import io.tenure.core.list.ListTable;
import io.tenure.core.list.ListWithdraw;
import io.tenure.core.lock.LockAcquire;
import io.tenure.core.watch.WatchEvent;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static io.tenure.core.Replica.expect;
import static org.assertj.core.api.Assertions.assertThat;

/** Lists, case by case: both ends, ranges, blocking pops served in arrival order, retries, given-back items, leases that end, limits. */
class ListTest {
    private final Replica replica = new Replica();

    @BeforeEach
    void leases() {
        for (long id = 1; id <= 3; id++) {
            replica.grantLease(id);
        }
    }

    private ListTable table() {
        return replica.state.primitive(ListTable.class);
    }

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String s(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }

    private Pushed push(String key, String value, boolean left) {
        return expect(replica.run(new ListPush(key, b(value), left, 0)), Pushed.class);
    }

    private List<String> all(String key) {
        return table().range(key, 0, -1, Integer.MAX_VALUE).stream().map(ListTest::s).toList();
    }

    @Test
    void itemsArePushedAndPoppedAtEitherEndAndRangesCountFromBothEnds() {
        push("q", "b", false);
        push("q", "c", false);
        assertThat(push("q", "a", true).length()).isEqualTo(3);
        assertThat(all("q")).containsExactly("a", "b", "c");
        assertThat(table().range("q", -2, -1, 10)).extracting(ListTest::s).containsExactly("b", "c");
        assertThat(table().range("q", 1, 100, 10)).extracting(ListTest::s).containsExactly("b", "c");
        assertThat(table().range("q", 2, 1, 10)).isEmpty();
        assertThat(table().range("q", -100, 0, 10)).extracting(ListTest::s).containsExactly("a");

        Popped head = expect(replica.run(new ListPop("q", true, 0, false, 0)), Popped.class);
        assertThat(s(head.value())).isEqualTo("a");
        assertThat(head.length()).isEqualTo(2);
        assertThat(s(expect(replica.run(new ListPop("q", false, 0, false, 0)), Popped.class).value())).isEqualTo("c");
        Applied last = replica.apply(new ListPop("q", true, 0, false, 0));
        assertThat(s(expect(last.result(), Popped.class).value())).isEqualTo("b");
        assertThat(Replica.watched(last)).singleElement().satisfies(e -> assertThat(e.type()).isEqualTo(WatchEvent.Type.DELETE));
        assertThat(table().list("q")).as("gone when empty").isNull();
        expect(replica.run(new ListPop("q", true, 0, false, 0)), Empty.class);
        assertThat(table().listCount()).isZero();
        assertThat(table().itemCount()).isZero();
    }

    @Test
    void blockedPopsAreServedInArrivalOrderByTheNextPushes() {
        expect(replica.run(new ListPop("jobs", true, 2, true, 12)), Waiting.class);
        assertThat(expect(replica.run(new ListPop("jobs", true, 1, true, 11)), Waiting.class).ahead()).isOne();
        assertThat(expect(replica.run(new ListPop("jobs", true, 0, false, 0)), Empty.class)).as("a pop that does not wait").isNotNull();

        Applied first = replica.apply(new ListPush("jobs", b("j1"), false, 0));
        assertThat(expect(first.result(), Pushed.class).handedTo()).isEqualTo(2);
        assertThat(Replica.effects(first, Effect.Wake.class)).singleElement().satisfies(w -> {
            Popped handed = (Popped) w.result();
            assertThat(handed.leaseId()).isEqualTo(2);
            assertThat(s(handed.value())).isEqualTo("j1");
        });
        assertThat(table().length("jobs")).as("handed, not stored").isZero();
        assertThat(expect(replica.run(new ListPush("jobs", b("j2"), false, 0)), Pushed.class).handedTo()).isOne();
        assertThat(expect(replica.run(new ListPush("jobs", b("j3"), false, 0)), Pushed.class).handedTo()).as("nobody waits now").isZero();
        assertThat(all("jobs")).containsExactly("j3");
        // A retry of a pop that was handed its item is answered with that item, and pops nothing more.
        assertThat(s(expect(replica.run(new ListPop("jobs", true, 2, true, 12)), Popped.class).value())).isEqualTo("j1");
        assertThat(all("jobs")).containsExactly("j3");
    }

    @Test
    void aPushAndAPopRetriedWithTheirRequestIdsAreAppliedOnce() {
        Pushed pushed = expect(replica.run(new ListPush("q", b("x"), false, 5)), Pushed.class);
        assertThat(replica.run(new ListPush("q", b("x"), false, 5))).isEqualTo(pushed);
        push("q", "y", false);
        assertThat(all("q")).containsExactly("x", "y");
        Popped popped = expect(replica.run(new ListPop("q", true, 0, false, 6)), Popped.class);
        Result retry = replica.run(new ListPop("q", true, 0, false, 6));
        assertThat(retry).isSameAs(popped);
        assertThat(all("q")).containsExactly("y");
        // The memo is state: a restored replica answers the retries the same.
        Replica restored = Replica.restore(replica.snapshot());
        assertThat(s(expect(restored.run(new ListPop("q", true, 0, false, 6)), Popped.class).value())).isEqualTo("x");
        assertThat(expect(restored.run(new ListPush("q", b("x"), false, 5)), Pushed.class).revision()).isEqualTo(pushed.revision());
        assertThat(restored.state.primitive(ListTable.class).length("q")).isOne();
    }

    @Test
    void anItemWhoseAnswerWasNotDeliveredIsGivenBackToTheHeadOrToTheNextWaiter() {
        push("q", "a", false);
        push("q", "b", false);
        Popped popped = expect(replica.run(new ListPop("q", true, 0, false, 9)), Popped.class);
        Returned back = expect(replica.run(new ListReturn("q", popped.value(), true, 9)), Returned.class);
        assertThat(back.handedTo()).isZero();
        assertThat(all("q")).as("back at the head it was popped from").containsExactly("a", "b");
        expect(replica.run(new ListReturn("q", popped.value(), true, 9)), Result.Skipped.class);
        assertThat(all("q")).as("a retried return gives back once").containsExactly("a", "b");
        // A retry of the pop after the return pops afresh, as a new pop would.
        assertThat(s(expect(replica.run(new ListPop("q", true, 0, false, 9)), Popped.class).value())).isEqualTo("a");

        replica.run(new ListPop("q", true, 0, false, 0));
        expect(replica.run(new ListPop("q", true, 3, true, 0)), Waiting.class);
        assertThat(expect(replica.run(new ListReturn("q", b("z"), true, 0)), Returned.class).handedTo()).isEqualTo(3);
    }

    @Test
    void anItemAlreadyAnsweredToARetryIsNotGivenBack() {
        push("q", "a", false);
        Popped popped = expect(replica.run(new ListPop("q", true, 0, false, 4)), Popped.class);
        replica.run(new ListPop("q", true, 0, false, 4)); // the retry, on another member, got it
        expect(replica.run(new ListReturn("q", popped.value(), true, 4)), Result.Skipped.class);
        assertThat(table().length("q")).as("not delivered twice").isZero();
    }

    @Test
    void aWaiterWhoseLeaseEndsOrWhoCancelsLeavesAndALateCopyIsRefused() {
        expect(replica.run(new ListPop("q", true, 1, true, 31)), Waiting.class);
        expect(replica.run(new ListPop("q", true, 2, true, 32)), Waiting.class);
        Applied cancel = replica.apply(new ListCancel("q", 1, 31));
        expect(cancel.result(), Left.class);
        assertThat(Replica.effects(cancel, Effect.Wake.class)).hasSize(1);
        Rejected late = expect(replica.run(new ListPop("q", true, 1, true, 31)), Rejected.class);
        assertThat(late.code()).isEqualTo(Code.FAILED_PRECONDITION);

        replica.revoke(2);
        assertThat(table().list("q")).as("nobody waits, nothing in it: gone").isNull();
        assertThat(expect(replica.run(new ListPush("q", b("v"), false, 0)), Pushed.class).handedTo()).isZero();
    }

    @Test
    void anAbandonedPopWithdrawsItsWaitOrGivesItsItemBackUnlessARetryGotIt() {
        expect(replica.run(new ListPop("q", true, 1, true, 41)), Waiting.class);
        Applied gone = replica.apply(new ListAbandon("q", 1, 41));
        expect(gone.result(), Left.class);
        assertThat(table().list("q")).as("the wait withdrawn").isNull();
        expect(replica.run(new ListPop("q", true, 1, true, 41)), Waiting.class); // sent again elsewhere: it may wait anew

        push("q", "handed", false); // to lease 1, whose call then went away
        Returned back = expect(replica.run(new ListAbandon("q", 1, 41)), Returned.class);
        assertThat(back.length()).isOne();
        assertThat(all("q")).containsExactly("handed");
        expect(replica.run(new ListAbandon("q", 1, 41)), Result.Skipped.class);
        assertThat(all("q")).as("given back once").containsExactly("handed");

        expect(replica.run(new ListPop("q", true, 2, false, 42)), Popped.class);
        replica.run(new ListPop("q", true, 2, false, 42)); // its retry was answered with it
        expect(replica.run(new ListAbandon("q", 2, 42)), Result.Skipped.class);
        assertThat(table().length("q")).isZero();
        expect(replica.run(new ListAbandon("q", 3, 43)), Result.Skipped.class);
    }

    @Test
    void aCancelAfterThePopWasHandedItsItemGivesTheItemBack() {
        expect(replica.run(new ListPop("q", true, 1, true, 51)), Waiting.class);
        push("q", "handed", false);
        assertThat(table().length("q")).isZero();
        expect(replica.run(new ListCancel("q", 1, 51)), Left.class);
        assertThat(all("q")).as("the caller gave up: the item is back").containsExactly("handed");
        expect(replica.run(new ListCancel("q", 1, 51)), Left.class);
        assertThat(all("q")).as("once").containsExactly("handed");
    }

    @Test
    void listsHaveANamespaceOfTheirOwn() {
        expect(replica.run(new LockAcquire("shared", 1, null, false)), io.tenure.core.lock.LockResult.Granted.class);
        push("shared", "v", false);
        assertThat(table().length("shared")).isOne();
    }

    @Test
    void badInputAndAFullListAreRefusedNamingTheFieldAndNothingChanges() {
        Rejected empty = expect(replica.run(new ListPush("", b("v"), false, 0)), Rejected.class);
        assertThat(empty.code()).isEqualTo(Code.INVALID_ARGUMENT);
        assertThat(empty.message()).startsWith("name");
        Rejected big = expect(replica.run(new ListPush("q", new byte[ListTable.MAX_VALUE_BYTES + 1], false, 0)), Rejected.class);
        assertThat(big.message()).contains("value must be at most");
        assertThat(expect(replica.run(new ListPop("q", true, 99, true, 0)), Rejected.class).code()).isEqualTo(Code.NOT_FOUND);
        assertThat(table().listCount()).isZero();

        for (int i = 0; i < ListTable.MAX_LENGTH; i++) {
            replica.run(new ListPush("full", new byte[] {(byte) i}, false, 0));
        }
        Rejected full = expect(replica.run(new ListPush("full", b("one more"), false, 77)), Rejected.class);
        assertThat(full.code()).isEqualTo(Code.FAILED_PRECONDITION);
        assertThat(full.message()).contains("'full' is full");
        assertThat(table().length("full")).isEqualTo(ListTable.MAX_LENGTH);
        replica.run(new ListPop("full", true, 0, false, 0));
        assertThat(expect(replica.run(new ListPush("full", b("one more"), false, 77)), Pushed.class).length())
                .as("the refused push was not remembered: its retry is applied once there is room").isEqualTo(ListTable.MAX_LENGTH);
    }

    @Test
    void aTimeoutsWithdrawalAfterAHandOffLeavesTheItemWithThePopAndACancelGivesItBack() {
        expect(replica.run(new ListPop("jobs", true, 1, true, 21)), Waiting.class);
        push("jobs", "x", false); // handed to lease 1's pop 21
        Popped again = expect(replica.run(new ListWithdraw("jobs", 1, 21)), Popped.class);
        assertThat(s(again.value())).isEqualTo("x");
        assertThat(all("jobs")).as("the item is not also back in the list").isEmpty();

        expect(replica.run(new ListPop("jobs", true, 1, true, 22)), Waiting.class);
        push("jobs", "y", false);
        replica.run(new ListCancel("jobs", 1, 22));
        assertThat(all("jobs")).as("a cancel gives back what its pop was handed").containsExactly("y");

        expect(replica.run(new ListPop("jobs2", true, 1, true, 23)), Waiting.class);
        assertThat(replica.run(new ListWithdraw("jobs2", 1, 23))).isInstanceOf(Left.class);
        assertThat(table().list("jobs2")).as("the wait withdrawn").isNull();
        assertThat(replica.run(new ListPop("jobs2", true, 1, true, 23))).as("a late copy of the withdrawn pop")
                .isInstanceOf(Rejected.class);
    }
}
