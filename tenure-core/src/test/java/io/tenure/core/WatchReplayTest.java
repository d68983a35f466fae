package io.tenure.core;

import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.LeaseGrant;
import io.tenure.core.kernel.LeaseRevoke;
import io.tenure.core.lock.LockResult;
import io.tenure.core.lock.LockAcquire;
import io.tenure.core.lock.LockRelease;
import io.tenure.core.watch.WatchEvent;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.util.ArrayList;
import java.util.List;

import static io.tenure.core.Replica.watched;
import static org.assertj.core.api.Assertions.assertThat;

/** The state's event log as watches see it: what apply announced is what replay delivers (I10). */
class WatchReplayTest {

    @Test
    void replayDeliversExactlyTheEventsApplyAnnouncedInOrder() {
        List<WatchEvent> announced = new ArrayList<>();
        Replica fresh = new Replica();
        fresh.grantLease(1);
        fresh.grantLease(2);
        announced.addAll(watched(fresh.apply(new LockAcquire("a", 1, null, false))));
        announced.addAll(watched(fresh.apply(new LockAcquire("a", 2, null, true))));
        announced.addAll(watched(fresh.apply(new LockAcquire("b", 2, null, false))));
        announced.addAll(watched(fresh.apply(new LockRelease("a", 1, fresh.lock("a").fencingToken()))));
        announced.addAll(watched(fresh.apply(new LeaseRevoke(2))));

        List<WatchEvent> replayed = new ArrayList<>();
        assertThat(fresh.state.events().replay(1, key -> true, replayed::add)).isTrue();

        assertThat(replayed).containsExactlyElementsOf(announced);
        assertThat(replayed).extracting(WatchEvent::key).containsExactly("a", "b", "a", "a", "b");
        assertThat(replayed).extracting(WatchEvent::type).containsExactly(
                WatchEvent.Type.PUT, WatchEvent.Type.PUT, WatchEvent.Type.PUT, WatchEvent.Type.DELETE, WatchEvent.Type.DELETE);
    }

    @Test
    void aSmallLogCompactsAndReportsItsHorizon() {
        TenureState state = new TenureState(4);
        state.apply(Replica.position(1, 0), new LeaseGrant(1, 5_000, "c"));
        List<Long> revisions = new ArrayList<>();
        long index = 2;
        for (int i = 0; i < 5; i++) {
            Applied acquired = state.apply(Replica.position(index++, 0), new LockAcquire("k", 1, null, false));
            long token = ((LockResult.Granted) acquired.result()).fencingToken();
            revisions.add(token);
            state.apply(Replica.position(index++, 0), new LockRelease("k", 1, token));
            revisions.add(Replica.position(index - 1, 0));
        }

        assertThat(state.events().size()).isEqualTo(4);
        long horizon = state.events().horizon();
        assertThat(horizon).isEqualTo(revisions.get(revisions.size() - 5) + 1);
        assertThat(state.events().replay(horizon - 1, key -> true, e -> { })).isFalse();
        List<Long> replayed = new ArrayList<>();
        assertThat(state.events().replay(horizon, key -> true, e -> replayed.add(e.revision()))).isTrue();
        assertThat(replayed).containsExactlyElementsOf(revisions.subList(revisions.size() - 4, revisions.size()));
    }

    @Test
    void afterRestoreWatchesMayStartOnlyAfterTheSnapshotRevision() throws Exception {
        Replica original = SnapshotTest.richState();
        byte[] snapshot = original.snapshot();
        long revision = original.state.revision();

        TenureState restored = TenureState.readSnapshot(new ByteArrayInputStream(snapshot), 32);

        assertThat(restored.events().horizon()).isEqualTo(revision + 1);
        assertThat(restored.events().size()).isZero();
        assertThat(restored.events().capacity()).isEqualTo(32);
        assertThat(restored.events().replay(revision, key -> true, e -> { }))
                .as("events up to the snapshot were not kept: a watch from there must be told").isFalse();
        assertThat(restored.events().replay(revision + 1, key -> true, e -> { })).isTrue();

        // The next event is past the horizon, so a watch from the horizon sees it.
        Applied applied = restored.apply(Replica.position((restored.appliedPosition() >>> 16) + 1, 0),
                new LockAcquire("after-restore", 1, null, false));
        List<WatchEvent> replayed = new ArrayList<>();
        restored.events().replay(revision + 1, key -> true, replayed::add);
        assertThat(replayed).containsExactlyElementsOf(watched(applied)).hasSize(1);
    }
}
