package io.tenure.bench;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The result of one workload run, printed as one JSON line on stdout (the format is in
 * {@code package-info.java}; peer drivers copy the format, not this class).
 *
 * @param target      {@code tenure-1}, {@code tenure-3}, {@code etcd}, {@code zookeeper} or {@code redis}
 * @param workload    {@code W1} to {@code W7}
 * @param clients     concurrent clients (W3: the lease count; W5: 1)
 * @param seconds     the measured time, warm-up excluded
 * @param ops         operations completed in it (see the format for what one is per workload)
 * @param opsPerSec   {@code ops / seconds}
 * @param overlaps    times more holders were seen inside one key at once than it allows (a lock one,
 *                    a semaphore its limit): anything but 0 fails the run
 * @param extra       workload-specific figures, in insertion order
 */
public record BenchResult(String target, String workload, int clients, double seconds, long ops, double opsPerSec,
                          double p50Ms, double p99Ms, double maxMs, long overlaps, Map<String, Object> extra) {
    private static final ObjectMapper JSON = new ObjectMapper();

    public BenchResult {
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(workload, "workload");
        extra = extra == null ? Map.of() : java.util.Collections.unmodifiableMap(new LinkedHashMap<>(extra));
    }

    /** The one-line JSON form, keys in the documented order. */
    public String toJson() {
        Map<String, Object> line = new LinkedHashMap<>();
        line.put("target", target);
        line.put("workload", workload);
        line.put("clients", clients);
        line.put("seconds", round(seconds));
        line.put("ops", ops);
        line.put("ops_per_sec", round(opsPerSec));
        line.put("p50_ms", round(p50Ms));
        line.put("p99_ms", round(p99Ms));
        line.put("max_ms", round(maxMs));
        line.put("overlaps", overlaps);
        line.put("extra", extra);
        try {
            return JSON.writeValueAsString(line);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write a result as JSON: " + e.getMessage(), e);
        }
    }

    /**
     * Reads one line written by {@link #toJson()} or by a peer driver.
     *
     * @throws IllegalArgumentException if it is not a JSON object with the required fields
     */
    @SuppressWarnings("unchecked")
    public static BenchResult parse(String line) {
        JsonNode node;
        try {
            node = JSON.readTree(line);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("not a JSON result line: " + e.getOriginalMessage());
        }
        if (node == null || !node.isObject() || !node.hasNonNull("target") || !node.hasNonNull("workload")
                || !node.hasNonNull("ops_per_sec")) {
            throw new IllegalArgumentException("not a result line (needs target, workload, ops_per_sec): " + line);
        }
        Map<String, Object> extra = node.has("extra") && node.get("extra").isObject()
                ? JSON.convertValue(node.get("extra"), LinkedHashMap.class) : Map.of();
        return new BenchResult(node.get("target").asText(), node.get("workload").asText(), node.path("clients").asInt(),
                node.path("seconds").asDouble(), node.path("ops").asLong(), node.get("ops_per_sec").asDouble(),
                node.path("p50_ms").asDouble(), node.path("p99_ms").asDouble(), node.path("max_ms").asDouble(),
                node.path("overlaps").asLong(), extra);
    }

    /** Three decimals: microseconds for latencies, enough for rates. */
    static double round(double value) {
        return Math.round(value * 1000.0) / 1000.0;
    }
}
