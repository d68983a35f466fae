package io.tenure.server.http;

import io.tenure.server.metrics.ServerMetrics;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * The dashboard's rates from the member's own metrics: the counters read from a real
 * {@link ServerMetrics} scrape, rates between two readings on a stepped clock, and the p99
 * interpolated within its histogram bucket.
 */
class DashboardRatesTest {
    @Test
    void readsGrantsHandOffsKeepAlivesAndTheAcquireHistogramFromAScrape() {
        ServerMetrics metrics = new ServerMetrics();
        metrics.granted("lock", "immediate");
        metrics.granted("lock", "hand_off");
        metrics.granted("semaphore", "hand_off");
        metrics.renew("renewed");
        metrics.renew("expired");
        metrics.latency("acquire", TimeUnit.MILLISECONDS.toNanos(3));
        metrics.latency("release", TimeUnit.MILLISECONDS.toNanos(300)); // another operation: not counted

        DashboardRates.Totals totals = DashboardRates.totals(metrics.scrape(), 0);
        assertThat(totals.grants()).isEqualTo(3);
        assertThat(totals.handOffs()).isEqualTo(2);
        assertThat(totals.keepAlives()).isEqualTo(2);
        assertThat(totals.acquireBuckets().get(0.002)).isZero();
        assertThat(totals.acquireBuckets().get(0.005)).isEqualTo(1);
        assertThat(totals.acquireBuckets().get(Double.POSITIVE_INFINITY)).isEqualTo(1);
    }

    @Test
    void ratesAreWhatWasCountedBetweenTwoReadingsPerSecond() {
        ServerMetrics metrics = new ServerMetrics();
        AtomicLong nanos = new AtomicLong();
        ScheduledThreadPoolExecutor unused = new ScheduledThreadPoolExecutor(1);
        try {
            DashboardRates rates = new DashboardRates(metrics::scrape, unused, nanos::get, () -> 1_000L);
            rates.sample();
            assertThat(rates.history()).as("one reading is no rate yet").isEmpty();
            for (int i = 0; i < 10; i++) {
                metrics.granted("lock", i < 4 ? "hand_off" : "immediate");
                metrics.latency("acquire", TimeUnit.MILLISECONDS.toNanos(i < 9 ? 1 : 40));
            }
            for (int i = 0; i < 6; i++) {
                metrics.renew("renewed");
            }
            nanos.addAndGet(TimeUnit.SECONDS.toNanos(2));
            rates.sample();
            List<DashboardRates.Sample> history = rates.history();
            assertThat(history).hasSize(1);
            DashboardRates.Sample sample = history.get(0);
            assertThat(sample.grantsPerSecond()).isEqualTo(5);
            assertThat(sample.handOffsPerSecond()).isEqualTo(2);
            assertThat(sample.keepAlivesPerSecond()).isEqualTo(3);
            // 9 of 10 at 1 ms (the 0.5-1 ms bucket), the 10th at 40 ms (25-50 ms): the 9.9th lies in the latter.
            assertThat(sample.acquireP99Ms()).isBetween(25.0, 50.0);

            nanos.addAndGet(TimeUnit.SECONDS.toNanos(1));
            rates.sample();
            DashboardRates.Sample quiet = rates.history().get(1);
            assertThat(quiet.grantsPerSecond()).isZero();
            assertThat(quiet.acquireP99Ms()).as("no acquire answered: no p99").isNegative();
        } finally {
            unused.shutdownNow();
        }
    }

    @Test
    void theP99IsInterpolatedWithinItsBucket() {
        java.util.TreeMap<Double, Double> before = new java.util.TreeMap<>(java.util.Map.of(0.001, 0.0, 0.002, 0.0,
                Double.POSITIVE_INFINITY, 0.0));
        java.util.TreeMap<Double, Double> after = new java.util.TreeMap<>(java.util.Map.of(0.001, 0.0, 0.002, 100.0,
                Double.POSITIVE_INFINITY, 100.0));
        // All 100 between 1 and 2 ms: the 99th is 99% of the way through the bucket.
        assertThat(DashboardRates.p99(before, after)).isCloseTo(0.00199, within(1e-9));
        assertThat(DashboardRates.p99(after, after)).isEqualTo(-1);
        java.util.TreeMap<Double, Double> beyond = new java.util.TreeMap<>(java.util.Map.of(0.001, 0.0, 0.002, 0.0,
                Double.POSITIVE_INFINITY, 5.0));
        assertThat(DashboardRates.p99(before, beyond)).as("past the last bound: that bound").isEqualTo(0.002);
    }
}
