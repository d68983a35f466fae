package io.tenure.core;

import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.Result.Code;
import io.tenure.core.kernel.Result.Rejected;
import io.tenure.core.lock.LockAcquire;
import io.tenure.core.lock.LockCancel;
import io.tenure.core.lock.LockDowngrade;
import io.tenure.core.lock.LockRelease;
import io.tenure.core.lock.LockResult.Busy;
import io.tenure.core.lock.LockResult.Downgraded;
import io.tenure.core.lock.LockResult.Granted;
import io.tenure.core.lock.LockResult.Queued;
import io.tenure.core.lock.LockResult.Released;
import io.tenure.core.lock.LockTable;
import io.tenure.core.lock.LockView;
import io.tenure.core.watch.WatchEvent;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.List;

import static io.tenure.core.Replica.expect;
import static org.assertj.core.api.Assertions.assertThat;

/** The read/write lock's rules, one scenario each; {@link ReadWriteLockModelTest} explores their combinations. */
class ReadWriteLockTest {
    private final Replica replica = new Replica();

    @BeforeEach
    void leases() {
        for (long id = 1; id <= 6; id++) {
            replica.grantLease(id);
        }
    }

    private Applied read(String name, long lease) {
        return replica.apply(new LockAcquire(name, lease, null, true, 0, true));
    }

    private Applied write(String name, long lease) {
        return replica.apply(new LockAcquire(name, lease, null, true, 0, false));
    }

    private LockView view(String name) {
        return replica.state.primitive(LockTable.class).lock(name);
    }

    @Test
    void readersShareTheLockEachWithItsOwnToken() {
        Granted a = expect(read("rw", 1).result(), Granted.class);
        Applied second = read("rw", 2);
        Granted b = expect(second.result(), Granted.class);

        assertThat(b.fencingToken()).isGreaterThan(a.fencingToken());
        assertThat(view("rw").shared()).isTrue();
        assertThat(view("rw").holders()).extracting(LockView.Holder::leaseId).containsExactly(1L, 2L);
        assertThat(view("rw").leaseId()).as("the first holder in grant order").isEqualTo(1);
        List<WatchEvent> events = Replica.watched(second);
        assertThat(events).singleElement().satisfies(e -> {
            assertThat(e.type()).isEqualTo(WatchEvent.Type.PUT);
            assertThat(e.kv().leaseId()).isEqualTo(2);
            assertThat(e.revision()).isEqualTo(b.fencingToken());
        });
    }

    @Test
    void aQueuedWriterHoldsBackReadersThatComeAfterIt() {
        read("rw", 1);
        expect(write("rw", 2).result(), Queued.class);
        Queued later = expect(read("rw", 3).result(), Queued.class);
        Busy tried = expect(replica.run(new LockAcquire("rw", 4, null, false, 0, true)), Busy.class);

        assertThat(later.ahead()).isEqualTo(1);
        assertThat(tried.waiters()).isEqualTo(2);
        assertThat(view("rw").holders()).extracting(LockView.Holder::leaseId).containsExactly(1L);
        assertThat(view("rw").waiters()).extracting(LockView.Waiter::leaseId, LockView.Waiter::shared)
                .containsExactly(org.assertj.core.api.Assertions.tuple(2L, false), org.assertj.core.api.Assertions.tuple(3L, true));
    }

    @Test
    void aWriterGetsATokenAboveEveryReadersAndHandsOverToTheReadersBehindIt() {
        long reader = expect(read("rw", 1).result(), Granted.class).fencingToken();
        long reader2 = expect(read("rw", 2).result(), Granted.class).fencingToken();
        write("rw", 3);
        read("rw", 4);
        read("rw", 5);
        write("rw", 6);

        replica.run(new LockRelease("rw", 1, reader));
        Applied lastReaderGone = replica.apply(new LockRelease("rw", 2, reader2));
        Granted writer = Replica.grantsToWaiters(lastReaderGone).get(0);
        assertThat(writer.leaseId()).isEqualTo(3);
        assertThat(writer.fencingToken()).isGreaterThan(reader2).isGreaterThan(reader);
        assertThat(expect(lastReaderGone.result(), Released.class).nextFencingToken()).isEqualTo(writer.fencingToken());

        Applied writerGone = replica.apply(new LockRelease("rw", 3, writer.fencingToken()));
        assertThat(Replica.grantsToWaiters(writerGone)).extracting(Granted::leaseId).as("both readers, not the writer behind them")
                .containsExactly(4L, 5L);
        assertThat(view("rw").shared()).isTrue();
        assertThat(view("rw").waiters()).extracting(LockView.Waiter::leaseId).containsExactly(6L);
    }

    @Test
    void aWriterDowngradesWithoutLettingGoAndTheReadersBehindItJoin() {
        Granted writer = expect(write("rw", 1).result(), Granted.class);
        read("rw", 2);
        read("rw", 3);
        write("rw", 4);
        read("rw", 5);

        Applied downgrade = replica.apply(new LockDowngrade("rw", 1, writer.fencingToken()));

        Downgraded done = expect(downgrade.result(), Downgraded.class);
        assertThat(done.fencingToken()).as("the same grant").isEqualTo(writer.fencingToken());
        assertThat(done.readersGranted()).isEqualTo(2);
        assertThat(Replica.grantsToWaiters(downgrade)).extracting(Granted::leaseId).containsExactly(2L, 3L);
        assertThat(view("rw").holders()).extracting(LockView.Holder::leaseId, LockView.Holder::fencingToken)
                .startsWith(org.assertj.core.api.Assertions.tuple(1L, writer.fencingToken()));
        assertThat(view("rw").waiters()).extracting(LockView.Waiter::leaseId).containsExactly(4L, 5L);
        assertThat(expect(replica.run(new LockDowngrade("rw", 1, writer.fencingToken())), Downgraded.class).readersGranted())
                .as("a retried downgrade").isZero();
        assertThat(expect(read("rw", 1).result(), Granted.class).again()).isTrue();
    }

    @Test
    void aReaderAskingForWriteIsRefusedNotUpgraded() {
        read("rw", 1);
        read("rw", 2);

        Rejected upgrade = expect(write("rw", 1).result(), Rejected.class);

        assertThat(upgrade.code()).isEqualTo(Code.FAILED_PRECONDITION);
        assertThat(upgrade.message()).contains("lease 1", "read mode", "cannot upgrade");
        assertThat(view("rw").holders()).hasSize(2);
        assertThat(view("rw").waiters()).isEmpty();
    }

    @Test
    void aWriterAskingForReadIsToldToDowngradeAndAWaitKeepsItsMode() {
        Granted writer = expect(write("rw", 1).result(), Granted.class);
        read("rw", 2);

        Rejected asRead = expect(read("rw", 1).result(), Rejected.class);
        Rejected otherMode = expect(write("rw", 2).result(), Rejected.class);

        assertThat(asRead.message()).contains("write mode", "downgrade");
        assertThat(otherMode.code()).isEqualTo(Code.FAILED_PRECONDITION);
        assertThat(otherMode.message()).contains("waits for lock 'rw' in read mode, not write mode");
        assertThat(view("rw").leaseId()).isEqualTo(1);
        assertThat(view("rw").fencingToken()).isEqualTo(writer.fencingToken());
    }

    @Test
    void aDowngradeByAReaderOrWithAStaleTokenIsRefused() {
        Granted reader = expect(read("rw", 1).result(), Granted.class);

        Rejected stale = expect(replica.run(new LockDowngrade("rw", 1, reader.fencingToken() + 1)), Rejected.class);
        Rejected stranger = expect(replica.run(new LockDowngrade("rw", 2, reader.fencingToken())), Rejected.class);
        Rejected gone = expect(replica.run(new LockDowngrade("rw", 99, reader.fencingToken())), Rejected.class);

        assertThat(stale.message()).contains("stale");
        assertThat(stranger.code()).isEqualTo(Code.FAILED_PRECONDITION);
        assertThat(gone.code()).isEqualTo(Code.NOT_FOUND);
    }

    @Test
    void aWithdrawnWriterLetsTheReadersBehindItIn() {
        read("rw", 1);
        write("rw", 2);
        read("rw", 3);

        Applied cancel = replica.apply(new LockCancel("rw", 2, 0));

        assertThat(Replica.grantsToWaiters(cancel)).extracting(Granted::leaseId).containsExactly(3L);
        assertThat(view("rw").holders()).extracting(LockView.Holder::leaseId).containsExactly(1L, 3L);
    }

    @Test
    void aWaitingWriterWhoseLeaseEndsLetsTheReadersBehindItIn() {
        read("rw", 1);
        write("rw", 2);
        read("rw", 3);

        replica.revoke(2);

        assertThat(view("rw").holders()).extracting(LockView.Holder::leaseId).containsExactly(1L, 3L);
    }

    @Test
    void aSnapshotKeepsTheModesOfHoldersAndWaiters() {
        read("rw", 1);
        read("rw", 2);
        write("rw", 3);
        read("rw", 4);

        Replica restored = Replica.restore(replica.snapshot());

        LockView view = restored.state.primitive(LockTable.class).lock("rw");
        assertThat(view.shared()).isTrue();
        assertThat(view.holders()).hasSize(2);
        assertThat(view.waiters()).extracting(LockView.Waiter::shared).containsExactly(false, true);
        assertThat(restored.snapshot()).isEqualTo(replica.snapshot());
    }
}
