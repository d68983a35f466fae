package io.tenure.bench;

import io.tenure.client.Lease;
import io.tenure.client.LockHandle;
import io.tenure.client.TenureClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.HdrHistogram.Histogram;

/**
 * W5: three members; each round kills the leader with kill -9 and times how long until a lock
 * is acquired again through the surviving members (a client that knows only them), with a lease
 * granted before the kill. The killed member is restarted with its data before the next round.
 */
final class Failover {
    /** How long one round may take before the run fails. */
    static final Duration ROUND_LIMIT = Duration.ofSeconds(60);

    private Failover() {
    }

    static BenchResult run(Members members, BenchSettings s) throws Exception {
        Histogram histogram = Latencies.histogram();
        List<Double> failovers = new ArrayList<>();
        Exclusion exclusion = new Exclusion();
        long measuredNanos = 0;
        for (int round = 0; round < s.rounds(); round++) {
            int leader = members.leader(ROUND_LIMIT);
            List<String> survivors = new ArrayList<>(members.endpoints());
            survivors.remove(leader);
            String key = "bench/w5/" + round;
            try (TenureClient client = members.client(survivors).clientId("bench-w5")
                    .requestTimeout(Duration.ofSeconds(5)).build()) {
                Lease lease = client.grantLease(s.ttl());
                long killed = System.nanoTime();
                members.kill9(leader);
                LockHandle handle = acquireAgain(client, lease, s.ttl(), key, killed);
                long acquired = System.nanoTime();
                exclusion.enter(key);
                exclusion.exit(key);
                handle.lease().revokeAsync();
                Latencies.recordNanos(histogram, acquired - killed);
                failovers.add(BenchResult.round((acquired - killed) / 1e6));
                measuredNanos += acquired - killed;
                System.err.printf("tenure bench: W5 round %d: killed n%d, acquired after %.1f ms%n", round + 1, leader + 1,
                        (acquired - killed) / 1e6);
            }
            members.restart(leader);
            members.awaitRejoined(leader, ROUND_LIMIT);
        }
        List<Double> sorted = new ArrayList<>(failovers);
        sorted.sort(null);
        Map<String, Object> x = new LinkedHashMap<>();
        x.put("failover_ms", failovers);
        x.put("median_ms", sorted.size() % 2 == 1 ? sorted.get(sorted.size() / 2)
                : BenchResult.round((sorted.get(sorted.size() / 2 - 1) + sorted.get(sorted.size() / 2)) / 2));
        x.put("worst_ms", sorted.get(sorted.size() - 1));
        double seconds = measuredNanos / 1e9;
        return new BenchResult(s.label(), s.workload(), 1, seconds, failovers.size(), failovers.size() / seconds,
                Latencies.ms(histogram, 50), Latencies.ms(histogram, 99), Latencies.maxMs(histogram), exclusion.overlaps(), x);
    }

    /** Acquires {@code key}, retrying through the survivors; a lease lost meanwhile is granted anew. */
    private static LockHandle acquireAgain(TenureClient client, Lease lease, Duration ttl, String key, long since) throws InterruptedException {
        Lease current = lease;
        RuntimeException last = null;
        while (System.nanoTime() - since < ROUND_LIMIT.toNanos()) {
            try {
                if (!current.isValid()) {
                    current = client.grantLease(ttl);
                }
                return client.acquire(key, current, Duration.ofSeconds(5), null);
            } catch (RuntimeException e) {
                last = e; // no leader yet, or the call died with the old one: try again at once
                Thread.sleep(5); // do not spin a core while the survivors elect
            }
        }
        throw new IllegalStateException("no acquisition within " + ROUND_LIMIT + " after killing the leader: " + last, last);
    }
}
