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
 * {@code send time + the safe window} on each acknowledged keep-alive, so a changed value is one ack, sent
 * at {@code safeUntil - the safe window}. Reading every lease costs a core at 100,000 leases if done often,
 * so two samplers share the work:
 * <ul>
 *   <li>the count: every lease every {@link #COUNT_MILLIS} ms (a lease acks once per TTL/3, so no
 *       ack is missed), each ack counted when its send time falls in the measured window, with a
 *       last scan after the window;</li>
 *   <li>the round trip: {@link #LATENCY_SAMPLE} leases spread over all of them, every
 *       {@link #SCAN_MILLIS} ms, {@code seen - sent}, overstated by at most that period plus the
 *       scan (reported as {@code keepalive_latency}).</li>
 * </ul>
 *
 * <p><b>Server heap per lease.</b> On the leader: the live bytes of {@code jcmd PID GC.class_histogram}
 * (a full collection, then every reachable object counted), before the leases are granted and after the
 * measured window and the loss count (the histogram pauses the member); the difference over N. It includes everything a live, kept-alive lease costs the
 * server: the state entry, the renewal record, and the keep-alive stream's gRPC buffers.
 */
final class Leases {
    static final long SCAN_MILLIS = 1;
    static final long COUNT_MILLIS = 500;
    static final int LATENCY_SAMPLE = 500;
    /** Leases per client id: the server's default limit per client id is 10,000. */
    static final int LEASES_PER_CLIENT_ID = 5_000;

    private Leases() {
    }

    /** The acknowledgements since the last count whose keep-alive was sent inside the window. */
    private static long countAcks(Lease[] all, long[] lastSafe, long safeWindow, Window window) {
        long acks = 0;
        for (int i = 0; i < all.length; i++) {
            long safe = all[i].safeUntil();
            if (safe != lastSafe[i]) {
                lastSafe[i] = safe;
                long sent = safe - safeWindow;
                if (window.counts(sent, sent)) {
                    acks++;
                }
            }
        }
        return acks;
    }

    static BenchResult run(Members members, BenchSettings s) throws Exception {
        int n = s.leases();
        int leader = members.leader(java.time.Duration.ofSeconds(30));
        long heapBefore = members.liveHeapBytes(leader);
        try (SdkClients sdks = new SdkClients(members, SdkClients.CLIENTS_PER_SDK * SdkClients.MAX_SDKS, "bench-w3")) {
            List<Lease> leases = Collections.synchronizedList(new ArrayList<>(n));
            Semaphore inFlight = new Semaphore(1024);
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

            Lease[] all = leases.toArray(Lease[]::new);
            long[] lastSafe = new long[all.length];
            for (int i = 0; i < all.length; i++) {
                lastSafe[i] = all[i].safeUntil();
            }
            int step = Math.max(1, all.length / LATENCY_SAMPLE);
            Lease[] sample = new Lease[(all.length + step - 1) / step];
            long[] lastSampled = new long[sample.length];
            for (int i = 0; i < sample.length; i++) {
                sample[i] = all[i * step];
                lastSampled[i] = sample[i].safeUntil();
            }
            long safeWindow = Lease.safeWindowFor(s.ttl()).toNanos();
            Histogram latency = Latencies.histogram();
            long acks = 0;
            Window window = new Window(s.warmup(), s.duration());
            CpuMeter cpu = CpuMeter.during(members, window);
            long nextCount = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(COUNT_MILLIS);
            while (!window.over(System.nanoTime())) {
                long scanStart = System.nanoTime();
                for (int i = 0; i < sample.length; i++) {
                    long safe = sample[i].safeUntil();
                    if (safe != lastSampled[i]) {
                        lastSampled[i] = safe;
                        long seen = System.nanoTime();
                        long sent = safe - safeWindow;
                        if (window.counts(sent, seen)) {
                            Latencies.recordNanos(latency, seen - sent);
                        }
                    }
                }
                if (scanStart - nextCount >= 0) {
                    acks += countAcks(all, lastSafe, safeWindow, window);
                    nextCount += TimeUnit.MILLISECONDS.toNanos(COUNT_MILLIS);
                }
                long spent = System.nanoTime() - scanStart;
                TimeUnit.NANOSECONDS.sleep(Math.max(0, TimeUnit.MILLISECONDS.toNanos(SCAN_MILLIS) - spent));
            }
            // Acks of keep-alives sent inside the window may still be in flight: wait a round trip's worth.
            TimeUnit.MILLISECONDS.sleep(COUNT_MILLIS);
            acks += countAcks(all, lastSafe, safeWindow, window);
            long lost = 0;
            for (Lease lease : all) {
                if (lease.lost().isDone() || !lease.isValid()) {
                    lost++;
                }
            }
            lost += n - all.length; // grants that failed count as lost too
            // Measured last: a heap histogram stops the member for a while (over a second with
            // 100,000 leases), longer than the TTL/6 a kept-alive lease can spare; taken inside
            // the window, it cost leases that the measurement itself had starved.
            long heapAfter = members.liveHeapBytes(leader);
            // No revocations: closing the SDK clients stops every keep-alive, and the members are
            // stopped and their data deleted next. Revoking 100,000 leases one call each kept the
            // client busy for longer than the safe window, and the leases not yet revoked were declared
            // lost (after the count above, but one warning each).
            double seconds = window.seconds();
            Map<String, Object> x = new LinkedHashMap<>();
            x.put("leases", n);
            x.put("ttl_ms", s.ttl().toMillis());
            x.put("grant_seconds", BenchResult.round(grantSeconds));
            x.put("keepalives_per_sec", BenchResult.round(acks / seconds));
            x.put("keepalives_per_sec_expected", BenchResult.round(n * 3.0 / s.ttl().toSeconds()));
            x.put("keepalive_p99_ms", BenchResult.round(Latencies.ms(latency, 99)));
            x.put("keepalive_latency", "ack seen minus send time (safeUntil - safe window) on " + sample.length
                    + " leases spread over all, overstated by up to the " + SCAN_MILLIS + " ms scan period plus the scan");
            x.put("lost", lost);
            x.put("server_heap_bytes_per_lease", heapBefore < 0 || heapAfter < 0 ? -1 : (heapAfter - heapBefore) / n);
            x.put("heap_method", "leader jcmd GC.class_histogram live bytes, after minus before granting, over N");
            cpu.report(acks, seconds, x);
            return new BenchResult(s.label(), s.workload(), n, seconds, acks, acks / seconds,
                    Latencies.ms(latency, 50), Latencies.ms(latency, 99), Latencies.maxMs(latency), 0, x);
        }
    }
}
