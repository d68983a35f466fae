package io.tenure.it.safety;

import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * What a safety run does. Every setting comes from a system property {@code tenure.safety.NAME}
 * or, for {@link SafetyRun#main}, an option {@code --NAME VALUE} (options win):
 *
 * <table>
 *   <tr><th>name</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>time</td><td>600</td><td>seconds of faults (at least {@code minRounds} rounds of every fault kind run, even if longer)</td></tr>
 *   <tr><td>faults</td><td>all</td><td>{@code f1,f2,...} or {@code all}</td></tr>
 *   <tr><td>seed</td><td>1</td><td>the nemesis's schedule and the clients' choices</td></tr>
 *   <tr><td>members</td><td>3</td><td>3 or 5</td></tr>
 *   <tr><td>clients</td><td>6</td><td>client processes, 3 to 8: one watcher, one lease keeper (from 4 on), the rest lock workers</td></tr>
 *   <tr><td>out</td><td>{@code <root>/<time>-seed<N>}</td><td>the run directory (created; must not hold a run)</td></tr>
 *   <tr><td>root</td><td>{@code target/safety}</td><td>where run directories go when {@code out} is not given</td></tr>
 *   <tr><td>electionTimeoutMs</td><td>500</td><td>the members' {@code --election-timeout}</td></tr>
 *   <tr><td>ttlMs</td><td>30 election timeouts</td><td>every lease's TTL (a cluster's minimum is 10 election timeouts)</td></tr>
 *   <tr><td>snapshotEvery</td><td>500</td><td>the members' {@code --snapshot-every} (small, so F10 purges logs)</td></tr>
 *   <tr><td>fence</td><td>at-least</td><td>the resource accepts a token {@code at-least} the highest accepted, or strictly {@code above} it</td></tr>
 *   <tr><td>auditLog</td><td>true</td><td>pass {@code --audit-log members/NAME/audit.jsonl} to every member (the server option the checker needs)</td></tr>
 *   <tr><td>minRounds</td><td>1</td><td>rounds of every fault kind to complete even past {@code time}</td></tr>
 *   <tr><td>ranges</td><td>true</td><td>the lock workers also write byte ranges of one inode under lock scopes ({@link RangeWorker}); false leaves them out</td></tr>
 *   <tr><td>secured</td><td>false</td><td>TLS on the members' client and peer ports, authentication on, and every client a user's bearer token ({@link SecuredRun})</td></tr>
 * </table>
 */
public record SafetyConfig(Duration time, Set<Fault> faults, long seed, int members, int clients, Path runDir,
                           Duration electionTimeout, Duration ttl, long snapshotEvery, FencedResource.Fence fence,
                           boolean auditLog, int minRounds, boolean secured, boolean ranges) {
    public static final String PREFIX = "tenure.safety.";
    public static final Set<String> NAMES = Set.of("time", "faults", "seed", "members", "clients", "out", "root",
            "electionTimeoutMs", "ttlMs", "snapshotEvery", "fence", "auditLog", "minRounds", "secured", "ranges");

    public SafetyConfig {
        if (members != 3 && members != 5) {
            throw new IllegalArgumentException("members must be 3 or 5, got " + members);
        }
        if (clients < 3 || clients > 8) {
            throw new IllegalArgumentException("clients must be 3 to 8, got " + clients);
        }
        if (ttl.compareTo(electionTimeout.multipliedBy(10)) < 0) {
            throw new IllegalArgumentException("the TTL must be at least 10 election timeouts (the cluster's minimum), got "
                    + ttl.toMillis() + " ms for " + electionTimeout.toMillis() + " ms");
        }
        faults = Set.copyOf(faults);
    }

    /** From system properties alone. */
    public static SafetyConfig fromProperties() {
        return from(Map.of());
    }

    /** From {@code --name value} options over system properties. */
    public static SafetyConfig fromArgs(String[] args) {
        Map<String, String> options = new HashMap<>();
        for (int i = 0; i < args.length; i++) {
            if (!args[i].startsWith("--") || i + 1 >= args.length) {
                throw new IllegalArgumentException("expected --name value, got " + args[i]);
            }
            String name = args[i].substring(2);
            if (!NAMES.contains(name)) {
                throw new IllegalArgumentException("unknown option --" + name + " (known: " + new java.util.TreeSet<>(NAMES) + ")");
            }
            options.put(name, args[++i]);
        }
        return from(options);
    }

    private static SafetyConfig from(Map<String, String> options) {
        Setting s = new Setting(options);
        long seed = Long.parseLong(s.get("seed", "1"));
        Duration election = Duration.ofMillis(Long.parseLong(s.get("electionTimeoutMs", "500")));
        Duration ttl = Duration.ofMillis(Long.parseLong(s.get("ttlMs", Long.toString(election.toMillis() * 30))));
        String out = s.get("out", null);
        Path runDir = out != null ? Path.of(out) : Path.of(s.get("root", "target/safety"))
                .resolve(LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")) + "-seed" + seed);
        String fence = s.get("fence", "at-least");
        return new SafetyConfig(
                Duration.ofSeconds(Long.parseLong(s.get("time", "600"))),
                Fault.parse(s.get("faults", "all")),
                seed,
                Integer.parseInt(s.get("members", "3")),
                Integer.parseInt(s.get("clients", "6")),
                runDir.toAbsolutePath(),
                election,
                ttl,
                Long.parseLong(s.get("snapshotEvery", "500")),
                switch (fence) {
                    case "at-least" -> FencedResource.Fence.AT_LEAST;
                    case "above" -> FencedResource.Fence.ABOVE;
                    default -> throw new IllegalArgumentException("fence must be at-least or above, got " + fence);
                },
                Boolean.parseBoolean(s.get("auditLog", "true")),
                Integer.parseInt(s.get("minRounds", "1")),
                Boolean.parseBoolean(s.get("secured", "false")),
                Boolean.parseBoolean(s.get("ranges", "true")));
    }

    public SafetyConfig withFaults(Set<Fault> kinds) {
        return new SafetyConfig(time, EnumSet.copyOf(kinds), seed, members, clients, runDir, electionTimeout, ttl,
                snapshotEvery, fence, auditLog, minRounds, secured, ranges);
    }

    /** The role of client {@code i} (1-based) of {@code clients}: c1 watches, c2 keeps leases (from 4 clients on), the rest lock. */
    public String roleOf(int i) {
        if (i == 1) {
            return "watcher";
        }
        if (i == 2 && clients >= 4) {
            return "keeper";
        }
        return "lock";
    }

    private record Setting(Map<String, String> options) {
        String get(String name, String fallback) {
            String value = options.get(name);
            return value != null ? value : System.getProperty(PREFIX + name, fallback);
        }
    }
}
