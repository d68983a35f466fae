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
 *
 * <p>Each ratio column ({@code × etcd}, {@code × zookeeper}, {@code × redis}) means "the peer of
 * the same size": {@code tenure-1} is compared with the single nodes ({@code etcd}, ...) and
 * {@code tenure-3} with the 3-member clusters ({@code etcd-3}, {@code zookeeper-3}) when the
 * results hold any row of that cluster, else with the single node (Redis is only measured as
 * one). A legend under the table says which rows each column compared.
 */
public final class ResultTable {
    /** Row order within a workload and client count. */
    static final List<String> TARGETS = List.of("tenure-1", "tenure-3", "etcd", "etcd-3", "zookeeper", "zookeeper-3", "redis");
    /** The ratio columns, in this order: a peer's single node ({@code etcd}) or clusters ({@code etcd-3}). */
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
     * per peer that has rows (of any size), and under it a legend of what the ratios compared.
     */
    public static String markdown(List<BenchResult> results) {
        List<String> peers = PEERS.stream()
                .filter(p -> results.stream().anyMatch(r -> peerOf(r.target()).equals(p)))
                .toList();
        StringBuilder out = new StringBuilder("| workload | clients | target | ops/s | p50 ms | p99 ms | max ms | overlaps | notes |");
        StringBuilder rule = new StringBuilder("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | --- |");
        for (String p : peers) {
            out.append(" × ").append(p).append(" |");
            rule.append(" ---: |");
        }
        out.append('\n').append(rule).append('\n');
        List<BenchResult> sorted = new ArrayList<>(results);
        sorted.sort(Comparator.comparingInt((BenchResult r) -> workloadOrder(r.workload())).thenComparing(BenchResult::workload)
                .thenComparingInt(BenchResult::clients)
                .thenComparingInt(r -> targetOrder(r.target())));
        for (BenchResult r : sorted) {
            out.append("| ").append(r.workload()).append(" | ").append(r.clients()).append(" | ").append(r.target())
                    .append(" | ").append(rate(r.opsPerSec())).append(" | ").append(ms(r.p50Ms())).append(" | ")
                    .append(ms(r.p99Ms())).append(" | ").append(ms(r.maxMs())).append(" | ").append(r.overlaps())
                    .append(" | ").append(notes(r)).append(" |");
            for (String p : peers) {
                OptionalDouble ratio = isTenure(r.target()) ? ratio(r, comparedWith(r.target(), p, results), results)
                        : OptionalDouble.empty();
                out.append(' ').append(ratio.isPresent() ? String.format(Locale.ROOT, "%.2f", ratio.getAsDouble()) : "").append(" |");
            }
            out.append('\n');
        }
        out.append(legend(peers, results));
        return out.toString();
    }

    /**
     * The target whose rows column {@code peer} compares a {@code tenure} row with: the peer of
     * the same size. {@code tenure-N} (N above 1) gets {@code peer-N} when {@code all} holds any
     * row of it, and otherwise, like {@code tenure-1}, the single node {@code peer}.
     */
    static String comparedWith(String tenure, String peer, List<BenchResult> all) {
        String size = tenure.substring(tenure.lastIndexOf('-') + 1);
        if (!isTenure(tenure) || size.equals("1") || size.equals(tenure)) {
            return peer;
        }
        String cluster = peer + "-" + size;
        return all.stream().anyMatch(r -> r.target().equals(cluster)) ? cluster : peer;
    }

    /** The peer system of a target ({@code etcd} for {@code etcd} and {@code etcd-3}); the target itself otherwise. */
    static String peerOf(String target) {
        int dash = target.lastIndexOf('-');
        if (dash > 0 && dash + 1 < target.length() && target.substring(dash + 1).chars().allMatch(Character::isDigit)) {
            return target.substring(0, dash);
        }
        return target;
    }

    private static boolean isTenure(String target) {
        return target.startsWith("tenure");
    }

    /**
     * Says, under a table with ratio columns, what a ratio is and which peer rows each Tenure
     * target was compared with; empty without ratio columns.
     */
    private static String legend(List<String> peers, List<BenchResult> results) {
        List<String> tenures = results.stream().map(BenchResult::target).filter(ResultTable::isTenure).distinct()
                .sorted(Comparator.comparingInt(ResultTable::targetOrder).thenComparing(Comparator.naturalOrder())).toList();
        if (peers.isEmpty() || tenures.isEmpty()) {
            return "";
        }
        StringBuilder out = new StringBuilder("\nRatios (× peer): Tenure's figure over the mean of the peer's rows of the same workload and clients"
                + " (ops/s; W3 keep-alives/s; W5 the peer's median failover over Tenure's); above 1 means Tenure is ahead."
                + " Each column compares with the peer of the same size where it was measured, else with its single node:\n");
        for (String t : tenures) {
            out.append("- ").append(t).append(':');
            String sep = " ";
            for (String p : peers) {
                String with = comparedWith(t, p, results);
                out.append(sep).append("× ").append(p).append(" = ").append(with);
                if (!t.equals("tenure-1") && with.equals(p)) {
                    out.append(" (single node)");
                }
                sep = ", ";
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
            case "W6" -> "limit " + x.getOrDefault("limit", "?") + (x.containsKey("fairness_min_over_max")
                    ? ", fairness min/max " + x.get("fairness_min_over_max") : "")
                    + (x.containsKey("holders_peak") ? ", peak holders " + x.get("holders_peak") : "");
            case "W7" -> "read share " + x.getOrDefault("read_share", "?") + (x.containsKey("fairness_min_over_max")
                    ? ", fairness min/max " + x.get("fairness_min_over_max") : "")
                    + (x.containsKey("write_wait_p99_ms") ? ", write wait p99 " + x.get("write_wait_p99_ms") + " ms" : "")
                    + (x.containsKey("readers_peak") ? ", peak readers " + x.get("readers_peak") : "");
            case "W8" -> "duplicates " + x.getOrDefault("duplicates", "?") + ", lost " + x.getOrDefault("lost", "?")
                    + (x.containsKey("recipe") ? ", " + x.get("recipe") : "");
            case "W9" -> "stale reads " + x.getOrDefault("stale_reads", "?") + (x.containsKey("recipe") ? ", " + x.get("recipe") : "");
            case "W10" -> "duplicates " + x.getOrDefault("duplicates", "?") + ", lost " + x.getOrDefault("lost", "?")
                    + (x.containsKey("recipe") ? ", " + x.get("recipe") : "");
            case "W11" -> "listeners " + x.getOrDefault("listeners", "?") + ", delivery p50 " + x.getOrDefault("delivery_p50_ms", "?")
                    + " ms, p99 " + x.getOrDefault("delivery_p99_ms", "?") + " ms, out of order " + x.getOrDefault("duplicates", "?")
                    + ", lost " + x.getOrDefault("lost", "?");
            default -> "";
        };
    }

    private static double number(Map<String, Object> extra, String key, double otherwise) {
        return extra.get(key) instanceof Number n ? n.doubleValue() : otherwise;
    }

    /** W1 to W11 in number order (W10 after W9), anything else after them. */
    private static int workloadOrder(String workload) {
        int i = BenchSettings.WORKLOADS.indexOf(workload);
        return i < 0 ? BenchSettings.WORKLOADS.size() : i;
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
