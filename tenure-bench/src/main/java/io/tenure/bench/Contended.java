package io.tenure.bench;

import io.tenure.client.Lease;
import io.tenure.client.LockHandle;
import io.tenure.client.SemaphorePermit;
import io.tenure.client.TenureClient;
import io.tenure.client.TenureLock;
import io.tenure.client.TenureReadWriteLock;
import io.tenure.client.TenureSemaphore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiConsumer;
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
 * <li>W7: one read/write lock; each client draws a read with probability
 *     {@link BenchSettings#W7_READS} (else a write) from its own {@link SplittableRandom}, seeded
 *     {@link BenchSettings#READ_WRITE_SEED} + its index as the peer drivers seed theirs, so
 *     readers share the lock and a writer holds it alone.
 * </ul>
 */
final class Contended {
    static final String KEY = "bench/w2";
    static final String SEMAPHORE = "bench/w6";
    static final String READ_WRITE = "bench/w7";
    /** How long one acquire may wait: far beyond any wait of a healthy run. */
    private static final Duration WAIT = Duration.ofSeconds(30);

    /** What a grant lets its holder share, for the exclusion check and the counts. */
    private enum Kind {
        /** A lock's holder or one of a semaphore's: counted against what the name allows. */
        HOLDER,
        /** A read lock's holder: shares with readers, never with a writer. */
        READ,
        /** A write lock's holder: shares with no one. */
        WRITE
    }

    /** One grant: its kind and what gives it back. */
    private record Grant(Kind kind, Runnable release) {
    }

    /** One client's way to the contended name, on its SDK instance and with its own lease. */
    @FunctionalInterface
    private interface Contender {
        /** Blocks until granted. */
        Grant acquire();
    }

    /** Makes client {@code client}'s contender; called once, on that client's thread. */
    @FunctionalInterface
    private interface Contenders {
        Contender of(int client, TenureClient sdk, Lease lease);
    }

    /** What the clients counted, for a workload's own fields. */
    private record Tally(Exclusion exclusion, long reads, long writes, Histogram readWaits, Histogram writeWaits) {
    }

    private Contended() {
    }

    /** W2: all clients on one lock. */
    static BenchResult lock(Members members, BenchSettings s) throws Exception {
        return run(members, s, KEY, 1, "bench-w2", (client, sdk, lease) -> () -> {
            LockHandle handle = sdk.acquire(KEY, lease, WAIT, null);
            return new Grant(Kind.HOLDER, handle::release);
        }, (x, tally) -> x.put("lock_calls", s.unaryLockCalls() ? "unary" : "session"));
    }

    /** W6: all clients on one semaphore, one permit each. */
    static BenchResult semaphore(Members members, BenchSettings s) throws Exception {
        return run(members, s, SEMAPHORE, s.limit(), "bench-w6", (client, sdk, lease) -> {
            TenureSemaphore semaphore = sdk.semaphore(SEMAPHORE, s.limit(), lease);
            return () -> {
                SemaphorePermit permit = semaphore.acquire(1, WAIT);
                return new Grant(Kind.HOLDER, permit::release);
            };
        }, (x, tally) -> {
            x.put("limit", s.limit());
            x.put("permits_per_acquire", 1);
            x.put("holders_peak", tally.exclusion().peak(SEMAPHORE));
        });
    }

    /** W7: all clients on one read/write lock, {@link BenchSettings#W7_READS} of the acquisitions reads. */
    static BenchResult readWrite(Members members, BenchSettings s) throws Exception {
        return run(members, s, READ_WRITE, 1, "bench-w7", (client, sdk, lease) -> {
            TenureReadWriteLock rw = sdk.readWriteLock(READ_WRITE, lease);
            TenureLock read = rw.readLock();
            TenureLock write = rw.writeLock();
            SplittableRandom draws = new SplittableRandom(BenchSettings.READ_WRITE_SEED + client);
            return () -> {
                boolean shared = draws.nextDouble() < BenchSettings.W7_READS;
                LockHandle handle = (shared ? read : write).acquire(WAIT);
                if (handle.isShared() != shared) {
                    handle.release();
                    throw new IllegalStateException("a " + (shared ? "read" : "write") + " acquire of " + READ_WRITE
                            + " returned a " + (handle.isShared() ? "shared" : "exclusive") + " grant");
                }
                return new Grant(shared ? Kind.READ : Kind.WRITE, handle::release);
            };
        }, (x, tally) -> {
            x.put("read_share", BenchSettings.W7_READS);
            x.put("seed", BenchSettings.READ_WRITE_SEED);
            x.put("reads", tally.reads());
            x.put("writes", tally.writes());
            x.put("read_wait_p50_ms", BenchResult.round(Latencies.ms(tally.readWaits(), 50)));
            x.put("read_wait_p99_ms", BenchResult.round(Latencies.ms(tally.readWaits(), 99)));
            x.put("write_wait_p50_ms", BenchResult.round(Latencies.ms(tally.writeWaits(), 50)));
            x.put("write_wait_p99_ms", BenchResult.round(Latencies.ms(tally.writeWaits(), 99)));
            x.put("write_wait_max_ms", BenchResult.round(Latencies.maxMs(tally.writeWaits())));
            x.put("readers_peak", tally.exclusion().peak(READ_WRITE));
        });
    }

    private static BenchResult run(Members members, BenchSettings s, String name, int allowed, String clientId,
                                   Contenders contenders, BiConsumer<Map<String, Object>, Tally> extra) throws Exception {
        String label = s.workload().toLowerCase(Locale.ROOT);
        try (SdkClients sdks = new SdkClients(members, s.clients(), clientId, s.unaryLockCalls())) {
            Exclusion exclusion = new Exclusion();
            List<Lease> leases = new ArrayList<>();
            for (int i = 0; i < s.clients(); i++) {
                leases.add(sdks.get(i).grantLease(s.ttl()));
            }
            Window window = new Window(s.warmup(), s.duration());
            CpuMeter cpu = CpuMeter.during(members, window);
            Histogram[] waits = new Histogram[s.clients()];
            long[] acquisitions = new long[s.clients()];
            // W7: each client's reads and writes, and their acquire waits.
            Histogram[] readWaits = new Histogram[s.clients()];
            Histogram[] writeWaits = new Histogram[s.clients()];
            long[] reads = new long[s.clients()];
            long[] writes = new long[s.clients()];
            AtomicReference<Throwable> failure = new AtomicReference<>();
            List<Thread> threads = new ArrayList<>();
            for (int i = 0; i < s.clients(); i++) {
                int client = i;
                waits[i] = Latencies.histogram();
                readWaits[i] = Latencies.histogram();
                writeWaits[i] = Latencies.histogram();
                Thread thread = new Thread(() -> {
                    try {
                        Contender contender = contenders.of(client, sdks.get(client), leases.get(client));
                        while (!window.over(System.nanoTime()) && failure.get() == null) {
                            long began = System.nanoTime();
                            Grant grant = contender.acquire();
                            long granted = System.nanoTime();
                            switch (grant.kind()) {
                                case HOLDER -> {
                                    exclusion.enter(name, allowed);
                                    exclusion.exit(name);
                                }
                                case READ -> {
                                    exclusion.enterRead(name);
                                    exclusion.exitRead(name);
                                }
                                case WRITE -> {
                                    exclusion.enterWrite(name);
                                    exclusion.exitWrite(name);
                                }
                            }
                            grant.release().run();
                            if (window.counts(began, granted)) {
                                Latencies.recordNanos(waits[client], granted - began);
                                acquisitions[client]++;
                                if (grant.kind() == Kind.READ) {
                                    Latencies.recordNanos(readWaits[client], granted - began);
                                    reads[client]++;
                                } else if (grant.kind() == Kind.WRITE) {
                                    Latencies.recordNanos(writeWaits[client], granted - began);
                                    writes[client]++;
                                }
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
            Histogram allReads = Latencies.histogram();
            Histogram allWrites = Latencies.histogram();
            long readCount = 0;
            long writeCount = 0;
            long total = 0;
            long min = Long.MAX_VALUE;
            long max = 0;
            List<Long> counts = new ArrayList<>();
            for (int i = 0; i < s.clients(); i++) {
                all.add(waits[i]);
                allReads.add(readWaits[i]);
                allWrites.add(writeWaits[i]);
                readCount += reads[i];
                writeCount += writes[i];
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
            extra.accept(x, new Tally(exclusion, readCount, writeCount, allReads, allWrites));
            cpu.report(total, window.seconds(), x);
            return new BenchResult(s.label(), s.workload(), s.clients(), window.seconds(), total, total / window.seconds(),
                    Latencies.ms(all, 50), Latencies.ms(all, 99), Latencies.maxMs(all), exclusion.overlaps(), x);
        }
    }
}
