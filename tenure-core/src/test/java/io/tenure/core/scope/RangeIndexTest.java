package io.tenure.core.scope;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Byte ranges of one inode: POSIX-style conflicts, against a brute-force reference. */
class RangeIndexTest {

    @Test
    void overlappingRangesConflictWhenOneIsExclusive() {
        RangeIndex index = new RangeIndex();
        index.add(1, 0, 100, true);
        index.add(2, 200, 300, false);
        index.add(3, 250, 400, false);

        assertThat(holds(index.conflicts(50, 60, false))).as("a reader inside a writer's range").containsExactly(1L);
        assertThat(holds(index.conflicts(100, 200, true))).as("touching is not overlapping").isEmpty();
        assertThat(holds(index.conflicts(260, 270, false))).as("readers share").isEmpty();
        assertThat(holds(index.conflicts(260, 270, true))).as("a writer among readers").containsExactly(2L, 3L);
        assertThat(holds(index.conflicts(0, Long.MAX_VALUE, true))).containsExactly(1L, 2L, 3L);
        assertThat(index.conflictsWithAny(99, 100, false)).isTrue();
        assertThat(index.conflictsWithAny(100, 101, true)).isFalse();

        assertThat(index.remove(1)).isTrue();
        assertThat(index.remove(1)).isFalse();
        assertThat(holds(index.conflicts(50, 60, true))).isEmpty();
        assertThat(index.size()).isEqualTo(2);
    }

    @Test
    void badRangesAreRefusedAndNothingChanges() {
        RangeIndex index = new RangeIndex();
        index.add(1, 0, 10, true);
        assertThatThrownBy(() -> index.add(2, 10, 10, true)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("end must be above its start");
        assertThatThrownBy(() -> index.add(2, 20, 10, true)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("[20, 10)");
        assertThatThrownBy(() -> index.add(2, -1, 10, true)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("start must not be negative");
        assertThatThrownBy(() -> index.add(1, 50, 60, false)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("hold 1 already holds");
        assertThatThrownBy(() -> index.conflicts(5, 5, true)).isInstanceOf(IllegalArgumentException.class);
        assertThat(index.size()).isEqualTo(1);
        assertThat(holds(index.conflicts(0, 100, true))).containsExactly(1L);
    }

    @Test
    void agreesWithAPairwiseCheckOverThousandsOfSeededSequences() {
        for (long seed = 1; seed <= 2_000; seed++) {
            Random random = new Random(seed);
            RangeIndex index = new RangeIndex();
            Map<Long, long[]> held = new LinkedHashMap<>(); // hold → {start, end, exclusive}
            long span = 1 + random.nextInt(seed % 3 == 0 ? 50 : 5_000);
            long nextHold = random.nextInt(1000) - 500;
            for (int step = 0; step < 60; step++) {
                if (!held.isEmpty() && random.nextInt(3) == 0) {
                    List<Long> ids = new ArrayList<>(held.keySet());
                    long gone = ids.get(random.nextInt(ids.size()));
                    held.remove(gone);
                    assertThat(index.remove(gone)).isTrue();
                } else {
                    long start = (long) (random.nextDouble() * span);
                    long end = start + 1 + (long) (random.nextDouble() * span / 4);
                    boolean exclusive = random.nextBoolean();
                    long hold = nextHold++;
                    index.add(hold, start, end, exclusive);
                    held.put(hold, new long[] {start, end, exclusive ? 1 : 0});
                }
                long start = (long) (random.nextDouble() * span);
                long end = start + 1 + (long) (random.nextDouble() * span / 3);
                boolean exclusive = random.nextBoolean();
                List<RangeIndex.Held> expected = held.entrySet().stream()
                        .filter(e -> e.getValue()[0] < end && start < e.getValue()[1] && (exclusive || e.getValue()[2] == 1))
                        .map(e -> new RangeIndex.Held(e.getKey(), e.getValue()[0], e.getValue()[1], e.getValue()[2] == 1))
                        .sorted(Comparator.comparingLong(RangeIndex.Held::start).thenComparingLong(RangeIndex.Held::hold))
                        .toList();
                assertThat(index.conflicts(start, end, exclusive)).as("seed %d step %d: [%d, %d) %s", seed, step, start, end,
                        exclusive ? "exclusive" : "shared").isEqualTo(expected);
                assertThat(index.conflictsWithAny(start, end, exclusive)).isEqualTo(!expected.isEmpty());
                assertThat(index.size()).isEqualTo(held.size());
            }
        }
    }

    @Test
    void aHundredThousandRangesOnOneInodeStayShallow() {
        RangeIndex index = new RangeIndex();
        for (long i = 0; i < 100_000; i++) {
            index.add(i, i * 4096, (i + 1) * 4096, i % 10 == 0);
        }
        assertThat(holds(index.conflicts(4096 * 5_000 + 100, 4096 * 5_000 + 200, true))).containsExactly(5_000L);
        assertThat(holds(index.conflicts(4096 * 5_001 + 100, 4096 * 5_001 + 200, false))).isEmpty();
        assertThat(holds(index.conflicts(4096 * 10, 4096 * 30, false))).containsExactly(10L, 20L);
        for (long i = 0; i < 100_000; i += 2) {
            index.remove(i);
        }
        assertThat(index.size()).isEqualTo(50_000);
        assertThat(holds(index.conflicts(0, 4096 * 4, true))).containsExactly(1L, 3L);
    }

    private static List<Long> holds(List<RangeIndex.Held> held) {
        return held.stream().map(RangeIndex.Held::hold).toList();
    }
}
