package io.tenure.bench;

import io.tenure.client.Lease;
import io.tenure.client.Scope;
import io.tenure.client.ScopeHandle;
import io.tenure.client.ScopeMode;
import io.tenure.client.ScopePart;
import io.tenure.client.TenureClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicReference;
import org.HdrHistogram.Histogram;

/**
 * W12, lock scopes (issue 21): every client locks a random 4 KiB page of one 1 GiB file (inode
 * 1), shared with probability {@link BenchSettings#W12_SHARED} else exclusive, holds it for no
 * time and lets it go, then draws again. One op is one grant; the latency is the acquire's wait
 * (a wait behind a conflicting holder or an earlier conflicting waiter included). Each client has
 * its SDK instance and its lease, and draws from {@code new SplittableRandom(seed + client)}, so a
 * rerun asks for the same pages in the same order. The overlap check counts two exclusive holders,
 * or a shared and an exclusive one, of one page at once, as seen by the driver.
 */
final class Ranges {
    /** The inode whose bytes are locked. */
    static final long INODE = 1;
    /** W12's seed: client {@code i} draws from {@code new SplittableRandom(SEED + i)}. */
    static final long SEED = 12;
    private static final Duration WAIT = Duration.ofSeconds(30);

    private Ranges() {
    }

    static BenchResult run(Members members, BenchSettings s) throws Exception {
        long pages = BenchSettings.W12_FILE_BYTES / BenchSettings.W12_PAGE_BYTES;
        try (SdkClients sdks = new SdkClients(members, s.clients(), "bench-w12", s.unaryLockCalls())) {
            Exclusion exclusion = new Exclusion();
            List<Lease> leases = new ArrayList<>();
            for (int i = 0; i < s.clients(); i++) {
                leases.add(sdks.get(i).grantLease(s.ttl()));
            }
            Window window = new Window(s.warmup(), s.duration());
            CpuMeter cpu = CpuMeter.during(members, window);
            Histogram[] waits = new Histogram[s.clients()];
            long[] grants = new long[s.clients()];
            long[] shared = new long[s.clients()];
            AtomicReference<Throwable> failure = new AtomicReference<>();
            List<Thread> threads = new ArrayList<>();
            for (int i = 0; i < s.clients(); i++) {
                int client = i;
                waits[i] = Latencies.histogram();
                Thread thread = new Thread(() -> {
                    try {
                        TenureClient sdk = sdks.get(client);
                        Lease lease = leases.get(client);
                        SplittableRandom draws = new SplittableRandom(SEED + client);
                        while (!window.over(System.nanoTime()) && failure.get() == null) {
                            long page = draws.nextLong(pages);
                            boolean isShared = draws.nextDouble() < BenchSettings.W12_SHARED;
                            Scope range = Scope.byteRange(INODE, page * BenchSettings.W12_PAGE_BYTES,
                                    (page + 1) * BenchSettings.W12_PAGE_BYTES);
                            String key = "page-" + page;
                            long began = System.nanoTime();
                            ScopeHandle handle = sdk.lockAll(List.of(new ScopePart(range, isShared ? ScopeMode.SHARED : ScopeMode.EXCLUSIVE)),
                                    lease, WAIT, null);
                            long granted = System.nanoTime();
                            if (isShared) {
                                exclusion.enterRead(key);
                                exclusion.exitRead(key);
                            } else {
                                exclusion.enterWrite(key);
                                exclusion.exitWrite(key);
                            }
                            handle.release();
                            if (window.counts(began, granted)) {
                                Latencies.recordNanos(waits[client], granted - began);
                                grants[client]++;
                                shared[client] += isShared ? 1 : 0;
                            }
                        }
                    } catch (Throwable t) {
                        failure.compareAndSet(null, t);
                    }
                }, "bench-w12-" + i);
                thread.start();
                threads.add(thread);
            }
            for (Thread t : threads) {
                t.join();
            }
            if (failure.get() != null) {
                throw new IllegalStateException("W12 client failed: " + failure.get(), failure.get());
            }
            for (Lease lease : leases) {
                lease.close();
            }
            Histogram all = Latencies.histogram();
            long total = 0;
            long sharedTotal = 0;
            for (int i = 0; i < s.clients(); i++) {
                all.add(waits[i]);
                total += grants[i];
                sharedTotal += shared[i];
            }
            Map<String, Object> x = new LinkedHashMap<>();
            x.put("inode", INODE);
            x.put("file_bytes", BenchSettings.W12_FILE_BYTES);
            x.put("range_bytes", BenchSettings.W12_PAGE_BYTES);
            x.put("shared_share", BenchSettings.W12_SHARED);
            x.put("seed", SEED);
            x.put("shared_grants", sharedTotal);
            x.put("exclusive_grants", total - sharedTotal);
            x.put("wait_p50_ms", BenchResult.round(Latencies.ms(all, 50)));
            x.put("wait_p99_ms", BenchResult.round(Latencies.ms(all, 99)));
            cpu.report(total, window.seconds(), x);
            return new BenchResult(s.label(), s.workload(), s.clients(), window.seconds(), total, total / window.seconds(),
                    Latencies.ms(all, 50), Latencies.ms(all, 99), Latencies.maxMs(all), exclusion.overlaps(), x);
        }
    }
}
