package io.tenure.bench;

import io.tenure.client.Lease;
import io.tenure.client.LockHandle;
import io.tenure.client.TenureClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.HdrHistogram.Histogram;

/**
 * W2: every client waits for the same key, holds it for no time and releases it, then queues
 * again. One op is one acquisition (a hand-off through the FIFO queue); the latency is the
 * acquire wait. Per-client counts show fairness: with FIFO hand-off they are nearly equal.
 */
final class Contended {
    static final String KEY = "bench/w2";

    private Contended() {
    }

    static BenchResult run(Members members, BenchSettings s) throws Exception {
        try (SdkClients sdks = new SdkClients(members.endpoints(), s.clients(), "bench-w2", s.unaryLockCalls())) {
            Exclusion exclusion = new Exclusion();
            List<Lease> leases = new ArrayList<>();
            for (int i = 0; i < s.clients(); i++) {
                leases.add(sdks.get(i).grantLease(s.ttl()));
            }
            Window window = new Window(s.warmup(), s.duration());
            CpuMeter cpu = CpuMeter.during(members, window);
            Histogram[] waits = new Histogram[s.clients()];
            long[] acquisitions = new long[s.clients()];
            AtomicReference<Throwable> failure = new AtomicReference<>();
            List<Thread> threads = new ArrayList<>();
            for (int i = 0; i < s.clients(); i++) {
                int client = i;
                waits[i] = Latencies.histogram();
                Thread thread = new Thread(() -> {
                    TenureClient sdk = sdks.get(client);
                    Lease lease = leases.get(client);
                    try {
                        while (!window.over(System.nanoTime()) && failure.get() == null) {
                            long began = System.nanoTime();
                            LockHandle handle = sdk.acquire(KEY, lease, Duration.ofSeconds(30), null);
                            long granted = System.nanoTime();
                            exclusion.enter(KEY);
                            exclusion.exit(KEY);
                            handle.release();
                            if (window.counts(began, granted)) {
                                Latencies.recordNanos(waits[client], granted - began);
                                acquisitions[client]++;
                            }
                        }
                    } catch (Throwable t) {
                        failure.compareAndSet(null, t);
                    }
                }, "bench-w2-" + i);
                thread.start();
                threads.add(thread);
            }
            for (Thread t : threads) {
                t.join();
            }
            if (failure.get() != null) {
                throw new IllegalStateException("W2 client failed: " + failure.get(), failure.get());
            }
            for (Lease lease : leases) {
                lease.close();
            }
            Histogram all = Latencies.histogram();
            long total = 0;
            long min = Long.MAX_VALUE;
            long max = 0;
            List<Long> counts = new ArrayList<>();
            for (int i = 0; i < s.clients(); i++) {
                all.add(waits[i]);
                total += acquisitions[i];
                min = Math.min(min, acquisitions[i]);
                max = Math.max(max, acquisitions[i]);
                counts.add(acquisitions[i]);
            }
            Map<String, Object> x = new LinkedHashMap<>();
            x.put("acquisitions", counts);
            x.put("wait_p50_ms", BenchResult.round(Latencies.ms(all, 50)));
            x.put("wait_p99_ms", BenchResult.round(Latencies.ms(all, 99)));
            x.put("fairness_min_over_max", max == 0 ? 0 : BenchResult.round((double) min / max));
            x.put("lock_calls", s.unaryLockCalls() ? "unary" : "session");
            cpu.report(total, window.seconds(), x);
            return new BenchResult(s.target(), s.workload(), s.clients(), window.seconds(), total, total / window.seconds(),
                    Latencies.ms(all, 50), Latencies.ms(all, 99), Latencies.maxMs(all), exclusion.overlaps(), x);
        }
    }
}
