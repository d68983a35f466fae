package io.tenure.client;

import static io.tenure.client.ScriptedWatchService.delete;
import static io.tenure.client.ScriptedWatchService.handOff;
import static io.tenure.client.ScriptedWatchService.put;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.Status;
import io.tenure.proto.v1.WatchRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Watches against scripted members on fake time: a broken stream resumes on the next member right
 * after the last delivered revision, nothing is delivered twice or out of order, compaction and
 * refusals end the watch, and closing ends it.
 */
class WatchTest {
    private final WatchMembers members = new WatchMembers(2);
    private final ScriptedWatchService first = members.service(0);
    private final ScriptedWatchService second = members.service(1);
    private final FakeTime time = members.time;
    private final TenureClient client = members.client();
    private final WatchRecorder listener = new WatchRecorder();

    @AfterEach
    void tearDown() {
        members.close();
    }

    @Test
    void aBrokenStreamResumesOnTheNextMemberAfterTheLastDeliveredRevision() throws Exception {
        Watch watch = client.watchPrefix("jobs/", 100, listener);

        ScriptedWatchService.Stream onFirst = first.nextStream();
        WatchRequest create = onFirst.create;
        assertThat(create.getKey()).isEqualTo("jobs/");
        assertThat(create.getPrefix()).isTrue();
        assertThat(create.getStartRevision()).isEqualTo(100);
        assertThat(create.getPrevKv()).isTrue();
        onFirst.created(150).events(150, put("jobs/a", 100, "w1", 7), delete("jobs/a", 120, "w1", 7, 100));
        assertThat(listener.nextRevisions(2)).containsExactly(100L, 120L);
        assertThat(watch.started().get(5, TimeUnit.SECONDS)).isEqualTo(150);
        assertThat(watch.lastRevision()).isEqualTo(120);

        members.kill(0); // the member dies under the stream

        // At once, no backoff: the next member, from the revision after the last delivered one.
        ScriptedWatchService.Stream onSecond = second.nextStream();
        assertThat(onSecond.create.getStartRevision()).isEqualTo(121);
        assertThat(onSecond.create.getKey()).isEqualTo("jobs/");
        assertThat(onSecond.create.getPrefix()).isTrue();
        onSecond.created(160).events(160, put("jobs/b", 130, "w2", 8));
        assertThat(listener.nextEvent().revision()).isEqualTo(130);
        assertThat(watch.lastRevision()).isEqualTo(130);
        assertThat(watch.isOpen()).isTrue();
        listener.assertNoMoreCalls();
    }

    @Test
    void aWatchFromTheNextChangeIsPinnedToTheRevisionItWasCreatedAt() throws Exception {
        Watch watch = client.watch("jobs/a", 0, listener);
        ScriptedWatchService.Stream onFirst = first.nextStream();
        assertThat(onFirst.create.getStartRevision()).isZero();
        assertThat(onFirst.create.getKey()).isEqualTo("jobs/a");
        assertThat(onFirst.create.getPrefix()).isFalse();
        onFirst.created(500);
        assertThat(watch.started().get(5, TimeUnit.SECONDS)).isEqualTo(500);

        // The member breaks before any change: the next one is asked for everything after 500,
        // so a change between the two streams is not missed.
        onFirst.fail(Status.UNAVAILABLE.withDescription("member n1 is shutting down"));
        ScriptedWatchService.Stream onSecond = second.nextStream();
        assertThat(onSecond.create.getStartRevision()).isEqualTo(501);

        // An event at the pinned revision is not "after" it, whichever member sends it.
        onSecond.created(510).events(510, put("jobs/a", 500, "w0", 1), put("jobs/a", 505, "w1", 2));
        assertThat(listener.nextEvent().revision()).isEqualTo(505);
        listener.assertNoMoreCalls();
    }

    @Test
    void aWatchTheMemberCancelsMovesOnAndItsOldStreamIsCancelled() throws Exception {
        client.watch("jobs/a", 10, listener);
        ScriptedWatchService.Stream onFirst = first.nextStream();
        onFirst.created(20).events(20, put("jobs/a", 12, "w1", 1));
        assertThat(listener.nextEvent().revision()).isEqualTo(12);

        onFirst.cancel("the member is shutting down");

        assertThat(onFirst.cancelledByClient).succeedsWithin(Duration.ofSeconds(5));
        ScriptedWatchService.Stream onSecond = second.nextStream();
        assertThat(onSecond.create.getStartRevision()).isEqualTo(13);
        onSecond.created(20).events(20, put("jobs/a", 14, "w2", 2));
        assertThat(listener.nextEvent().revision()).isEqualTo(14);

        // A watch that fell too far behind on the second member, after being served there for a
        // while (so without backoff), comes back to the first.
        time.advance(FailoverCall.MAX_BACKOFF);
        onSecond.cancel("watcher fell more than 100000 events behind; restart it from the revision after the last one received");
        ScriptedWatchService.Stream again = first.nextStream();
        assertThat(again.create.getStartRevision()).isEqualTo(15);
        listener.assertNoMoreCalls();
    }

    @Test
    void eventsALaggingMemberRepeatsOrSendsOutOfOrderAreDropped() throws Exception {
        Watch watch = client.watchPrefix("", 1, listener);
        ScriptedWatchService.Stream onFirst = first.nextStream();
        onFirst.created(10).events(10, put("a", 3, "w1", 1), put("b", 5, "w2", 2), delete("a", 7, "w1", 1, 3));
        assertThat(listener.nextRevisions(3)).containsExactly(3L, 5L, 7L);

        onFirst.fail(Status.UNAVAILABLE.withDescription("io exception"));
        ScriptedWatchService.Stream onSecond = second.nextStream();
        assertThat(onSecond.create.getStartRevision()).isEqualTo(8);
        // A member that ignores the start revision, or replays from an older point.
        onSecond.created(6).events(6, put("b", 5, "w2", 2), delete("a", 7, "w1", 1, 3));
        onSecond.events(9, put("a", 8, "w3", 3), put("c", 6, "w4", 4), put("c", 9, "w4", 4), put("c", 9, "w4", 4));

        assertThat(listener.nextRevisions(2)).containsExactly(8L, 9L);
        assertThat(watch.lastRevision()).isEqualTo(9);
        listener.assertNoMoreCalls();
    }

    @Test
    void whileNoMemberServesItTheWatchKeepsRetryingWithJitteredBackoffCappedAtAQuarterSecond() throws Exception {
        Status unavailable = Status.UNAVAILABLE.withDescription("no leader");
        first.refuseStreams = unavailable;
        second.refuseStreams = unavailable;
        Watch watch = client.watch("jobs/a", 7, listener);

        // The first retry is immediate, on the next member; later ones wait out a backoff.
        assertThat(first.refused).hasSize(1);
        assertThat(second.refused).hasSize(1);
        time.advance(Duration.ofMillis(24));
        assertThat(first.refused.size() + second.refused.size()).isEqualTo(2);

        time.advance(Duration.ofSeconds(10).minusMillis(24));
        // 50 ms doubling to 250 ms, each between half and all of it: in 10 s, 2 at once, then 43
        // (every wait the longest) to 83 (every wait the shortest).
        int attempts = first.refused.size() + second.refused.size();
        assertThat(attempts).isBetween(43, 83);
        assertThat(Math.abs(first.refused.size() - second.refused.size())).isLessThanOrEqualTo(1);
        assertThat(first.refused).allSatisfy(request -> assertThat(request.getStartRevision()).isEqualTo(7));
        assertThat(second.refused).allSatisfy(request -> assertThat(request.getStartRevision()).isEqualTo(7));
        assertThat(watch.isOpen()).isTrue();
        assertThat(watch.started()).isNotDone();

        first.refuseStreams = null;
        second.refuseStreams = null;
        time.advance(FailoverCall.MAX_BACKOFF);
        ScriptedWatchService.Stream served = first.streams.isEmpty() ? second.nextStream() : first.nextStream();
        assertThat(served.create.getStartRevision()).isEqualTo(7);
        served.created(9).events(9, put("jobs/a", 8, "w1", 1));
        assertThat(listener.nextEvent().revision()).isEqualTo(8);
        listener.assertNoMoreCalls();
    }

    @Test
    void aStartRevisionOlderThanTheRetainedEventsEndsTheWatchWithTheCompactRevision() throws Exception {
        Watch watch = client.watch("jobs/a", 5, listener);
        ScriptedWatchService.Stream onFirst = first.nextStream();

        onFirst.compacted(40);

        assertThat(listener.nextCompaction()).isEqualTo(40);
        assertThat(watch.isOpen()).isFalse();
        assertThatThrownBy(() -> watch.started().get(5, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class).cause().isInstanceOf(TenureException.class)
                .hasMessageContaining("revision 5").hasMessageContaining("40");
        assertThat(onFirst.cancelledByClient).succeedsWithin(Duration.ofSeconds(5));
        // Ended for good: no reconnect, no other call.
        time.advance(Duration.ofSeconds(10));
        assertThat(first.streams).isEmpty();
        assertThat(second.streams).isEmpty();
        listener.assertNoMoreCalls();
    }

    @Test
    void compactionWhenResumingEndsTheWatchAfterTheEventsAlreadyDelivered() throws Exception {
        client.watchPrefix("jobs/", 1, listener);
        first.nextStream().created(10).events(10, put("jobs/a", 3, "w1", 1)).fail(Status.UNAVAILABLE);

        ScriptedWatchService.Stream onSecond = second.nextStream();
        assertThat(onSecond.create.getStartRevision()).isEqualTo(4);
        onSecond.compacted(8); // this member restored a snapshot and no longer has revisions 4 to 7

        assertThat(listener.nextEvent().revision()).isEqualTo(3);
        assertThat(listener.nextCompaction()).isEqualTo(8);
        time.advance(Duration.ofSeconds(10));
        assertThat(first.streams).isEmpty();
        listener.assertNoMoreCalls();
    }

    @Test
    void invalidArgumentsAreRefusedBeforeAnythingIsSent() {
        assertThatThrownBy(() -> client.watch(null, 0, listener))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("key");
        assertThatThrownBy(() -> client.watch("", 0, listener))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("key");
        assertThatThrownBy(() -> client.watch("jobs/a", -1, listener))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("startRevision");
        assertThatThrownBy(() -> client.watchPrefix(null, 0, listener))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("prefix");
        assertThatThrownBy(() -> client.watchPrefix("jobs/", -5, listener))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("startRevision");
        assertThatThrownBy(() -> client.watch("jobs/a", 0, null))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("listener");
        time.advance(Duration.ofSeconds(1));
        assertThat(first.streams).isEmpty();
        assertThat(second.streams).isEmpty();
        listener.assertNoMoreCalls();
    }

    @Test
    void anEmptyPrefixWatchesEveryKey() throws Exception {
        Watch watch = client.watchPrefix("", 0, listener);
        WatchRequest create = first.nextStream().create;
        assertThat(create.getKey()).isEmpty();
        assertThat(create.getPrefix()).isTrue();
        assertThat(watch.isPrefix()).isTrue();
    }

    @Test
    void aRefusalByTheMemberEndsTheWatchWithOnErrorAndIsNotRetried() throws Exception {
        Watch watch = client.watch("jobs/a", 3, listener);
        first.nextStream().cancel("INVALID_ARGUMENT: key is too long");

        TenureException error = listener.nextError();
        assertThat(error).isInstanceOf(InvalidArgumentException.class).hasMessageContaining("key is too long");
        assertThat(watch.isOpen()).isFalse();
        assertThatThrownBy(() -> watch.started().get(5, TimeUnit.SECONDS)).cause().isSameAs(error);
        time.advance(Duration.ofSeconds(10));
        assertThat(first.streams).isEmpty();
        assertThat(second.streams).isEmpty();
        listener.assertNoMoreCalls();
    }

    @Test
    void aStreamFailingWithAStatusNoMemberAnswersOtherwiseEndsTheWatch() throws Exception {
        client.watch("jobs/a", 3, listener);
        first.nextStream().fail(Status.UNIMPLEMENTED.withDescription("Method not found: tenure.v1.LockService/Watch"));

        assertThat(listener.nextError()).hasMessageContaining("UNIMPLEMENTED").hasMessageContaining("Method not found");
        time.advance(Duration.ofSeconds(10));
        assertThat(second.streams).isEmpty();
        listener.assertNoMoreCalls();
    }

    @Test
    void closeCancelsTheWatchOnTheMemberAndDeliversNothingMore() throws Exception {
        Watch watch = client.watch("jobs/a", 1, listener);
        ScriptedWatchService.Stream onFirst = first.nextStream();
        onFirst.created(5).events(5, put("jobs/a", 2, "w1", 1));
        assertThat(listener.nextEvent().revision()).isEqualTo(2);

        watch.close();

        assertThat(onFirst.cancelledByClient).succeedsWithin(Duration.ofSeconds(5));
        assertThat(watch.isOpen()).isFalse();
        onFirst.events(6, put("jobs/a", 6, "w2", 2)); // too late: the call is cancelled
        time.advance(Duration.ofSeconds(10));
        assertThat(first.streams).isEmpty();
        assertThat(second.streams).isEmpty();
        listener.assertNoMoreCalls(); // no onError for the caller's own close
        watch.close(); // idempotent
    }

    @Test
    void closeWhileWaitingToReconnectStopsTheRetries() throws Exception {
        first.refuseStreams = Status.UNAVAILABLE;
        second.refuseStreams = Status.UNAVAILABLE;
        Watch watch = client.watch("jobs/a", 1, listener);
        assertThat(first.refused.size() + second.refused.size()).isEqualTo(2);

        watch.close();

        assertThatThrownBy(() -> watch.started().get(5, TimeUnit.SECONDS)).isInstanceOf(CancellationException.class);
        time.advance(Duration.ofSeconds(10));
        assertThat(first.refused.size() + second.refused.size()).isEqualTo(2);
        listener.assertNoMoreCalls();
    }

    @Test
    void closingTheClientEndsEveryOpenWatchWithOnError() throws Exception {
        Watch connected = client.watch("jobs/a", 1, listener);
        ScriptedWatchService.Stream onFirst = first.nextStream();
        onFirst.created(5);
        second.refuseStreams = Status.UNAVAILABLE;
        first.refuseStreams = Status.UNAVAILABLE;
        WatchRecorder retrying = new WatchRecorder();
        Watch reconnecting = client.watchPrefix("locks/", 1, retrying);
        assertThat(first.refused.size() + second.refused.size()).isEqualTo(2);

        client.close();

        assertThat(listener.nextError()).hasMessageContaining("client was closed");
        assertThat(retrying.nextError()).hasMessageContaining("client was closed");
        assertThat(onFirst.cancelledByClient).succeedsWithin(Duration.ofSeconds(5));
        assertThat(connected.isOpen()).isFalse();
        assertThat(reconnecting.isOpen()).isFalse();
        assertThatThrownBy(() -> client.watch("jobs/b", 0, listener)).isInstanceOf(IllegalStateException.class);
        time.advance(Duration.ofSeconds(10));
        assertThat(first.refused.size() + second.refused.size()).isEqualTo(2);
        listener.assertNoMoreCalls();
        retrying.assertNoMoreCalls();
    }

    @Test
    void eventsCarryTheHolderTheLeaseTheMetadataAndThePreviousGrant() throws Exception {
        client.watch("jobs/a", 1, listener);
        byte[] metadata = "batch 7".getBytes(StandardCharsets.UTF_8);
        first.nextStream().created(30).events(30,
                put("jobs/a", 10, "w1", 11),
                handOff("jobs/a", 20, "w2", 22, metadata, "w1", 11, 10),
                delete("jobs/a", 30, "w2", 22, 20));

        WatchEvent granted = listener.nextEvent();
        assertThat(granted.type()).isEqualTo(WatchEvent.Type.PUT);
        assertThat(granted.key()).isEqualTo("jobs/a");
        assertThat(granted.holder()).isEqualTo("w1");
        assertThat(granted.leaseId()).isEqualTo(11);
        assertThat(granted.fencingToken()).isEqualTo(10).isEqualTo(granted.revision());
        assertThat(granted.prevHolder()).isEmpty();
        assertThat(granted.prevFencingToken()).isZero();

        WatchEvent handedOver = listener.nextEvent();
        assertThat(handedOver.type()).isEqualTo(WatchEvent.Type.PUT);
        assertThat(handedOver.holder()).isEqualTo("w2");
        assertThat(handedOver.leaseId()).isEqualTo(22);
        assertThat(handedOver.metadata()).isEqualTo(metadata);
        assertThat(handedOver.fencingToken()).isEqualTo(20);
        assertThat(handedOver.prevHolder()).isEqualTo("w1");
        assertThat(handedOver.prevFencingToken()).isEqualTo(10);

        WatchEvent freed = listener.nextEvent();
        assertThat(freed.type()).isEqualTo(WatchEvent.Type.DELETE);
        assertThat(freed.revision()).isEqualTo(30);
        assertThat(freed.fencingToken()).isZero();
        assertThat(freed.holder()).isEmpty();
        assertThat(freed.leaseId()).isZero();
        assertThat(freed.metadata()).isEmpty();
        assertThat(freed.prevHolder()).isEqualTo("w2");
        assertThat(freed.prevFencingToken()).isEqualTo(20);
        listener.assertNoMoreCalls();
    }

    @Test
    void aListenerThatThrowsDoesNotEndTheWatch() throws Exception {
        listener.throwOnEvent = true;
        Watch watch = client.watch("jobs/a", 1, listener);
        first.nextStream().created(5).events(5, put("jobs/a", 2, "w1", 1), put("jobs/a", 4, "w2", 2));

        assertThat(listener.nextRevisions(2)).isEqualTo(List.of(2L, 4L));
        assertThat(watch.isOpen()).isTrue();
        assertThat(watch.lastRevision()).isEqualTo(4);
        listener.assertNoMoreCalls();
    }

    @Test
    void aListenerMayCloseItsWatchFromInsideACall() throws Exception {
        Watch[] self = new Watch[1];
        boolean[] openAfterClose = {true};
        WatchRecorder recorder = new WatchRecorder();
        WatchListener closing = new WatchListener() {
            @Override
            public void onEvent(WatchEvent event) {
                recorder.onEvent(event);
                self[0].close();
                openAfterClose[0] = self[0].isOpen();
            }

            @Override
            public void onCompacted(long compactRevision) {
                recorder.onCompacted(compactRevision);
            }

            @Override
            public void onError(TenureException error) {
                recorder.onError(error);
            }
        };
        self[0] = client.watch("jobs/a", 1, closing);
        ScriptedWatchService.Stream onFirst = first.nextStream();
        onFirst.created(5).events(5, put("jobs/a", 2, "w1", 1), put("jobs/a", 3, "w2", 2));

        assertThat(recorder.nextEvent().revision()).isEqualTo(2);
        assertThat(onFirst.cancelledByClient).succeedsWithin(Duration.ofSeconds(5));
        assertThat(openAfterClose[0]).isFalse();
        assertThat(self[0].isOpen()).isFalse();
        recorder.assertNoMoreCalls();
    }
}
