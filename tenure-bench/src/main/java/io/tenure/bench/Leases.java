package io.tenure.bench;

import io.tenure.client.Lease;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;

/**
 * W3: N leases with a 10 s TTL, kept alive by the SDK (every TTL/3) while held for the
 * duration. Nothing here sends keep-alives: the SDK does, exactly as for an application.
 *
 * <p><b>Observing acknowledgements.</b> The SDK moves a lease's {@link Lease#safeUntil()} to
 * {@code send time + TTL/2} on each acknowledged keep-alive. A sampler scans every lease every
 * {@link #SCAN_MILLIS} ms: a changed value is one ack, and {@code seen - (safeUntil - TTL/2)} is
 * its round trip, overstated by at most the scan period plus the scan itself (reported as
 * {@code keepalive_latency}).
 *
 * <p><b>Server heap per lease.</b> On the leader: {@code jcmd PID GC.run} then the {@code used}
 * figure of {@code jcmd PID GC.heap_info}, before the leases are granted and once they are all
 * granted; the difference over N. It includes everything a live, kept-alive lease costs the
 * server: the state entry, the renewal record, and the keep-alive stream's gRPC buffers.
 */
final class Leases {
    static final long SCAN_MILLIS = 20;
    /** Leases per client id: the server's default limit per client id is 10,000. */
    static final int LEASES_PER_CLIENT_ID = 5_000;

    private Leases() {
    }

    static BenchResult run(Members members, BenchSettings s) throws Exception {
        int n = s.leases();
        int leader = members.leader(java.time.Duration.ofSeconds(30));
        long heapBefore = members.heapUsedAfterGc(leader);
        try (SdkClients sdks = new SdkClients(members.endpoints(), SdkClients.CLIENTS_PER_SDK * SdkClients.MAX_SDKS, "bench-w3")) {
            List<Lease> leases = Collections.synchronizedList(new ArrayList<>(n));
            Semaphore inFlight = new Semaphore(256);
            List<CompletableFuture<Lease>> grants = new ArrayList<>(n);
            long grantStart = System.nanoTime();
            for (int i = 0; i < n; i++) {
                inFlight.acquire();
                CompletableFuture<Lease> grant = sdks.get(i).grantLeaseAsync(s.ttl(), "bench-w3-" + (i / LEASES_PER_CLIENT_ID));
                grant.whenComplete((lease, failure) -> {
                    inFlight.release();
                    if (lease != null) {
                        leases.add(lease);
                    }
                });
                grants.add(grant);
            }
            CompletableFuture.allOf(grants.toArray(CompletableFuture[]::new)).get(10, TimeUnit.MINUTES);
            double grantSeconds = (System.nanoTime() - grantStart) / 1e9;
            System.err.printf("tenure bench: W3 granted %d leases in %.1f s%n", n, grantSeconds);
            long heapAfter = members.heapUsedAfterGc(leader);

            Lease[] all = leases.toArray(Lease[]::new);
            long[] lastSafe = new long[all.length];
            for (int i = 0; i < all.length; i++) {
                lastSafe[i] = all[i].safeUntil();
            }
            long halfTtl = s.ttl().toNanos() / 2;
            Histogram latency = Latencies.histogram();
            long acks = 0;
            Window window = new Window(s.warmup(), s.duration());
            while (!window.over(System.nanoTime())) {
                long scanStart = System.nanoTime();
                for (int i = 0; i < all.length; i++) {
                    long safe = all[i].safeUntil();
                    if (safe != lastSafe[i]) {
                        lastSafe[i] = safe;
                        long seen = System.nanoTime();
                        long sent = safe - halfTtl;
                        if (window.counts(sent, seen)) {
                            acks++;
                            Latencies.recordNanos(latency, seen - sent);
                        }
                    }
                }
                long spent = System.nanoTime() - scanStart;
                TimeUnit.NANOSECONDS.sleep(Math.max(0, TimeUnit.MILLISECONDS.toNanos(SCAN_MILLIS) - spent));
            }
            long lost = 0;
            for (Lease lease : all) {
                if (lease.lost().isDone() || !lease.isValid()) {
                    lost++;
                }
            }
            lost += n - all.length; // grants that failed count as lost too
            for (Lease lease : all) {
                lease.revokeAsync();
            }
            double seconds = window.seconds();
            Map<String, Object> x = new LinkedHashMap<>();
            x.put("leases", n);
            x.put("ttl_ms", s.ttl().toMillis());
            x.put("grant_seconds", BenchResult.round(grantSeconds));
            x.put("keepalives_per_sec", BenchResult.round(acks / seconds));
            x.put("keepalives_per_sec_expected", BenchResult.round(n * 3.0 / s.ttl().toSeconds()));
            x.put("keepalive_p99_ms", BenchResult.round(Latencies.ms(latency, 99)));
            x.put("keepalive_latency", "ack seen minus send time (safeUntil - TTL/2), overstated by up to the "
                    + SCAN_MILLIS + " ms scan period plus the scan");
            x.put("lost", lost);
            x.put("server_heap_bytes_per_lease", heapBefore < 0 || heapAfter < 0 ? -1 : (heapAfter - heapBefore) / n);
            x.put("heap_method", "leader jcmd GC.run + GC.heap_info used, after minus before granting, over N");
            return new BenchResult(s.target(), s.workload(), n, seconds, acks, acks / seconds,
                    Latencies.ms(latency, 50), Latencies.ms(latency, 99), Latencies.maxMs(latency), 0, x);
        }
    }
}
