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
 * W1: each client locks and unlocks its own key in a loop, with its own lease; one op is the
 * cycle acquire + release. Also the writer side of W4, which watches the same keys.
 */
final class Uncontended {
    /** Told of every measured grant: the key, its fencing token (the PUT's revision) and when acquire returned. */
    interface GrantListener {
        void granted(String key, long revision, long completedNanos);

        /** The window the writers measure in, once the leases are granted. */
        default void window(Window window) {
        }
    }

    private Uncontended() {
    }

    static BenchResult run(Members members, BenchSettings s, String keyPrefix, GrantListener listener) throws Exception {
        try (SdkClients sdks = new SdkClients(members, s.clients(), "bench-w1", s.unaryLockCalls())) {
            Exclusion exclusion = new Exclusion();
            List<Lease> leases = new ArrayList<>();
            for (int i = 0; i < s.clients(); i++) {
                leases.add(sdks.get(i).grantLease(s.ttl()));
            }
            Window window = new Window(s.warmup(), s.duration());
            CpuMeter cpu = CpuMeter.during(members, window);
            if (listener != null) {
                listener.window(window);
            }
            Histogram[] cycles = new Histogram[s.clients()];
            long[] ops = new long[s.clients()];
            AtomicReference<Throwable> failure = new AtomicReference<>();
            List<Thread> threads = new ArrayList<>();
            for (int i = 0; i < s.clients(); i++) {
                int client = i;
                cycles[i] = Latencies.histogram();
                Thread thread = new Thread(() -> {
                    TenureClient sdk = sdks.get(client);
                    Lease lease = leases.get(client);
                    String key = keyPrefix + client;
                    try {
                        while (!window.over(System.nanoTime()) && failure.get() == null) {
                            long began = System.nanoTime();
                            LockHandle handle = sdk.acquire(key, lease, Duration.ofSeconds(10), null);
                            long granted = System.nanoTime();
                            if (listener != null) {
                                listener.granted(key, handle.fencingToken(), granted);
                            }
                            exclusion.enter(key);
                            exclusion.exit(key);
                            handle.release();
                            long ended = System.nanoTime();
                            if (window.counts(began, ended)) {
                                Latencies.recordNanos(cycles[client], ended - began);
                                ops[client]++;
                            }
                        }
                    } catch (Throwable t) {
                        failure.compareAndSet(null, t);
                    }
                }, "bench-w1-" + i);
                thread.start();
                threads.add(thread);
            }
            for (Thread t : threads) {
                t.join();
            }
            if (failure.get() != null) {
                throw new IllegalStateException("W1 client failed: " + failure.get(), failure.get());
            }
            for (Lease lease : leases) {
                lease.close();
            }
            Histogram all = Latencies.histogram();
            long total = 0;
            for (int i = 0; i < s.clients(); i++) {
                all.add(cycles[i]);
                total += ops[i];
            }
            Map<String, Object> x = new LinkedHashMap<>();
            x.put("leases", s.clients());
            x.put("sdk_clients", sdks.size());
            x.put("lock_calls", s.unaryLockCalls() ? "unary" : "session");
            cpu.report(total, window.seconds(), x);
            return new BenchResult(s.label(), s.workload(), s.clients(), window.seconds(), total, total / window.seconds(),
                    Latencies.ms(all, 50), Latencies.ms(all, 99), Latencies.maxMs(all), exclusion.overlaps(), x);
        }
    }
}
