package io.tenure.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class FootprintTest {
    @Test
    void aKeyAndAnItemCostAtLeastTheirValueInTheSnapshot() throws Exception {
        Map<String, Object> line = Footprint.measure(2_000, 2_000, 100);
        assertThat(line).containsKeys("heap_bytes_per_key", "heap_bytes_per_item", "heap_method");
        // Deterministic: each entry writes its value (100 bytes) and more, a key its name and revisions besides.
        assertThat((Long) line.get("snapshot_bytes_per_item")).isBetween(100L, 200L);
        assertThat((Long) line.get("snapshot_bytes_per_key")).isGreaterThan((Long) line.get("snapshot_bytes_per_item"));
    }
}
