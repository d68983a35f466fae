package io.tenure.bench;

import io.tenure.client.Lease;
import io.tenure.client.LockHandle;
import io.tenure.client.SemaphorePermit;
import io.tenure.client.TenureClient;
import io.tenure.client.TenureSemaphore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiConsumer;
import java.util.function.BiFunction;
import org.HdrHistogram.Histogram;

/**
 * The contended workloads: every client waits for the same name, holds it for no time and
 * releases it, then queues again. One op is one acquisition (a grant through the FIFO queue);
 * the latency is the acquire wait. Per-client counts show fairness: with FIFO grants they are
 * nearly equal.
 * <ul>
 * <li>W2: one lock; each acquisition is a hand-off from the previous holder.
 * <li>W6: one semaphore of {@link BenchSettings#limit()} permits; each client takes one permit
 *     at a time, so up to the limit hold it at once and the rest queue.
 * </ul>
 */
final class Contended {
    static final String KEY = "bench/w2";
    static final String SEMAPHORE = "bench/w6";
    /** How long one acquire may wait: far beyond any wait of a healthy run. */
    private static final Duration WAIT = Duration.ofSeconds(30);

    /** One client's way to the contended name, on its SDK instance and with its own lease. */
    @FunctionalInterface
    private interface Contender {
        /** Blocks until granted; returns what gives the grant back. */
        Runnable acquire();
    }

    private Contended() {
    }

    /** W2: all clients on one lock. */
    static BenchResult lock(Members members, BenchSettings s) throws Exception {
        return run(members, s, KEY, 1, "bench-w2", (sdk, lease) -> () -> {
            LockHandle handle = sdk.acquire(KEY, lease, WAIT, null);
            return handle::release;
        }, (x, exclusion) -> x.put("lock_calls", s.unaryLockCalls() ? "unary" : "session"));
    }

    /** W6: all clients on one semaphore, one permit each. */
    static BenchResult semaphore(Members members, BenchSettings s) throws Exception {
        return run(members, s, SEMAPHORE, s.limit(), "bench-w6", (sdk, lease) -> {
            TenureSemaphore semaphore = sdk.semaphore(SEMAPHORE, s.limit(), lease);
            return () -> {
                SemaphorePermit permit = semaphore.acquire(1, WAIT);
                return permit::release;
            };
        }, (x, exclusion) -> {
            x.put("limit", s.limit());
            x.put("permits_per_acquire", 1);
            x.put("holders_peak", exclusion.peak(SEMAPHORE));
        });
    }

    private static BenchResult run(Members members, BenchSettings s, String name, int allowed, String clientId,
                                   BiFunction<TenureClient, Lease, Contender> contenders,
                                   BiConsumer<Map<String, Object>, Exclusion> extra) throws Exception {
        String label = s.workload().toLowerCase(Locale.ROOT);
        try (SdkClients sdks = new SdkClients(members.endpoints(), s.clients(), clientId, s.unaryLockCalls())) {
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
                    try {
                        Contender contender = contenders.apply(sdks.get(client), leases.get(client));
                        while (!window.over(System.nanoTime()) && failure.get() == null) {
                            long began = System.nanoTime();
                            Runnable release = contender.acquire();
                            long granted = System.nanoTime();
                            exclusion.enter(name, allowed);
                            exclusion.exit(name);
                            release.run();
                            if (window.counts(began, granted)) {
                                Latencies.recordNanos(waits[client], granted - began);
                                acquisitions[client]++;
                            }
                        }
                    } catch (Throwable t) {
                        failure.compareAndSet(null, t);
                    }
                }, "bench-" + label + "-" + i);
                thread.start();
                threads.add(thread);
            }
            for (Thread t : threads) {
                t.join();
            }
            if (failure.get() != null) {
                throw new IllegalStateException(s.workload() + " client failed: " + failure.get(), failure.get());
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
            extra.accept(x, exclusion);
            cpu.report(total, window.seconds(), x);
            return new BenchResult(s.target(), s.workload(), s.clients(), window.seconds(), total, total / window.seconds(),
                    Latencies.ms(all, 50), Latencies.ms(all, 99), Latencies.maxMs(all), exclusion.overlaps(), x);
        }
    }
}
