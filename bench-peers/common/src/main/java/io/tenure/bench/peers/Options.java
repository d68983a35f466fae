package io.tenure.bench.peers;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The command line every driver takes, the same as the tenure-bench side:
 * {@code --workload W1|W2|W6|W7|W8|W9|W10 --clients N --duration 20s --warmup 5s --endpoint host:port}; W3
 * (lease keep-alives, etcd only) adds {@code --leases 10000 --ttl 6s}; W6 (one semaphore, ZooKeeper
 * and Redis) takes {@code --limit 8}, its permits; W7 (one read/write lock, ZooKeeper and Redis)
 * takes {@code --reads 0.9}, the share of its acquisitions that are reads. W10 runs {@code --clients}
 * producers and as many consumers.
 *
 * <p>{@code --endpoint} may name several members of one cluster, comma-separated
 * ({@code 127.0.0.1:2379,127.0.0.1:2381,127.0.0.1:2383}); {@link #host()} and {@link #port()} are
 * the first, {@link #endpoints()} all of them. {@code --target NAME} sets the {@code target} field
 * of the JSON line; without it a driver names itself ({@code etcd}) for one endpoint and
 * {@code etcd-N} for N endpoints (see {@link #target(String)}).
 */
public record Options(String workload, int clients, Duration duration, Duration warmup, String host, int port,
                      int leases, Duration ttl, int limit, double reads, List<String> endpoints, String label) {

    /** W7's share of reads, as issue 17 defines it. */
    public static final double DEFAULT_READS = 0.9;

    public Options {
        endpoints = List.copyOf(endpoints);
    }

    public static Options parse(String[] args, int defaultPort) {
        String workload = "W1";
        int clients = 1;
        Duration duration = Duration.ofSeconds(20);
        Duration warmup = Duration.ofSeconds(5);
        String endpoint = "127.0.0.1:" + defaultPort;
        int leases = 10_000;
        Duration ttl = Duration.ofSeconds(6);
        int limit = 8;
        double reads = DEFAULT_READS;
        String label = null;
        for (int i = 0; i < args.length; i++) {
            String flag = args[i];
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException("missing value after " + flag);
            }
            String value = args[++i];
            switch (flag) {
                case "--workload" -> workload = value.toUpperCase();
                case "--clients" -> clients = Integer.parseInt(value);
                case "--duration" -> duration = parseDuration(value);
                case "--warmup" -> warmup = parseDuration(value);
                case "--endpoint" -> endpoint = value;
                case "--leases" -> leases = Integer.parseInt(value);
                case "--ttl" -> ttl = parseDuration(value);
                case "--limit" -> limit = Integer.parseInt(value);
                case "--reads" -> reads = Double.parseDouble(value);
                case "--target" -> label = value.isBlank() ? null : value.trim();
                default -> throw new IllegalArgumentException("unknown flag " + flag
                        + " (expected --workload W1|W2|W3|W6|W7|W8 --clients N --duration 20s --warmup 5s"
                        + " --endpoint host:port[,host:port...] [--target NAME] [--leases N --ttl 6s] [--limit N]"
                        + " [--reads 0.9])");
            }
        }
        if (!List.of("W1", "W2", "W3", "W6", "W7", "W8", "W9", "W10").contains(workload)) {
            throw new IllegalArgumentException("--workload must be W1, W2, W3, W6, W7, W8, W9 or W10, not " + workload);
        }
        if (clients < 1) {
            throw new IllegalArgumentException("--clients must be at least 1");
        }
        if (limit < 1) {
            throw new IllegalArgumentException("--limit must be at least 1");
        }
        if (!(reads >= 0 && reads <= 1)) {
            throw new IllegalArgumentException("--reads must be between 0 and 1, not " + reads);
        }
        List<String> endpoints = new ArrayList<>();
        for (String part : endpoint.split(",")) {
            String e = part.trim();
            if (e.isEmpty()) {
                continue;
            }
            int colon = e.lastIndexOf(':');
            if (colon <= 0 || colon == e.length() - 1) {
                throw new IllegalArgumentException("--endpoint must be host:port[,host:port...], not " + endpoint);
            }
            try {
                Integer.parseInt(e.substring(colon + 1));
            } catch (NumberFormatException notAPort) {
                throw new IllegalArgumentException("--endpoint must be host:port[,host:port...], not " + endpoint);
            }
            endpoints.add(e);
        }
        if (endpoints.isEmpty()) {
            throw new IllegalArgumentException("--endpoint must be host:port[,host:port...], not " + endpoint);
        }
        String first = endpoints.get(0);
        int colon = first.lastIndexOf(':');
        return new Options(workload, clients, duration, warmup, first.substring(0, colon),
                Integer.parseInt(first.substring(colon + 1)), leases, ttl, limit, reads, endpoints, label);
    }

    /**
     * The {@code target} field of the JSON line for a driver called {@code driver}: {@code --target}
     * when given, else {@code driver} for one endpoint and {@code driver-N} for N endpoints.
     */
    public String target(String driver) {
        if (label != null) {
            return label;
        }
        return endpoints.size() == 1 ? driver : driver + "-" + endpoints.size();
    }

    /** Accepts {@code 20s}, {@code 500ms}, {@code 2m} or a bare number of seconds. */
    static Duration parseDuration(String text) {
        String t = text.trim().toLowerCase();
        if (t.endsWith("ms")) {
            return Duration.ofMillis(Long.parseLong(t.substring(0, t.length() - 2)));
        }
        if (t.endsWith("s")) {
            return Duration.ofSeconds(Long.parseLong(t.substring(0, t.length() - 1)));
        }
        if (t.endsWith("m")) {
            return Duration.ofMinutes(Long.parseLong(t.substring(0, t.length() - 1)));
        }
        return Duration.ofSeconds(Long.parseLong(t));
    }
}
