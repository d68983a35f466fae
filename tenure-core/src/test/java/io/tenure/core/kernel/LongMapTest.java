package io.tenure.core.kernel;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** {@link LongMap} against {@link HashMap} over seeded runs of puts, gets and removes, dense and sparse keys alike. */
class LongMapTest {
    @Test
    void agreesWithAHashMapOverRandomPutsGetsAndRemoves() {
        for (long seed = 1; seed <= 200; seed++) {
            Random random = new Random(seed);
            // Few distinct keys make long probe runs and many removals inside them; many make it grow.
            int range = seed % 2 == 0 ? 64 : 1_000_000;
            boolean negativeToo = seed % 3 == 0;
            LongMap<String> map = new LongMap<>();
            Map<Long, String> reference = new HashMap<>();
            for (int step = 0; step < 3_000; step++) {
                long key = random.nextInt(range) * (negativeToo && random.nextBoolean() ? -1L : 1L);
                String context = "seed " + seed + " step " + step + " key " + key;
                switch (random.nextInt(4)) {
                    case 0, 1 -> {
                        String value = "v" + step;
                        map.put(key, value);
                        reference.put(key, value);
                    }
                    case 2 -> assertThat(map.remove(key)).as(context).isEqualTo(reference.remove(key));
                    default -> assertThat(map.get(key)).as(context).isEqualTo(reference.get(key));
                }
                assertThat(map.size()).as(context).isEqualTo(reference.size());
            }
            for (Map.Entry<Long, String> e : reference.entrySet()) {
                assertThat(map.get(e.getKey())).as("seed " + seed + " at the end").isEqualTo(e.getValue());
            }
        }
    }

    @Test
    void keysThatShareASlotStayReachableAfterRemovals() {
        LongMap<Long> map = new LongMap<>();
        // Multiples of 2^32 spread poorly under some hashes: every one must still be found after the others go.
        for (long k = 0; k < 40; k++) {
            map.put(k << 32, k);
        }
        for (long k = 0; k < 40; k += 2) {
            assertThat(map.remove(k << 32)).isEqualTo(k);
        }
        for (long k = 0; k < 40; k++) {
            assertThat(map.get(k << 32)).isEqualTo(k % 2 == 0 ? null : k);
        }
        assertThat(map.size()).isEqualTo(20);
        assertThat(map.remove(12345)).isNull();
    }

    @Test
    void aNullValueIsRefused() {
        assertThatThrownBy(() -> new LongMap<String>().put(1, null)).isInstanceOf(NullPointerException.class).hasMessageContaining("value");
    }
}
