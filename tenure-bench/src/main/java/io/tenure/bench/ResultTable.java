package io.tenure.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalDouble;

/**
 * Reads result lines ({@link BenchResult}, from {@code tenure bench} and the peer drivers) and
 * prints them as one markdown table, with Tenure-to-peer ratios when peer rows are present.
 *
 * <p>A ratio compares a Tenure row with the mean of the peer's rows of the same workload and
 * client count, oriented so that above 1 means Tenure is ahead: throughput over throughput
 * (W3: observed keep-alives/s), and for W5 the peer's median failover over Tenure's.
 * Lines that are not JSON objects (log lines, blank lines) are skipped.
 */
public final class ResultTable {
    /** Row order within a workload and client count; peers in this order get the ratio columns. */
    static final List<String> TARGETS = List.of("tenure-1", "tenure-3", "etcd", "zookeeper", "redis");
    static final List<String> PEERS = List.of("etcd", "zookeeper", "redis");

    private ResultTable() {
    }

    /** Every result line of {@code in}, in order. */
    public static List<BenchResult> read(Reader in) throws IOException {
        List<BenchResult> results = new ArrayList<>();
        BufferedReader lines = new BufferedReader(in);
        for (String line = lines.readLine(); line != null; line = lines.readLine()) {
            String t = line.trim();
            if (t.startsWith("{")) {
                try {
                    results.add(BenchResult.parse(t));
                } catch (IllegalArgumentException notAResult) {
                    // some other JSON on the same stream: not ours
                }
            }
        }
        return results;
    }

    /** The result lines of the files, or of stdin when there are none ("-" also means stdin). */
    public static List<BenchResult> read(List<Path> files) throws IOException {
        if (files.isEmpty()) {
            return read(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        }
        List<BenchResult> results = new ArrayList<>();
        for (Path file : files) {
            if (file.toString().equals("-")) {
                results.addAll(read(new InputStreamReader(System.in, StandardCharsets.UTF_8)));
            } else {
                try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
                    results.addAll(read(r));
                }
            }
        }
        return results;
    }

    /**
     * The table: one row per result, sorted by workload, clients, then target; a ratio column
     * per peer that has rows.
     */
    public static String markdown(List<BenchResult> results) {
        List<String> peers = PEERS.stream().filter(p -> results.stream().anyMatch(r -> r.target().equals(p))).toList();
        StringBuilder out = new StringBuilder("| workload | clients | target | ops/s | p50 ms | p99 ms | max ms | overlaps | notes |");
        StringBuilder rule = new StringBuilder("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | --- |");
        for (String p : peers) {
            out.append(" × ").append(p).append(" |");
            rule.append(" ---: |");
        }
        out.append('\n').append(rule).append('\n');
        List<BenchResult> sorted = new ArrayList<>(results);
        sorted.sort(Comparator.comparing(BenchResult::workload).thenComparingInt(BenchResult::clients)
                .thenComparingInt(r -> targetOrder(r.target())));
        for (BenchResult r : sorted) {
            out.append("| ").append(r.workload()).append(" | ").append(r.clients()).append(" | ").append(r.target())
                    .append(" | ").append(rate(r.opsPerSec())).append(" | ").append(ms(r.p50Ms())).append(" | ")
                    .append(ms(r.p99Ms())).append(" | ").append(ms(r.maxMs())).append(" | ").append(r.overlaps())
                    .append(" | ").append(notes(r)).append(" |");
            for (String p : peers) {
                OptionalDouble ratio = r.target().startsWith("tenure") ? ratio(r, p, results) : OptionalDouble.empty();
                out.append(' ').append(ratio.isPresent() ? String.format(Locale.ROOT, "%.2f", ratio.getAsDouble()) : "").append(" |");
            }
            out.append('\n');
        }
        return out.toString();
    }

    /**
     * {@code tenure}'s figure against the mean of {@code peer}'s rows of the same workload and
     * clients; above 1 means Tenure is ahead. Empty when the peer has no such row or a zero figure.
     */
    static OptionalDouble ratio(BenchResult tenure, String peer, List<BenchResult> all) {
        OptionalDouble peerFigure = all.stream()
                .filter(r -> r.target().equals(peer) && r.workload().equals(tenure.workload()) && r.clients() == tenure.clients())
                .mapToDouble(ResultTable::figure).filter(f -> f > 0).average();
        double own = figure(tenure);
        if (peerFigure.isEmpty() || own <= 0) {
            return OptionalDouble.empty();
        }
        return tenure.workload().equals("W5")
                ? OptionalDouble.of(peerFigure.getAsDouble() / own)
                : OptionalDouble.of(own / peerFigure.getAsDouble());
    }

    /** The figure a ratio compares: throughput, W3's keep-alives/s, W5's median failover (lower is better). */
    static double figure(BenchResult r) {
        return switch (r.workload()) {
            case "W3" -> number(r.extra(), "keepalives_per_sec", r.opsPerSec());
            case "W5" -> number(r.extra(), "median_ms", r.p50Ms());
            default -> r.opsPerSec();
        };
    }

    private static String notes(BenchResult r) {
        Map<String, Object> x = r.extra();
        return switch (r.workload()) {
            case "W2" -> x.containsKey("fairness_min_over_max") ? "fairness min/max " + x.get("fairness_min_over_max") : "";
            case "W3" -> "lost " + x.getOrDefault("lost", "?") + ", keep-alive p99 " + x.getOrDefault("keepalive_p99_ms", "?")
                    + " ms, heap/lease " + x.getOrDefault("server_heap_bytes_per_lease", "?") + " B";
            case "W4" -> x.containsKey("events_per_sec") ? rate(number(x, "events_per_sec", 0)) + " events/s to "
                    + x.getOrDefault("watchers", "?") + " watchers, delivery p99 " + x.getOrDefault("delivery_p99_ms", "?") + " ms" : "";
            case "W5" -> "failover median " + x.getOrDefault("median_ms", "?") + " ms, worst " + x.getOrDefault("worst_ms", "?") + " ms";
            default -> "";
        };
    }

    private static double number(Map<String, Object> extra, String key, double otherwise) {
        return extra.get(key) instanceof Number n ? n.doubleValue() : otherwise;
    }

    private static int targetOrder(String target) {
        int i = TARGETS.indexOf(target);
        return i < 0 ? TARGETS.size() : i;
    }

    private static String rate(double perSecond) {
        return perSecond >= 100 ? String.format(Locale.ROOT, "%,.0f", perSecond) : String.format(Locale.ROOT, "%.1f", perSecond);
    }

    private static String ms(double ms) {
        return String.format(Locale.ROOT, "%.2f", ms);
    }
}
