package io.tenure.core;

import io.tenure.core.counter.CounterAdd;
import io.tenure.core.counter.CounterCompareAndSet;
import io.tenure.core.counter.CounterResult.Changed;
import io.tenure.core.counter.CounterResult.CompareFailed;
import io.tenure.core.counter.CounterSet;
import io.tenure.core.counter.CounterTable;
import io.tenure.core.counter.CounterView;
import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.IdleForget;
import io.tenure.core.kernel.IdleName;
import io.tenure.core.kernel.Result;
import io.tenure.core.kernel.Result.Code;
import io.tenure.core.kernel.Result.Rejected;
import io.tenure.core.lock.LockAcquire;
import io.tenure.core.semaphore.SemaphoreAcquire;
import io.tenure.core.semaphore.SemaphoreRelease;
import io.tenure.core.semaphore.SemaphoreResult;
import io.tenure.core.watch.WatchEvent;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static io.tenure.core.Replica.expect;
import static org.assertj.core.api.Assertions.assertThat;

/** Counters, case by case: changes and their revisions, retries, overflow, the namespace, idle counters at 0, bad input. */
class CounterTest {
    private final Replica replica = new Replica();

    private CounterTable table() {
        return replica.state.primitive(CounterTable.class);
    }

    @Test
    void aCounterComesIntoBeingAtItsFirstChangeAndCountsItsVersions() {
        assertThat(table().value("jobs/seq")).isZero();
        assertThat(table().counter("jobs/seq")).isNull();

        Applied first = replica.apply(new CounterAdd("jobs/seq", 5, 0));
        Changed added = expect(first.result(), Changed.class);
        assertThat(added.previous()).isZero();
        assertThat(added.value()).isEqualTo(5);
        assertThat(Replica.watched(first)).singleElement().satisfies(e -> {
            assertThat(e.type()).isEqualTo(WatchEvent.Type.PUT);
            assertThat(new String(e.kv().metadata(), StandardCharsets.US_ASCII)).isEqualTo("5");
            assertThat(e.kv().version()).isOne();
        });
        Changed down = expect(replica.run(new CounterAdd("jobs/seq", -7, 0)), Changed.class);
        assertThat(down.value()).isEqualTo(-2);
        Changed set = expect(replica.run(new CounterSet("jobs/seq", 40, 0)), Changed.class);
        assertThat(set.previous()).isEqualTo(-2);

        CounterView view = table().counter("jobs/seq");
        assertThat(view.value()).isEqualTo(40);
        assertThat(view.version()).isEqualTo(3);
        assertThat(view.createRevision()).isEqualTo(added.revision());
        assertThat(view.modRevision()).isEqualTo(set.revision()).isGreaterThan(down.revision()).isGreaterThan(added.revision());
        assertThat(view.idleSince()).isZero();
    }

    @Test
    void aCompareAndSetChangesOnlyTheExpectedValueAndAnAbsentCounterIsZero() {
        assertThat(expect(replica.run(new CounterCompareAndSet("c", 0, 10, 0)), Changed.class).value()).isEqualTo(10);
        CompareFailed failed = expect(replica.run(new CounterCompareAndSet("c", 0, 99, 0)), CompareFailed.class);
        assertThat(failed.value()).isEqualTo(10);
        assertThat(table().value("c")).isEqualTo(10);
        assertThat(table().counter("c").version()).as("a failed compare changes nothing").isOne();
        assertThat(expect(replica.run(new CounterCompareAndSet("c", 10, 11, 0)), Changed.class).previous()).isEqualTo(10);
    }

    @Test
    void anIncrementRetriedWithItsRequestIdIsAppliedOnceAndAnsweredAsTheFirstCopy() {
        Changed first = expect(replica.run(new CounterAdd("c", 1, 77)), Changed.class);
        replica.run(new CounterAdd("c", 1, 78));
        Result retry = replica.run(new CounterAdd("c", 1, 77));
        assertThat(retry).isEqualTo(first);
        assertThat(table().value("c")).isEqualTo(2);
        // A compare-and-set that failed is answered as failed on its retry, though it would succeed now.
        CompareFailed failed = expect(replica.run(new CounterCompareAndSet("c", 5, 6, 79)), CompareFailed.class);
        replica.run(new CounterSet("c", 5, 80));
        assertThat(replica.run(new CounterCompareAndSet("c", 5, 6, 79))).isEqualTo(failed);
        assertThat(table().value("c")).isEqualTo(5);
        // The memo is state: a restored replica answers a retry the same way.
        Replica restored = Replica.restore(replica.snapshot());
        assertThat(restored.run(new CounterAdd("c", 1, 77))).isEqualTo(first);
        assertThat(restored.state.primitive(CounterTable.class).value("c")).isEqualTo(5);
    }

    @Test
    void anOverflowIsRefusedNamingTheValueAndChangesNothing() {
        replica.run(new CounterSet("big", Long.MAX_VALUE - 1, 0));
        Rejected over = expect(replica.run(new CounterAdd("big", 2, 0)), Rejected.class);
        assertThat(over.code()).isEqualTo(Code.FAILED_PRECONDITION);
        assertThat(over.message()).contains("'big' is " + (Long.MAX_VALUE - 1)).contains("adding 2").contains("signed 64-bit");
        replica.run(new CounterSet("small", Long.MIN_VALUE, 0));
        assertThat(expect(replica.run(new CounterAdd("small", -1, 0)), Rejected.class).code()).isEqualTo(Code.FAILED_PRECONDITION);
        assertThat(table().value("big")).isEqualTo(Long.MAX_VALUE - 1);
        assertThat(table().counter("big").version()).isOne();
        assertThat(expect(replica.run(new CounterAdd("big", 1, 0)), Changed.class).value()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void badNamesAreRefusedNamingTheField() {
        Rejected empty = expect(replica.run(new CounterAdd("", 1, 0)), Rejected.class);
        assertThat(empty.code()).isEqualTo(Code.INVALID_ARGUMENT);
        assertThat(empty.message()).contains("name");
        Rejected tooLong = expect(replica.run(new CounterSet("x".repeat(Limits.MAX_KEY_BYTES + 1), 1, 0)), Rejected.class);
        assertThat(tooLong.message()).contains("name");
        assertThat(table().counterCount()).isZero();
    }

    @Test
    void countersHaveANamespaceOfTheirOwn() {
        replica.grantLease(1);
        expect(replica.run(new LockAcquire("shared", 1, null, false)), io.tenure.core.lock.LockResult.Granted.class);
        assertThat(expect(replica.run(new CounterAdd("shared", 3, 0)), Changed.class).value()).isEqualTo(3);
        assertThat(replica.lock("shared")).isNotNull();
    }

    @Test
    void aCounterAtZeroIsIdleAndForgottenWhileOneThatIsNotZeroNeverIs() {
        replica.run(new CounterAdd("c", 2, 0));
        replica.run(new CounterAdd("keep", 1, 0));
        replica.run(new CounterAdd("c", -2, 0));
        long since = table().counter("c").idleSince();
        assertThat(since).as("idle from the change that brought it to 0").isEqualTo(replica.lastPosition());
        assertThat(replica.state.idleAfter(0, 10)).containsExactly(new IdleName(CounterTable.NAME, "c", since));

        // Used again (and back to 0) in between: the old idle mark no longer stands.
        replica.run(new CounterAdd("c", 1, 0));
        assertThat(table().counter("c").idleSince()).isZero();
        replica.run(new CounterSet("c", 0, 0));
        Result.Forgotten stale = expect(replica.run(new IdleForget(List.of(new IdleName(CounterTable.NAME, "c", since)))),
                Result.Forgotten.class);
        assertThat(stale.forgotten()).isZero();
        assertThat(table().counter("c")).isNotNull();

        long now = table().counter("c").idleSince();
        // Restored from a snapshot, it is idle still, since the same position.
        assertThat(Replica.restore(replica.snapshot()).state.primitive(CounterTable.class).counter("c").idleSince()).isEqualTo(now);
        Result.Forgotten forgotten = expect(replica.run(new IdleForget(List.of(new IdleName(CounterTable.NAME, "c", now)))),
                Result.Forgotten.class);
        assertThat(forgotten.forgotten()).isOne();
        assertThat(table().counter("c")).isNull();
        assertThat(table().value("c")).isZero();
        assertThat(replica.state.idleCount()).isZero();
        assertThat(table().counter("keep").value()).isOne();
        assertThat(expect(replica.run(new CounterAdd("c", 4, 0)), Changed.class).previous()).as("starts again from 0").isZero();
    }

    @Test
    void anIdleCounterAndAnIdleSemaphoreOfTheSameNameAreForgottenApart() {
        replica.grantLease(1);
        SemaphoreResult.Granted permit = expect(replica.run(new SemaphoreAcquire("x", 1, 2, 1, false, 0)), SemaphoreResult.Granted.class);
        replica.run(new SemaphoreRelease("x", 1, permit.fencingToken()));
        replica.run(new CounterSet("x", 0, 0));
        List<IdleName> idle = replica.state.idleAfter(0, 10);
        assertThat(idle).extracting(IdleName::kind).containsExactlyInAnyOrder("semaphore", CounterTable.NAME);

        IdleName counter = idle.stream().filter(n -> n.kind().equals(CounterTable.NAME)).findFirst().orElseThrow();
        assertThat(expect(replica.run(new IdleForget(List.of(counter))), Result.Forgotten.class).forgotten()).isOne();
        assertThat(table().counter("x")).isNull();
        assertThat(replica.state.idleAfter(0, 10)).extracting(IdleName::kind).containsExactly("semaphore");
    }
}
