package io.tenure.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class BenchSettingsTest {
    private static BenchSettings w6(int clients, int limit) {
        return new BenchSettings("tenure-1", "w6", clients, Duration.ofSeconds(5), Duration.ofSeconds(5),
                BenchSettings.DEFAULT_LEASES, BenchSettings.DEFAULT_WATCHERS, BenchSettings.DEFAULT_ROUNDS, limit,
                BenchSettings.DEFAULT_JVM_OPTIONS, false, false, false);
    }

    @Test
    void w6Is64ClientsOnASemaphoreOfLimit8UnlessToldOtherwise() {
        assertThat(BenchSettings.defaultClients("W6")).isEqualTo(64);
        assertThat(BenchSettings.defaultClients("w6")).isEqualTo(64);
        assertThat(BenchSettings.defaultClients("W1")).isEqualTo(16);
        assertThat(BenchSettings.defaultClients("W2")).isEqualTo(16);

        BenchSettings s = w6(64, 8);
        assertThat(s.workload()).isEqualTo("W6");
        assertThat(s.limit()).isEqualTo(8);
        assertThat(BenchSettings.of("tenure-3", "W6", 64, Duration.ofSeconds(1), Duration.ZERO).limit())
                .isEqualTo(BenchSettings.DEFAULT_LIMIT);
    }

    @Test
    void theLimitMustBeOneTheSdkAccepts() {
        assertThat(w6(4, 1).limit()).isEqualTo(1);
        assertThatThrownBy(() -> w6(64, 0)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("limit");
        assertThatThrownBy(() -> w6(64, 1_000_001)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("limit");
        assertThatThrownBy(() -> BenchSettings.of("tenure-1", "W13", 1, Duration.ofSeconds(1), Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("W1..W12");
    }

    @Test
    void w7Is64ClientsOnAReadWriteLockOf90PercentReads() {
        assertThat(BenchSettings.WORKLOADS).containsSubsequence("W6", "W7", "W8", "W9", "W10", "W11", "W12").endsWith("T1", "T2");
        assertThat(BenchSettings.defaultClients("W8")).isEqualTo(64);
        assertThat(BenchSettings.defaultClients("W9")).isEqualTo(64);
        assertThat(BenchSettings.defaultClients("w10")).isEqualTo(64);
        assertThatThrownBy(() -> BenchSettings.of("tenure-1", "W9", 1_001, Duration.ofSeconds(1), Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("1000 keys");
        assertThat(BenchSettings.defaultClients("W7")).isEqualTo(64);
        assertThat(BenchSettings.defaultClients("w7")).isEqualTo(64);
        assertThat(BenchSettings.W7_READS).isEqualTo(0.9);
        BenchSettings s = BenchSettings.of("tenure-3", "w7", 64, Duration.ofSeconds(1), Duration.ZERO);
        assertThat(s.workload()).isEqualTo("W7");
        assertThat(s.clients()).isEqualTo(64);
    }

    @Test
    void theMatrixRunsW7With64ClientsWhereverItRunsW2() {
        for (String which : List.of("quick", "full")) {
            List<BenchSettings> w7 = Bench.matrix(which, BenchSettings.DEFAULT_JVM_OPTIONS).stream()
                    .filter(s -> s.workload().equals("W7")).toList();
            assertThat(w7).extracting(BenchSettings::target).containsExactly("tenure-1", "tenure-3");
            assertThat(w7).allSatisfy(s -> assertThat(s.clients()).isEqualTo(64));
        }
    }

    @Test
    void theMatrixRunsW6With64ClientsWhereverItRunsW2() {
        for (String which : List.of("quick", "full")) {
            List<BenchSettings> runs = Bench.matrix(which, BenchSettings.DEFAULT_JVM_OPTIONS);
            List<BenchSettings> w6 = runs.stream().filter(s -> s.workload().equals("W6")).toList();
            assertThat(w6).extracting(BenchSettings::target).containsExactly("tenure-1", "tenure-3");
            assertThat(w6).allSatisfy(s -> {
                assertThat(s.clients()).isEqualTo(64);
                assertThat(s.limit()).isEqualTo(8);
            });
            assertThat(runs.stream().filter(s -> s.workload().equals("W2")).map(BenchSettings::target).distinct())
                    .containsExactly("tenure-1", "tenure-3");
        }
    }
}
