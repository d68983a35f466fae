package io.tenure.bench;

import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * One run: which members, which workload, how long.
 *
 * @param target     {@code tenure-1} or {@code tenure-3}
 * @param workload   W1 to W12
 * @param clients    concurrent clients (W1, W2, W4, W6, W7, W8, W9; W10: producers, and as many consumers);
 *                   ignored by W3 and W5
 * @param duration   the measured window (W3: how long the leases are held)
 * @param warmup     run before measuring, on the same members, to get past the JIT (RATIS.md)
 * @param leases     W3: how many leases
 * @param watchers   W4: how many watchers
 * @param rounds     W5: how many leader kills
 * @param limit      W6: the semaphore's limit, the most permits held at once
 * @param jvmOptions of each member JVM
 * @param unaryLockCalls the SDK sends each lock call as a unary RPC instead of in its session
 *                       stream (to measure one against the other)
 * @param tls        the members serve their client ports with TLS and ask every client for a
 *                   certificate (mutual TLS, {@code --client-cert-auth}), made for the run with
 *                   {@code openssl}; the clients present one (to measure what TLS costs)
 * @param auth       authentication on: the run adds a root user, switches it on, and every client
 *                   shows a bearer token (to measure what checking tokens costs)
 */
public record BenchSettings(String target, String workload, int clients, Duration duration, Duration warmup,
                            int leases, int watchers, int rounds, int limit, List<String> jvmOptions, boolean unaryLockCalls,
                            boolean tls, boolean auth) {
    /**
     * Members' heap and collector, as {@code ./tenure server} runs them: a heap big enough for
     * 100,000 leases, as on a small production box, and ZGC (see the {@code tenure} launcher).
     */
    public static final List<String> DEFAULT_JVM_OPTIONS = List.of("-Xmx1g", "-XX:+UseZGC");
    public static final int DEFAULT_LEASES = 10_000;
    public static final int DEFAULT_WATCHERS = 1_000;
    public static final int DEFAULT_ROUNDS = 10;
    /** Clients when none are given (W1, W2, W4). */
    public static final int DEFAULT_CLIENTS = 16;
    /** W6 as issue 17 defines it: 64 clients on one semaphore of limit 8. */
    public static final int DEFAULT_W6_CLIENTS = 64;
    public static final int DEFAULT_LIMIT = 8;
    /** W7 as issue 17 defines it: 64 clients on one read/write lock, 90 % of the acquisitions reads. */
    public static final int DEFAULT_W7_CLIENTS = 64;
    public static final double W7_READS = 0.9;
    /** W8 as issue 18 defines it: 64 clients incrementing one counter. */
    public static final int DEFAULT_W8_CLIENTS = 64;
    /** W9 as issue 18 defines it: 64 clients putting and reading keys. */
    public static final int DEFAULT_W9_CLIENTS = 64;
    /** W10 as issue 18 defines it: 64 producers and 64 consumers on one queue. */
    public static final int DEFAULT_W10_CLIENTS = 64;
    /** W7: client {@code i} draws its reads and writes from {@code new SplittableRandom(READ_WRITE_SEED + i)}, as the peer drivers do. */
    public static final long READ_WRITE_SEED = 7;
    /** W12: the share of range acquisitions that are shared (the rest exclusive). */
    public static final double W12_SHARED = 0.5;
    /** W12: the file whose ranges the clients lock: 1 GiB in 4 KiB pages. */
    public static final long W12_FILE_BYTES = 1L << 30;
    public static final long W12_PAGE_BYTES = 4096;
    /** Clients of W12 when none are given (issue 21: 64). */
    public static final int DEFAULT_W12_CLIENTS = 64;
    /** The SDK's largest semaphore limit. */
    public static final int MAX_LIMIT = 1_000_000;
    /** The workloads, in order. */
    public static final List<String> WORKLOADS = List.of("W1", "W2", "W3", "W4", "W5", "W6", "W7", "W8", "W9", "W10", "W11", "W12", "T1", "T2");
    /** The lease TTL on one member (issue 7's 10 s; W3 keeps leases alive at TTL/3, the SDK's rhythm). */
    public static final Duration TTL = Duration.ofSeconds(10);
    /**
     * The lease TTL on three members: a cluster refuses TTLs under 10 election timeouts and under
     * 5 s, so that a kept-alive lease survives a failover; 30 s leaves room for a member started
     * with a longer election timeout.
     */
    public static final Duration CLUSTER_TTL = Duration.ofSeconds(30);

    public BenchSettings {
        target = target.toLowerCase(Locale.ROOT);
        workload = workload.toUpperCase(Locale.ROOT);
        if (!target.equals("tenure-1") && !target.equals("tenure-3")) {
            throw new IllegalArgumentException("target must be tenure-1 or tenure-3 (peers have their own drivers), got " + target);
        }
        if (!WORKLOADS.contains(workload)) {
            throw new IllegalArgumentException("workload must be W1..W12, T1 or T2, got " + workload);
        }
        if (workload.equals("W5") && !target.equals("tenure-3")) {
            throw new IllegalArgumentException("W5 (failover) needs --target tenure-3");
        }
        if (workload.equals("W9") && clients > PutGets.KEYS) {
            throw new IllegalArgumentException("W9 shares " + PutGets.KEYS + " keys out among its clients: at most " + PutGets.KEYS
                    + " clients, got " + clients);
        }
        if (clients < 1 || leases < 1 || watchers < 0 || rounds < 1) {
            throw new IllegalArgumentException("clients, leases and rounds must be positive");
        }
        if (limit < 1 || limit > MAX_LIMIT) {
            throw new IllegalArgumentException("limit must be between 1 and " + MAX_LIMIT + ", got " + limit);
        }
        jvmOptions = List.copyOf(jvmOptions);
    }

    /** A run whose SDK clients send their lock calls in session streams, W6 at the default limit. */
    public BenchSettings(String target, String workload, int clients, Duration duration, Duration warmup,
                         int leases, int watchers, int rounds, List<String> jvmOptions) {
        this(target, workload, clients, duration, warmup, leases, watchers, rounds, DEFAULT_LIMIT, jvmOptions, false, false, false);
    }

    /** As this run, with the members and clients on mutual TLS or not. */
    public BenchSettings withTls(boolean tls) {
        return new BenchSettings(target, workload, clients, duration, warmup, leases, watchers, rounds, limit, jvmOptions,
                unaryLockCalls, tls, auth);
    }

    /** As this run, with authentication on (every client showing a bearer token) or not. */
    public BenchSettings withAuth(boolean auth) {
        return new BenchSettings(target, workload, clients, duration, warmup, leases, watchers, rounds, limit, jvmOptions,
                unaryLockCalls, tls, auth);
    }

    /** The target as results name it: {@code tenure-1}, {@code tenure-1+tls}, {@code tenure-1+auth} or {@code tenure-1+tls+auth}. */
    public String label() {
        return target + (tls ? "+tls" : "") + (auth ? "+auth" : "");
    }

    public static BenchSettings of(String target, String workload, int clients, Duration duration, Duration warmup) {
        return new BenchSettings(target, workload, clients, duration, warmup, DEFAULT_LEASES, DEFAULT_WATCHERS,
                DEFAULT_ROUNDS, DEFAULT_JVM_OPTIONS);
    }

    /** The clients of {@code workload} when none are given: 64 for W6 to W10, else 16. */
    public static int defaultClients(String workload) {
        return switch (workload.toUpperCase(Locale.ROOT)) {
            case "W6" -> DEFAULT_W6_CLIENTS;
            case "W7" -> DEFAULT_W7_CLIENTS;
            case "W8" -> DEFAULT_W8_CLIENTS;
            case "W9" -> DEFAULT_W9_CLIENTS;
            case "W10" -> DEFAULT_W10_CLIENTS;
            case "W12" -> DEFAULT_W12_CLIENTS;
            default -> DEFAULT_CLIENTS;
        };
    }

    /** The TTL of every lease this run grants. */
    public Duration ttl() {
        return memberCount() == 1 ? TTL : CLUSTER_TTL;
    }

    public int memberCount() {
        return target.equals("tenure-3") ? 3 : 1;
    }
}
