package io.tenure.core.watch;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The ring of recent watch events: ordered replay with no gap or duplicate, and an honest horizon (I10). */
class EventLogTest {
    private static final Predicate<String> ANY_KEY = key -> true;

    private static WatchEvent put(long revision, String key) {
        return new WatchEvent(revision, WatchEvent.Type.PUT, new KeyValue(key, "c", new byte[0], 1, revision, revision, 1), null, "lock");
    }

    private static List<Long> replay(EventLog log, long from, Predicate<String> keys) {
        List<Long> revisions = new ArrayList<>();
        assertThat(log.replay(from, keys, e -> revisions.add(e.revision()))).as("replay from %d", from).isTrue();
        return revisions;
    }

    @Test
    void replayFromARevisionDeliversThatRevisionAndEveryLaterOneInOrder() {
        EventLog log = new EventLog(8);
        for (long r : new long[] {10, 20, 30, 40}) {
            log.append(put(r, "k" + r));
        }

        assertThat(replay(log, 1, ANY_KEY)).containsExactly(10L, 20L, 30L, 40L);
        assertThat(replay(log, 20, ANY_KEY)).containsExactly(20L, 30L, 40L);
        assertThat(replay(log, 21, ANY_KEY)).as("between two revisions").containsExactly(30L, 40L);
        assertThat(replay(log, 40, ANY_KEY)).containsExactly(40L);
        assertThat(replay(log, 41, ANY_KEY)).as("from the future: nothing yet, but not compacted").isEmpty();
    }

    @Test
    void aFreshLogReplaysFromTheFirstRevision() {
        EventLog log = new EventLog(4);

        assertThat(log.horizon()).isEqualTo(1);
        assertThat(replay(log, 1, ANY_KEY)).isEmpty();
        assertThat(log.replay(0, ANY_KEY, e -> { })).as("revision 0 is before every log").isFalse();
    }

    @Test
    void evictionMovesTheHorizonPastTheEvictedEvent() {
        EventLog log = new EventLog(3);
        log.append(put(5, "a"));
        log.append(put(6, "b"));
        log.append(put(9, "c"));
        assertThat(log.horizon()).isEqualTo(1);

        log.append(put(12, "d"));

        assertThat(log.size()).isEqualTo(3);
        assertThat(log.horizon()).isEqualTo(6);
        assertThat(replay(log, 6, ANY_KEY)).containsExactly(6L, 9L, 12L);
        log.append(put(13, "e"));
        assertThat(log.horizon()).isEqualTo(7);
        assertThat(replay(log, 7, ANY_KEY)).as("7 and 8 never existed: no gap").containsExactly(9L, 12L, 13L);
    }

    @Test
    void aStartOlderThanTheHorizonIsRefusedAndDeliversNothing() {
        EventLog log = new EventLog(2);
        for (long r = 1; r <= 5; r++) {
            log.append(put(r * 10, "k"));
        }
        List<WatchEvent> delivered = new ArrayList<>();

        boolean complete = log.replay(log.horizon() - 1, ANY_KEY, delivered::add);

        assertThat(complete).isFalse();
        assertThat(delivered).isEmpty();
        assertThat(log.horizon()).isEqualTo(31);
        assertThat(replay(log, log.horizon(), ANY_KEY)).containsExactly(40L, 50L);
    }

    @Test
    void wrappedRingReplaysInRevisionOrderWithNoGapOrDuplicate() {
        EventLog log = new EventLog(7);
        List<Long> appended = new ArrayList<>();
        for (long r = 1; r <= 40; r++) {
            log.append(put(r * 3, "k" + (r % 4)));
            appended.add(r * 3);
            long horizon = log.horizon();
            for (long from = horizon; from <= r * 3 + 1; from++) {
                long start = from;
                List<Long> expected = appended.stream().filter(x -> x >= start).toList();
                assertThat(replay(log, from, ANY_KEY)).as("after %d appends, from %d", r, from).isEqualTo(expected);
            }
        }
        assertThat(log.capacity()).isEqualTo(7);
        assertThat(log.size()).isEqualTo(7);
    }

    @Test
    void prefixMatchingDeliversOnlyMatchingKeysInOrder() {
        EventLog log = new EventLog(16);
        String[] keys = {"jobs/a", "other", "jobs/b", "jobs", "jobsx", "jobs/a"};
        for (int i = 0; i < keys.length; i++) {
            log.append(put(i + 1, keys[i]));
        }
        List<String> matched = new ArrayList<>();

        log.replay(1, key -> key.startsWith("jobs/"), e -> matched.add(e.key()));

        assertThat(matched).containsExactly("jobs/a", "jobs/b", "jobs/a");
    }

    @Test
    void resetForgetsEverythingAndMovesTheHorizon() {
        EventLog log = new EventLog(4);
        log.append(put(3, "a"));
        log.append(put(4, "b"));

        log.resetTo(100);

        assertThat(log.size()).isZero();
        assertThat(log.horizon()).isEqualTo(100);
        assertThat(log.replay(99, ANY_KEY, e -> { })).isFalse();
        assertThat(replay(log, 100, ANY_KEY)).isEmpty();
        log.append(put(100, "c"));
        assertThat(replay(log, 100, ANY_KEY)).containsExactly(100L);
    }

    @Test
    void capacityMustBePositive() {
        assertThatThrownBy(() -> new EventLog(0)).isInstanceOf(IllegalArgumentException.class);
    }
}
