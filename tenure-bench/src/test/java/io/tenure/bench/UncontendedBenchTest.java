package io.tenure.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Smoke test: W1 for 2 s against one real member process, 2 clients; the JSON line is well formed. */
class UncontendedBenchTest {
    @Test
    @Timeout(180)
    void w1AgainstOneMemberPrintsAResultLine() throws Exception {
        BenchSettings s = new BenchSettings("tenure-1", "W1", 2, Duration.ofSeconds(2), Duration.ofSeconds(1),
                BenchSettings.DEFAULT_LEASES, BenchSettings.DEFAULT_WATCHERS, 1, java.util.List.of("-Xmx256m"));
        BenchResult r = Bench.run(s);
        String line = r.toJson();
        BenchResult back = BenchResult.parse(line);
        assertThat(back.target()).isEqualTo("tenure-1");
        assertThat(back.workload()).isEqualTo("W1");
        assertThat(back.clients()).isEqualTo(2);
        assertThat(back.seconds()).isEqualTo(2.0);
        assertThat(back.ops()).isPositive();
        assertThat(back.opsPerSec()).isPositive();
        assertThat(back.p50Ms()).isPositive().isLessThanOrEqualTo(back.p99Ms());
        assertThat(back.p99Ms()).isLessThanOrEqualTo(back.maxMs());
        assertThat(back.overlaps()).isZero();
        assertThat(back.extra()).containsEntry("leases", 2);
        assertThat(Bench.passed(back)).isTrue();
    }
}
