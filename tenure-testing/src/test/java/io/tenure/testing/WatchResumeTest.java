package io.tenure.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenure.client.Lease;
import io.tenure.client.LockHandle;
import io.tenure.client.TenureClient;
import io.tenure.client.TenureException;
import io.tenure.client.Watch;
import io.tenure.client.WatchEvent;
import io.tenure.client.WatchListener;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Watches against real members (I10): a prefix watch whose member is stopped mid-stream continues
 * on another member and delivers every change exactly once, in revision order; a watch from an
 * old revision replays what the member retains and goes on live.
 */
class WatchResumeTest {
    /** Generous: two cores shared with other builds, and a leader election in the middle. */
    private static final Duration DEADLINE = Duration.ofSeconds(60);

    @Test
    void aPrefixWatchOutlivesItsMemberWithoutGapOrDuplicate() throws Exception {
        try (TenureCluster cluster = TenureCluster.start(3)) {
            // The watch starts on the leader, which is stopped in the middle: the hardest member to lose.
            int victim = cluster.leader();
            List<String> victimFirst = new ArrayList<>();
            List<String> victimLast = new ArrayList<>();
            victimFirst.add(cluster.endpoint(victim));
            for (int i = 0; i < cluster.size(); i++) {
                if (i != victim) {
                    victimFirst.add(cluster.endpoint(i));
                    victimLast.add(cluster.endpoint(i));
                }
            }
            victimLast.add(cluster.endpoint(victim));
            Writer writer = new Writer(cluster.newClient(victimLast), cluster.minTtl().multipliedBy(2));
            TenureClient watching = cluster.newClient(victimFirst);
            Recorder recorder = new Recorder();

            Watch watch = watching.watchPrefix("jobs/", 1, recorder);
            writer.rounds(2);
            int beforeStop = writer.expected.size();
            assertMatches(recorder.awaitEvents(beforeStop), writer.expected);
            assertThat(cluster.server(victim).member().watches().watcherCount())
                    .as("the watch is served by the member about to stop").isEqualTo(1);

            cluster.stop(victim);
            writer.rounds(2);
            writer.grant("jobs/z", writer.first); // the last change: anything repeated would come before it

            List<WatchEvent> afterStop = recorder.awaitEvents(writer.expected.size() - beforeStop);
            assertMatches(afterStop, writer.expected.subList(beforeStop, writer.expected.size()));
            assertThat(watch.lastRevision()).isEqualTo(writer.expected.get(writer.expected.size() - 1).token());
            assertThat(watch.isOpen()).isTrue();
            int watchers = 0;
            for (int i = 0; i < cluster.size(); i++) {
                watchers += cluster.isRunning(i) ? cluster.server(i).member().watches().watcherCount() : 0;
            }
            assertThat(watchers).as("the watch moved to one of the running members").isEqualTo(1);
            recorder.assertNoOtherCall();
        }
    }

    @Test
    void aWatchFromAnOldRevisionReplaysWhatTheMemberRetainsThenGoesOnLive() throws Exception {
        try (TenureCluster cluster = TenureCluster.start(1)) {
            TenureClient client = cluster.newClient();
            Writer writer = new Writer(client, Duration.ofSeconds(10));
            writer.rounds(2);
            List<Expected> before = List.copyOf(writer.expected);
            long latest = before.stream().mapToLong(Expected::token).max().orElseThrow(); // below the last release

            Recorder everything = new Recorder();
            Watch replay = client.watchPrefix("jobs/", 1, everything);
            assertThat(replay.started().get(DEADLINE.toSeconds(), TimeUnit.SECONDS)).isGreaterThan(latest);
            assertMatches(everything.awaitEvents(before.size()), before);

            // From the middle: the second grant of jobs/a on, of that key only.
            int secondGrantOfA = indexOfPut(before, "jobs/a", 1);
            Recorder fromMiddle = new Recorder();
            client.watch("jobs/a", before.get(secondGrantOfA).token(), fromMiddle);
            List<Expected> ofA = before.subList(secondGrantOfA, before.size()).stream()
                    .filter(e -> e.key().equals("jobs/a")).toList();
            assertMatches(fromMiddle.awaitEvents(ofA.size()), ofA);

            // From the next change: nothing of the past, everything after the revision it started at.
            Recorder fromNow = new Recorder();
            Watch live = client.watchPrefix("jobs/", 0, fromNow);
            long startedAt = live.started().get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
            assertThat(startedAt).isGreaterThan(latest);

            writer.rounds(1);
            List<Expected> after = writer.expected.subList(before.size(), writer.expected.size());
            assertMatches(everything.awaitEvents(after.size()), after);
            assertMatches(fromNow.awaitEvents(after.size()), after);
            List<Expected> laterOfA = after.stream().filter(e -> e.key().equals("jobs/a")).toList();
            assertMatches(fromMiddle.awaitEvents(laterOfA.size()), laterOfA);
            assertThat(fromNow.events.get(0).revision()).isGreaterThan(startedAt);
            everything.assertNoOtherCall();
            fromMiddle.assertNoOtherCall();
            fromNow.assertNoOtherCall();
        }
    }

    @Test
    void aStartOlderThanWhatTheMemberRetainsEndsTheWatchWithTheCompactRevision() throws Exception {
        try (TenureCluster cluster = TenureCluster.builder().members(1).snapshotEvery(100).start()) {
            TenureClient client = cluster.newClient();
            // 112 changes, one log entry each, written one after the other: the member snapshots
            // once 100 entries are applied, before it applies the next, so before the last writes return.
            new Writer(client, Duration.ofSeconds(10)).rounds(14);
            cluster.restart(0); // loads the snapshot: its event log starts after it

            Recorder tooOld = new Recorder();
            Watch watch = client.watchPrefix("jobs/", 1, tooOld);
            long horizon = tooOld.awaitCompaction();
            assertThat(horizon).isGreaterThan(1);
            assertThat(watch.isOpen()).isFalse();
            tooOld.assertNoOtherCall();

            // The recipe: read the state at R, then watch from R + 1.
            long r = client.status().getRevision();
            assertThat(r).isGreaterThanOrEqualTo(horizon - 1);
            Recorder fresh = new Recorder();
            client.watchPrefix("jobs/", r + 1, fresh);
            Writer writer = new Writer(client, Duration.ofSeconds(10));
            writer.rounds(1);
            assertMatches(fresh.awaitEvents(writer.expected.size()), writer.expected);
            fresh.assertNoOtherCall();
        }
    }

    /** What the writer did, in order: a grant (PUT, its token) or a release (DELETE of the grant with that token). */
    private record Expected(WatchEvent.Type type, String key, long token, String holder) {}

    /**
     * Grants and releases on a few keys, by two leases, one call at a time: the order of its
     * calls is the revision order of their events.
     */
    private static final class Writer {
        final TenureClient client;
        final Lease first;
        final Lease second;
        final List<Expected> expected = new ArrayList<>();
        final Map<String, LockHandle> held = new HashMap<>();

        Writer(TenureClient client, Duration ttl) {
            this.client = client;
            this.first = client.grantLease(ttl, "writer-1");
            this.second = client.grantLease(ttl, "writer-2");
        }

        /** Eight changes per round, every key free again at the end. */
        void rounds(int count) {
            for (int i = 0; i < count; i++) {
                grant("jobs/a", first);
                grant("jobs/b", second);
                release("jobs/a");
                grant("jobs/c", first);
                release("jobs/b");
                grant("jobs/a", second);
                release("jobs/c");
                release("jobs/a");
            }
        }

        void grant(String key, Lease lease) {
            LockHandle handle = client.acquire(key, lease, Duration.ZERO, null);
            held.put(key, handle);
            expected.add(new Expected(WatchEvent.Type.PUT, key, handle.fencingToken(), lease.clientId()));
        }

        void release(String key) {
            LockHandle handle = held.remove(key);
            handle.release();
            expected.add(new Expected(WatchEvent.Type.DELETE, key, handle.fencingToken(), handle.lease().clientId()));
        }
    }

    private record Compacted(long compactRevision) {}

    /** Records listener calls, in order, to be awaited one by one. */
    private static final class Recorder implements WatchListener {
        final BlockingQueue<Object> calls = new LinkedBlockingQueue<>();
        final List<WatchEvent> events = new ArrayList<>();

        @Override
        public void onEvent(WatchEvent event) {
            calls.add(event);
        }

        @Override
        public void onCompacted(long compactRevision) {
            calls.add(new Compacted(compactRevision));
        }

        long awaitCompaction() throws InterruptedException {
            Object call = calls.poll(DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
            assertThat(call).as("the compaction signal").isInstanceOf(Compacted.class);
            return ((Compacted) call).compactRevision();
        }

        @Override
        public void onError(TenureException error) {
            calls.add(error);
        }

        /** The next {@code count} calls, each of which must be an event, each waited for up to the deadline. */
        List<WatchEvent> awaitEvents(int count) throws InterruptedException {
            List<WatchEvent> next = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                Object call = calls.poll(DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
                assertThat(call).as("event %d of %d (received so far: %s)", i + 1, count, next)
                        .isNotNull().isInstanceOf(WatchEvent.class);
                next.add((WatchEvent) call);
            }
            events.addAll(next);
            return next;
        }

        void assertNoOtherCall() {
            assertThat(calls).isEmpty();
            for (int i = 1; i < events.size(); i++) {
                assertThat(events.get(i).revision()).as("revision order").isGreaterThan(events.get(i - 1).revision());
            }
        }
    }

    /** Each event is the writer's change at the same place: a grant with its token, or the release of one. */
    private static void assertMatches(List<WatchEvent> events, List<Expected> expected) {
        assertThat(events).hasSameSizeAs(expected);
        long previous = 0;
        for (int i = 0; i < expected.size(); i++) {
            WatchEvent event = events.get(i);
            Expected change = expected.get(i);
            assertThat(event.revision()).as("event %d: strictly after the one before", i).isGreaterThan(previous);
            previous = event.revision();
            assertThat(event.type()).as("event %d: %s", i, event).isEqualTo(change.type());
            assertThat(event.key()).as("event %d: %s", i, event).isEqualTo(change.key());
            if (change.type() == WatchEvent.Type.PUT) {
                assertThat(event.fencingToken()).as("event %d: the grant's token", i).isEqualTo(change.token());
                assertThat(event.holder()).isEqualTo(change.holder());
            } else {
                assertThat(event.prevFencingToken()).as("event %d: the released grant", i).isEqualTo(change.token());
                assertThat(event.prevHolder()).isEqualTo(change.holder());
                assertThat(event.revision()).isGreaterThan(change.token());
            }
        }
    }

    /** The index of the {@code n}th (from 0) grant of {@code key}. */
    private static int indexOfPut(List<Expected> changes, String key, int n) {
        int seen = 0;
        for (int i = 0; i < changes.size(); i++) {
            Expected change = changes.get(i);
            if (change.type() == WatchEvent.Type.PUT && change.key().equals(key) && seen++ == n) {
                return i;
            }
        }
        throw new AssertionError("no grant " + n + " of " + key + " in " + changes);
    }
}
