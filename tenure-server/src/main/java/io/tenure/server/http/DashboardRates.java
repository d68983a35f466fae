package io.tenure.server.http;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The dashboard's live rates, sampled once a second from the member's own metrics (their
 * Prometheus text, the figures {@code /metrics} serves) while at least one dashboard stream is
 * open: grants per second ({@code grants_total}, every kind), hand-offs per second (its
 * {@code via="hand_off"} part: grants made by another's release, a lease's end or a last
 * arrival), keep-alives per second ({@code lock_renew_total}, every result) and the p99 of the
 * acquires answered in that second ({@code lock_op_latency_seconds{op="acquire"}}, waiting
 * included, interpolated within its bucket as Prometheus's {@code histogram_quantile} does).
 *
 * <p>The last {@link #HISTORY} samples are kept, so a page that opens sees the last minute at once.
 * Nothing is sampled while no stream is open: a member nobody watches pays nothing.
 */
final class DashboardRates {
    /** Samples kept: a minute at one a second. */
    static final int HISTORY = 60;
    static final long SAMPLE_EVERY_MS = 1_000;
    private static final String GRANTS = "grants_total{";
    private static final String RENEWS = "lock_renew_total{";
    private static final String ACQUIRE_BUCKET = "lock_op_latency_seconds_bucket{";
    private static final String ACQUIRE_LABEL = "op=\"acquire\"";

    /**
     * One second's rates.
     *
     * @param atMillis       the member's wall clock when it was taken, for the chart's time axis
     * @param acquireP99Ms   the p99 of the acquires answered in the second, in ms; negative when none was
     */
    record Sample(long atMillis, double grantsPerSecond, double handOffsPerSecond, double keepAlivesPerSecond, double acquireP99Ms) {}

    /** The counters read from one scrape: totals since the member started. */
    record Totals(long atNanos, double grants, double handOffs, double keepAlives, TreeMap<Double, Double> acquireBuckets) {}

    private final Supplier<String> scrape;
    private final LongSupplier nanoClock;
    private final LongSupplier wallClockMillis;
    private final ScheduledExecutorService timer;
    private final ArrayDeque<Sample> history = new ArrayDeque<>();
    private Totals last;
    private int streams;
    private ScheduledFuture<?> sampling;

    DashboardRates(Supplier<String> scrape, ScheduledExecutorService timer, LongSupplier nanoClock, LongSupplier wallClockMillis) {
        this.scrape = scrape;
        this.timer = timer;
        this.nanoClock = nanoClock;
        this.wallClockMillis = wallClockMillis;
    }

    /** A stream opened: sampling starts with the first. */
    synchronized void streamOpened() {
        if (streams++ == 0) {
            last = null;
            history.clear();
            sampling = timer.scheduleAtFixedRate(this::sampleQuietly, 0, SAMPLE_EVERY_MS, TimeUnit.MILLISECONDS);
        }
    }

    /** A stream closed: sampling stops with the last. */
    synchronized void streamClosed() {
        if (--streams == 0 && sampling != null) {
            sampling.cancel(false);
            sampling = null;
        }
    }

    /** The samples kept, oldest first. */
    synchronized List<Sample> history() {
        return new ArrayList<>(history);
    }

    private void sampleQuietly() {
        try {
            sample();
        } catch (RuntimeException e) {
            // A scrape that fails once must not end the sampling (a scheduled task that throws is never run again).
            org.slf4j.LoggerFactory.getLogger(DashboardRates.class).debug("event=dashboard_sample_failed reason=\"{}\"", e.toString());
        }
    }

    /** Reads the metrics once; from the second reading on, adds the rates since the previous one. */
    void sample() {
        Totals now = totals(scrape.get(), nanoClock.getAsLong());
        long at = wallClockMillis.getAsLong();
        synchronized (this) {
            Totals before = last;
            last = now;
            if (before == null) {
                return;
            }
            history.addLast(between(before, now, at));
            while (history.size() > HISTORY) {
                history.removeFirst();
            }
        }
    }

    /** The rates between two readings. */
    static Sample between(Totals before, Totals now, long atMillis) {
        double seconds = Math.max(1e-3, (now.atNanos() - before.atNanos()) / 1e9);
        return new Sample(atMillis,
                Math.max(0, now.grants() - before.grants()) / seconds,
                Math.max(0, now.handOffs() - before.handOffs()) / seconds,
                Math.max(0, now.keepAlives() - before.keepAlives()) / seconds,
                p99(before.acquireBuckets(), now.acquireBuckets()) * 1000);
    }

    /**
     * The 0.99 quantile of the observations counted between two readings of one cumulative
     * histogram (upper bound in seconds → count at or below it), linearly interpolated within
     * its bucket; -1 when nothing was counted.
     */
    static double p99(TreeMap<Double, Double> before, TreeMap<Double, Double> now) {
        double total = delta(before, now, Double.POSITIVE_INFINITY);
        if (total <= 0) {
            return -1;
        }
        double rank = 0.99 * total;
        double lower = 0;
        double below = 0;
        for (double upper : now.keySet()) {
            double atOrBelow = delta(before, now, upper);
            if (atOrBelow >= rank) {
                if (Double.isInfinite(upper)) {
                    return lower; // beyond the last bound: the last bound is all a histogram can say
                }
                double inBucket = atOrBelow - below;
                return inBucket <= 0 ? upper : lower + (upper - lower) * (rank - below) / inBucket;
            }
            lower = upper;
            below = atOrBelow;
        }
        return lower;
    }

    private static double delta(TreeMap<Double, Double> before, TreeMap<Double, Double> now, double bound) {
        return Math.max(0, now.getOrDefault(bound, 0.0) - before.getOrDefault(bound, 0.0));
    }

    /** The dashboard's counters from one Prometheus text scrape. */
    static Totals totals(String text, long atNanos) {
        double grants = 0;
        double handOffs = 0;
        double keepAlives = 0;
        TreeMap<Double, Double> buckets = new TreeMap<>();
        for (String line : text.split("\n")) {
            if (line.startsWith(GRANTS)) {
                double value = value(line);
                grants += value;
                if (line.contains("via=\"hand_off\"")) {
                    handOffs += value;
                }
            } else if (line.startsWith(RENEWS)) {
                keepAlives += value(line);
            } else if (line.startsWith(ACQUIRE_BUCKET) && line.contains(ACQUIRE_LABEL)) {
                int le = line.indexOf("le=\"");
                if (le >= 0) {
                    String bound = line.substring(le + 4, line.indexOf('"', le + 4));
                    buckets.put(bound.equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(bound), value(line));
                }
            }
        }
        return new Totals(atNanos, grants, handOffs, keepAlives, buckets);
    }

    /** The sample value of a text-format line: the number after the labels (a timestamp may follow it). */
    private static double value(String line) {
        String rest = line.substring(line.lastIndexOf('}') + 1).trim();
        int space = rest.indexOf(' ');
        return Double.parseDouble(space < 0 ? rest : rest.substring(0, space));
    }
}
