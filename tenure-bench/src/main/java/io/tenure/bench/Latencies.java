package io.tenure.bench;

import org.HdrHistogram.Histogram;

/** HdrHistogram helpers: microsecond histograms up to one minute, read out in milliseconds. */
final class Latencies {
    private Latencies() {
    }

    static Histogram histogram() {
        return new Histogram(60_000_000L, 3);
    }

    static void recordNanos(Histogram h, long nanos) {
        h.recordValue(Math.min(60_000_000L, Math.max(0, nanos / 1000)));
    }

    static double ms(Histogram h, double percentile) {
        return h.getTotalCount() == 0 ? 0 : h.getValueAtPercentile(percentile) / 1000.0;
    }

    static double maxMs(Histogram h) {
        return h.getTotalCount() == 0 ? 0 : h.getMaxValue() / 1000.0;
    }
}
