package io.tenure.core;

import io.tenure.core.kernel.Result.Code;
import io.tenure.core.kernel.Result.Rejected;
import io.tenure.core.signal.ListenerView;
import io.tenure.core.signal.SignalListen;
import io.tenure.core.signal.SignalPublish;
import io.tenure.core.signal.SignalResult.Listening;
import io.tenure.core.signal.SignalResult.Published;
import io.tenure.core.signal.SignalResult.Unlistened;
import io.tenure.core.signal.SignalTable;
import io.tenure.core.signal.SignalUnlisten;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static io.tenure.core.Replica.expect;
import static org.assertj.core.api.Assertions.assertThat;

/** Signals, case by case: who receives a publish, queue groups in turn, retries, leases ending, snapshots, bad input. */
class SignalTest {
    private final Replica replica = new Replica();

    private SignalTable table() {
        return replica.state.primitive(SignalTable.class);
    }

    private void listen(long id, long lease, String pattern, String group) {
        expect(replica.run(new SignalListen(id, lease, pattern, group, 0)), Listening.class);
    }

    private Published publish(String channel) {
        return expect(replica.run(new SignalPublish(channel, channel.getBytes(StandardCharsets.UTF_8), 0)), Published.class);
    }

    @Test
    void aSignalGoesToEveryMatchingListener() {
        replica.grantLease(1);
        replica.grantLease(2);
        listen(10, 1, "orders.created", "");
        listen(11, 1, "orders.*", "");
        listen(12, 2, "orders.>", "");
        listen(13, 2, "invoices.>", "");

        Published p = publish("orders.created");
        assertThat(p.receivers()).containsExactly(10, 11, 12);
        assertThat(p.receiverCount()).isEqualTo(3);
        assertThat(new String(p.payload(), StandardCharsets.UTF_8)).isEqualTo("orders.created");
        assertThat(publish("orders.created.eu").receivers()).containsExactly(12);
        assertThat(publish("shipments.sent").receivers()).isEmpty();
        assertThat(publish("shipments.sent").receiverCount()).isZero();
    }

    @Test
    void aQueueGroupReceivesEachSignalOnceInTurn() {
        replica.grantLease(1);
        replica.grantLease(2);
        listen(21, 1, "jobs.>", "workers");
        listen(22, 2, "jobs.>", "workers");
        listen(23, 2, "jobs.*", "workers");
        listen(30, 1, "jobs.>", "");
        listen(40, 1, "jobs.>", "auditors");

        long[][] got = new long[6][];
        for (int i = 0; i < got.length; i++) {
            got[i] = publish("jobs.build").receivers();
        }
        // One of each group and every listener without one; the workers in id order, in turn.
        assertThat(got[0]).containsExactly(21, 30, 40);
        assertThat(got[1]).containsExactly(22, 30, 40);
        assertThat(got[2]).containsExactly(23, 30, 40);
        assertThat(got[3]).containsExactly(21, 30, 40);
        assertThat(publish("jobs.build").receiverCount()).isEqualTo(3);
        // jobs.* does not match a deeper channel: only 21 and 22 take turns there.
        assertThat(publish("jobs.build.x").receivers()).containsAnyOf(21L, 22L).doesNotContain(23L);
    }

    @Test
    void aRetriedPublishIsDeliveredOnce() {
        replica.grantLease(1);
        listen(10, 1, "a.b", "");
        Published first = expect(replica.run(new SignalPublish("a.b", new byte[] {1}, 77)), Published.class);
        Published again = expect(replica.run(new SignalPublish("a.b", new byte[] {1}, 77)), Published.class);
        assertThat(first.receivers()).containsExactly(10);
        assertThat(first.retry()).isFalse();
        assertThat(again.retry()).isTrue();
        assertThat(again.receivers()).isEmpty();
        assertThat(again.receiverCount()).isEqualTo(1);
    }

    @Test
    void listenersGoWithTheirLeaseAndByUnlisten() {
        replica.grantLease(1);
        replica.grantLease(2);
        listen(10, 1, "a.>", "g");
        listen(11, 2, "a.>", "g");
        listen(12, 1, "a.b", "");
        assertThat(table().listenerCount()).isEqualTo(3);
        assertThat(table().listenersOf(1)).extracting(ListenerView::pattern).containsExactly("a.>", "a.b");

        replica.revoke(1);
        assertThat(table().listenerCount()).isOne();
        assertThat(publish("a.b").receivers()).containsExactly(11);

        assertThat(expect(replica.run(new SignalUnlisten(11, 2)), Unlistened.class).was()).isTrue();
        assertThat(expect(replica.run(new SignalUnlisten(11, 2)), Unlistened.class).was()).isFalse();
        assertThat(table().groupCount()).isZero();
        assertThat(publish("a.b").receiverCount()).isZero();
    }

    @Test
    void listeningAgainMovesAListenerWithoutDoublingIt() {
        replica.grantLease(1);
        listen(10, 1, "a.b", "");
        listen(10, 1, "a.*", "g");
        assertThat(table().listenerCount()).isOne();
        assertThat(table().listener(10)).isEqualTo(new ListenerView(10, 1, "a.*", "g"));
        assertThat(publish("a.c").receivers()).containsExactly(10);
    }

    @Test
    void aListenerThatTakesOverRemovesTheOneItReplacesAndTheGroupKeepsItsTurn() {
        replica.grantLease(1);
        replica.grantLease(2);
        listen(10, 1, "a.>", "g");
        listen(20, 2, "a.>", "g");
        assertThat(publish("a.b").receivers()).containsExactly(10);
        expect(replica.run(new SignalListen(11, 1, "a.>", "g", 10)), Listening.class);
        assertThat(table().listenersOf(1)).extracting(ListenerView::listenerId).containsExactly(11L);
        // The turn went on (not back to the first): the second of 11 and 20, then the first.
        assertThat(publish("a.b").receivers()).containsExactly(20);
        assertThat(publish("a.b").receivers()).containsExactly(11);
        // Another lease's listener is not replaced.
        expect(replica.run(new SignalListen(12, 1, "a.>", "", 20)), Listening.class);
        assertThat(table().listener(20)).isNotNull();
    }

    @Test
    void refusesBadInputNamingTheFieldAndChangesNothing() {
        replica.grantLease(1);
        replica.grantLease(2);
        listen(10, 1, "a.b", "");
        byte[] before = replica.snapshot();

        assertThat(expect(replica.run(new SignalListen(11, 1, "a.>.b", "", 0)), Rejected.class).message()).contains("pattern").contains("last");
        assertThat(expect(replica.run(new SignalListen(11, 1, "a..b", "", 0)), Rejected.class).message()).contains("pattern");
        assertThat(expect(replica.run(new SignalListen(0, 1, "a.b", "", 0)), Rejected.class).message()).contains("listener_id");
        assertThat(expect(replica.run(new SignalListen(11, 9, "a.b", "", 0)), Rejected.class).code()).isEqualTo(Code.NOT_FOUND);
        assertThat(expect(replica.run(new SignalListen(10, 2, "a.b", "", 0)), Rejected.class).code()).isEqualTo(Code.ALREADY_EXISTS);
        assertThat(expect(replica.run(new SignalUnlisten(10, 2)), Rejected.class).code()).isEqualTo(Code.FAILED_PRECONDITION);
        Rejected wildcard = expect(replica.run(new SignalPublish("a.*", new byte[0], 0)), Rejected.class);
        assertThat(wildcard.message()).contains("channel").contains("wildcard");
        assertThat(expect(replica.run(new SignalPublish("", new byte[0], 0)), Rejected.class).message()).isEqualTo("channel must not be empty");
        Rejected big = expect(replica.run(new SignalPublish("a.b", new byte[SignalTable.MAX_PAYLOAD_BYTES + 1], 0)), Rejected.class);
        assertThat(big.message()).contains("payload").contains("over the limit");

        assertThat(Replica.restore(replica.snapshot()).state.primitive(SignalTable.class).listeners(10))
                .isEqualTo(Replica.restore(before).state.primitive(SignalTable.class).listeners(10));
        assertThat(table().listenerCount()).isOne();
    }

    @Test
    void aLeaseHasAtMostItsShareOfListeners() {
        replica.grantLease(1);
        for (int i = 1; i <= SignalTable.MAX_LISTENERS_PER_LEASE; i++) {
            listen(i, 1, "a.b" + i, "");
        }
        Rejected refused = expect(replica.run(new SignalListen(5_000, 1, "a.c", "", 0)), Rejected.class);
        assertThat(refused.code()).isEqualTo(Code.FAILED_PRECONDITION);
        assertThat(refused.message()).contains(String.valueOf(SignalTable.MAX_LISTENERS_PER_LEASE));
    }

    @Test
    void listenersAndGroupTurnsSurviveASnapshot() {
        replica.grantLease(1);
        listen(1, 1, "x.>", "g");
        listen(2, 1, "x.>", "g");
        listen(3, 1, "x.>", "g");
        publish("x.y");
        expect(replica.run(new SignalPublish("x.y", new byte[0], 5)), Published.class);
        Replica restored = Replica.restore(replica.snapshot());

        assertThat(restored.snapshot()).isEqualTo(replica.snapshot());
        long next = expect(restored.run(new SignalPublish("x.y", new byte[0], 0)), Published.class).receivers()[0];
        assertThat(next).isEqualTo(publish("x.y").receivers()[0]).isEqualTo(3);
        assertThat(expect(restored.run(new SignalPublish("x.y", new byte[0], 5)), Published.class).retry()).isTrue();
    }

    @Test
    void aWatchMayNameEveryKindWithEventsButNotSignalsTransactionsOrMemberEndpoints() {
        assertThat(replica.state.watchedKinds()).contains("lock", "counter", "kv", "list")
                .doesNotContain(SignalTable.NAME, "txn", "member");
    }
}
