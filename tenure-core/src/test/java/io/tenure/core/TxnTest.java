package io.tenure.core;

import io.tenure.core.counter.CounterAdd;
import io.tenure.core.counter.CounterCompareAndSet;
import io.tenure.core.counter.CounterSet;
import io.tenure.core.counter.CounterTable;
import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.Command;
import io.tenure.core.kernel.LeaseGrant;
import io.tenure.core.kernel.Leases;
import io.tenure.core.kernel.Result;
import io.tenure.core.kernel.Result.Code;
import io.tenure.core.kernel.Result.Rejected;
import io.tenure.core.kernel.Transactional;
import io.tenure.core.kernel.Transactions;
import io.tenure.core.kernel.Txn;
import io.tenure.core.kernel.TxnCompare;
import io.tenure.core.kernel.TxnCompare.Relation;
import io.tenure.core.kernel.TxnCompare.Target;
import io.tenure.core.kernel.TxnResult;
import io.tenure.core.kv.KvCompareAndSet;
import io.tenure.core.kv.KvDelete;
import io.tenure.core.kv.KvPut;
import io.tenure.core.kv.KvTable;
import io.tenure.core.kv.KvView;
import io.tenure.core.watch.WatchEvent;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import static io.tenure.core.Replica.expect;
import static org.assertj.core.api.Assertions.assertThat;

/** Transactions over key-value and counters, case by case: the branches, all or nothing, bad input, retries, snapshots. */
class TxnTest {
    private final Replica replica = new Replica();

    private KvTable kv() {
        return replica.state.primitive(KvTable.class);
    }

    private CounterTable counters() {
        return replica.state.primitive(CounterTable.class);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static KvPut put(String key, String value) {
        return new KvPut(key, bytes(value), 0, 0, 0);
    }

    private static Txn txn(List<TxnCompare> compares, List<Command> success, List<Command> failure) {
        return new Txn(compares, success, failure, 0);
    }

    @Test
    void everyComparisonHoldsSoTheSuccessOperationsApplyAtOnePositionEachWithItsEvent() {
        long aRevision = expect(replica.run(put("a", "1")), io.tenure.core.kv.KvResult.Put.class).revision();
        replica.run(put("b", "old"));
        replica.run(new CounterSet("c", 5, 0));

        Applied applied = replica.apply(txn(
                List.of(TxnCompare.of("kv", "a", Target.MOD_REVISION, Relation.EQUAL, aRevision),
                        TxnCompare.of("counter", "c", Target.VALUE, Relation.GREATER, 3),
                        TxnCompare.ofValue("kv", "b", Relation.EQUAL, bytes("old"))),
                List.of(put("a", "2"), new KvDelete("b", KvDelete.ANY_REVISION, 0), new CounterAdd("c", 1, 0), new KvDelete("none", -1, 0)),
                List.of(put("failed", "x"))));

        TxnResult result = expect(applied.result(), TxnResult.class);
        assertThat(result.succeeded()).isTrue();
        assertThat(result.operations()).hasSize(4);
        TxnResult.Done putA = result.operations().get(0);
        assertThat(putA.previous()).as("the mod revision replaced").isEqualTo(aRevision);
        assertThat(putA.value()).as("the key's version").isEqualTo(2);
        assertThat(result.operations().get(1).changed()).isTrue();
        assertThat(result.operations().get(2).previous()).isEqualTo(5);
        assertThat(result.operations().get(2).value()).isEqualTo(6);
        assertThat(result.operations().get(3).changed()).as("an absent key is not deleted").isFalse();
        assertThat(result.operations().get(3).revision()).isZero();

        assertThat(new String(kv().get("a").value(), StandardCharsets.UTF_8)).isEqualTo("2");
        assertThat(kv().get("b")).isNull();
        assertThat(kv().get("failed")).isNull();
        assertThat(counters().value("c")).isEqualTo(6);

        List<WatchEvent> events = Replica.watched(applied);
        assertThat(events).extracting(WatchEvent::type).containsExactly(WatchEvent.Type.PUT, WatchEvent.Type.DELETE, WatchEvent.Type.PUT);
        assertThat(events).extracting(e -> e.kv().key()).containsExactly("a", "b", "c");
        assertThat(events.get(0).revision()).isEqualTo(replica.lastPosition()).isEqualTo(putA.revision());
        assertThat(events.get(1).revision()).isGreaterThan(events.get(0).revision());
        assertThat(events.get(2).revision()).isGreaterThan(events.get(1).revision()).isEqualTo(result.revision())
                .isEqualTo(replica.state.revision());

        // The next command's stamp goes on above the transaction's, though it shares its entry.
        Applied after = replica.applyInSameEntry(new CounterAdd("c", 1, 0));
        assertThat(Replica.watched(after).get(0).revision()).isGreaterThan(result.revision());
    }

    @Test
    void aComparisonThatFailsAppliesTheFailureOperations() {
        replica.run(put("a", "1"));
        TxnResult result = expect(replica.run(txn(
                List.of(TxnCompare.of("kv", "a", Target.VERSION, Relation.EQUAL, 1),
                        TxnCompare.of("kv", "absent", Target.CREATE_REVISION, Relation.NOT_EQUAL, 0)),
                List.of(put("a", "won")),
                List.of(new CounterSet("lost", 7, 0)))), TxnResult.class);

        assertThat(result.succeeded()).isFalse();
        assertThat(result.operations()).singleElement().satisfies(d -> assertThat(d.value()).isEqualTo(7));
        assertThat(new String(kv().get("a").value(), StandardCharsets.UTF_8)).isEqualTo("1");
        assertThat(counters().value("lost")).isEqualTo(7);
    }

    @Test
    void valuesCompareByteByByteAndAnAbsentKeysValueNeverHolds() {
        replica.run(put("v", "b"));
        assertThat(holds(TxnCompare.ofValue("kv", "v", Relation.LESS, bytes("c")))).isTrue();
        assertThat(holds(TxnCompare.ofValue("kv", "v", Relation.GREATER, new byte[] {(byte) 0xFF}))).as("unsigned").isFalse();
        assertThat(holds(TxnCompare.ofValue("kv", "v", Relation.NOT_EQUAL, bytes("b")))).isFalse();
        assertThat(holds(TxnCompare.ofValue("kv", "nothing", Relation.NOT_EQUAL, bytes("b")))).isFalse();
        assertThat(holds(TxnCompare.of("kv", "nothing", Target.MOD_REVISION, Relation.EQUAL, 0))).isTrue();
        assertThat(holds(TxnCompare.of("counter", "nothing", Target.VALUE, Relation.EQUAL, 0))).as("an absent counter reads 0").isTrue();
        assertThat(holds(TxnCompare.of("counter", "nothing", Target.VERSION, Relation.LESS, 1))).isTrue();
    }

    private boolean holds(TxnCompare compare) {
        return expect(replica.run(txn(List.of(compare), List.of(), List.of())), TxnResult.class).succeeded();
    }

    @Test
    void anOperationTheStateRefusesRefusesTheWholeTransactionAndNothingChanges() {
        replica.run(new CounterSet("c", Long.MAX_VALUE - 1, 0));
        replica.run(put("a", "1"));
        String before = everything();
        long revision = replica.state.revision();

        Applied overflow = replica.apply(txn(List.of(),
                List.of(put("a", "2"), new CounterAdd("c", 1, 0), new KvDelete("a", -1, 0), new CounterAdd("c", 1, 0)), List.of()));
        Rejected refused = expect(overflow.result(), Rejected.class);
        assertThat(refused.code()).isEqualTo(Code.FAILED_PRECONDITION);
        assertThat(refused.message()).as("the two adds are judged together").startsWith("success[3] (CounterAdd): counter 'c' is "
                + Long.MAX_VALUE + "; adding 1");
        assertThat(overflow.effects()).isEmpty();

        Rejected deadLease = expect(replica.run(txn(List.of(TxnCompare.of("kv", "a", Target.VERSION, Relation.GREATER, 5)),
                List.of(), List.of(put("a", "3"), new KvPut("b", bytes("x"), 99, 0, 0)))), Rejected.class);
        assertThat(deadLease.code()).isEqualTo(Code.NOT_FOUND);
        assertThat(deadLease.message()).startsWith("failure[1] (KvPut): ").contains("99");

        assertThat(everything()).isEqualTo(before);
        assertThat(replica.state.revision()).as("only the applied position moved").isGreaterThan(revision);
        assertThat(kv().get("a").modRevision()).isLessThan(revision + 1);
    }

    @Test
    void theKeyLimitCountsTheKeysTheOperationsBeforeCreateAndDelete() {
        Leases leases = new Leases();
        KvTable table = new KvTable(leases, 2);
        Transactional.Refusal refusal = table.admit(List.of(put("a", "1"), put("b", "1"), put("a", "2"), put("c", "1")));
        assertThat(refusal.index()).isEqualTo(3);
        assertThat(refusal.why().code()).isEqualTo(Code.FAILED_PRECONDITION);
        assertThat(refusal.why().message()).contains("limit of 2");
        assertThat(table.admit(List.of(put("a", "1"), put("b", "1"), new KvDelete("a", -1, 0), put("c", "1")))).isNull();
        assertThat(table.admit(List.of(new KvDelete("a", -1, 0), put("a", "1"), put("b", "1")))).as("deleting an absent key frees nothing")
                .isNull();
    }

    @Test
    void badInputIsRefusedNamingTheComparisonOrOperationAndItsField() {
        replica.run(put("a", "1"));
        String before = everything();
        TxnCompare good = TxnCompare.of("kv", "a", Target.VERSION, Relation.EQUAL, 1);
        List<Command> tooMany = new ArrayList<>(Collections.nCopies(Transactions.MAX_OPERATIONS + 1, put("a", "x")));

        assertRefused(txn(List.of(TxnCompare.of("lock", "a", Target.VALUE, Relation.EQUAL, 1)), List.of(), List.of()),
                "compare[0].kind must be one of [counter, kv], got 'lock'");
        assertRefused(txn(List.of(good, TxnCompare.of("kv", "", Target.VERSION, Relation.EQUAL, 1)), List.of(), List.of()),
                "compare[1].key must not be empty");
        assertRefused(txn(List.of(new TxnCompare("kv", "a", null, Relation.EQUAL, 1, null)), List.of(), List.of()),
                "compare[0].target must be one of [VALUE, MOD_REVISION, CREATE_REVISION, VERSION]");
        assertRefused(txn(List.of(new TxnCompare("kv", "a", Target.VERSION, null, 1, null)), List.of(), List.of()),
                "compare[0].relation must be one of [EQUAL, NOT_EQUAL, LESS, GREATER]");
        assertRefused(txn(List.of(TxnCompare.ofValue("kv", "a", Relation.EQUAL, null)), List.of(), List.of()),
                "compare[0]: value is required to compare a key's value");
        assertRefused(txn(List.of(TxnCompare.ofValue("kv", "a", Relation.EQUAL, new byte[KvTable.MAX_VALUE_BYTES + 1])), List.of(), List.of()),
                "compare[0]: value must be at most 65536 bytes");
        assertRefused(txn(List.of(TxnCompare.ofValue("counter", "c", Relation.EQUAL, bytes("1"))), List.of(), List.of()),
                "compare[0]: a counter is compared with a number, not bytes");
        assertRefused(txn(Collections.nCopies(Transactions.MAX_COMPARES + 1, good), List.of(), List.of()),
                "compare: at most 128 comparisons in a transaction, got 129");
        assertRefused(txn(List.of(), tooMany, List.of()), "success: at most 128 operations in a branch of a transaction, got 129");
        assertRefused(txn(List.of(), List.of(), tooMany), "failure: at most 128 operations");
        assertRefused(txn(List.of(good), List.of(put("a", "x")), List.of(new KvPut("b", new byte[KvTable.MAX_VALUE_BYTES + 1], 0, 0, 0))),
                "failure[0] (KvPut): value must be at most 65536 bytes, got 65537");
        assertRefused(txn(List.of(), List.of(put("a", "x"), new KvPut("b", null, 3, 1_000, 0)), List.of()),
                "success[1] (KvPut): lease_id and ttl_millis are exclusive");
        assertRefused(txn(List.of(), List.of(new KvDelete("a", 5, 0)), List.of()),
                "success[0] (KvDelete): expected_mod_revision must be -1 in a transaction, got 5");
        assertRefused(txn(List.of(), List.of(new KvCompareAndSet("a", 0, null, bytes("x"), 0, 0, 0)), List.of()),
                "success[0] (KvCompareAndSet): a key-value KvCompareAndSet cannot be part of a transaction");
        assertRefused(txn(List.of(), List.of(new CounterCompareAndSet("c", 0, 1, 0)), List.of()),
                "success[0] (CounterCompareAndSet): a counter CounterCompareAndSet cannot be part of a transaction");
        assertRefused(txn(List.of(), List.of(new CounterAdd("", 1, 0)), List.of()), "success[0] (CounterAdd): name must not be empty");
        assertRefused(txn(List.of(), List.of(new CounterAdd("c", 1, 12)), List.of()),
                "success[0] (CounterAdd): request_id must be 0 inside a transaction");
        assertRefused(txn(List.of(), List.of(new LeaseGrant(1, 10_000, "x")), List.of()),
                "success[0]: a LeaseGrant cannot be part of a transaction (only operations of [counter, kv])");
        assertRefused(txn(List.of(), List.of(txn(List.of(), List.of(), List.of())), List.of()),
                "success[0]: a transaction cannot contain a transaction");

        assertThat(everything()).isEqualTo(before);
        assertThat(replica.state.checkTransaction(txn(List.of(), List.of(new CounterAdd("c", 1, 12)), List.of())))
                .as("the front ends' check is apply's").startsWith("success[0] (CounterAdd): request_id");
        assertThat(replica.state.checkTransaction(txn(List.of(good), List.of(put("a", "x")), List.of()))).isNull();
    }

    private void assertRefused(Txn txn, String message) {
        Applied applied = replica.apply(txn);
        Rejected rejected = expect(applied.result(), Rejected.class);
        assertThat(rejected.code()).isEqualTo(Code.INVALID_ARGUMENT);
        assertThat(rejected.message()).startsWith(message);
        assertThat(applied.effects()).isEmpty();
    }

    @Test
    void aRetryIsAnsweredAsTheFirstCopyAndAppliedOnceAlsoAfterASnapshot() {
        Txn increment = new Txn(List.of(TxnCompare.of("counter", "c", Target.VALUE, Relation.LESS, 10)),
                List.of(new CounterAdd("c", 1, 0), put("k", "v")), List.of(), 41);
        TxnResult first = expect(replica.run(increment), TxnResult.class);
        replica.run(new CounterAdd("c", 1, 0));

        Applied retried = replica.apply(increment);
        assertThat(retried.result()).isEqualTo(first);
        assertThat(retried.effects()).as("a retry changes nothing").isEmpty();
        assertThat(counters().value("c")).isEqualTo(2);

        byte[] snapshot = replica.snapshot();
        Replica restored = Replica.restore(snapshot);
        assertThat(restored.snapshot()).as("equal bytes").isEqualTo(snapshot);
        assertThat(restored.run(increment)).isEqualTo(first);
        assertThat(restored.state.primitive(CounterTable.class).value("c")).isEqualTo(2);
        assertThat(expect(restored.run(new Txn(increment.compares(), increment.success(), List.of(), 42)), TxnResult.class).succeeded())
                .as("another request id is another transaction").isTrue();
        assertThat(restored.state.primitive(CounterTable.class).value("c")).isEqualTo(3);
        TxnResult other = expect(restored.run(new Txn(increment.compares(), List.of(new CounterAdd("c", 10, 0)), List.of(), 41)),
                TxnResult.class);
        assertThat(other).as("another transaction that carries a remembered request id is applied as a new one").isNotEqualTo(first);
        assertThat(restored.state.primitive(CounterTable.class).value("c")).isEqualTo(13);
    }

    @Test
    void aRefusedTransactionIsNotRememberedAndItsRetryIsJudgedAfresh() {
        replica.run(new CounterSet("c", Long.MAX_VALUE, 0));
        Txn add = new Txn(List.of(), List.of(new CounterAdd("c", 1, 0)), List.of(), 7);
        assertThat(replica.run(add)).isInstanceOf(Rejected.class);
        replica.run(new CounterSet("c", 0, 0));
        assertThat(expect(replica.run(add), TxnResult.class).operations().get(0).value()).isEqualTo(1);
    }

    @Test
    void aCounterSetToZeroByATransactionIsIdleAsAnyOther() {
        replica.run(new CounterSet("c", 3, 0));
        replica.run(txn(List.of(), List.of(new CounterAdd("c", -3, 0)), List.of()));
        assertThat(counters().counter("c").idleSince()).isEqualTo(replica.lastPosition());
        Result put = replica.run(txn(List.of(), List.of(put("c", "a key may share a counter's name")), List.of()));
        assertThat(put).isInstanceOf(TxnResult.class);
    }

    /** The keys and counters as readers see them. */
    private String everything() {
        List<KvView> keys = kv().page("", "", 1000).entries();
        return Rendering.of(keys) + " " + Rendering.of(counters().counters("", 1000));
    }
}
