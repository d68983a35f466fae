package io.tenure.bench.peers;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Histogram;

/**
 * Runs one workload against one peer and prints one JSON line, in the format the tenure-bench side
 * prints for Tenure.
 *
 * <ul>
 *   <li>W1, uncontended: client {@code i} locks and unlocks its own key in a loop. {@code ops} are
 *       lock+unlock cycles; latencies are of the whole cycle.
 *   <li>W2, contended: every client locks and unlocks one key. {@code ops} are acquisitions, that
 *       is hand-offs; latencies are of the cycle, and {@code extra} adds the acquire wait
 *       percentiles and each client's acquisition count, with their min/max (fairness).
 *   <li>W6, one semaphore ({@link SemaphoreTarget}): every client takes one permit of a semaphore
 *       of {@link Options#limit()} permits and gives it back. Measured and reported as W2, with
 *       the limit and the most holders seen at once added to {@code extra}.
 *   <li>W7, one read/write lock ({@link ReadWriteLockTarget}): every client draws a read with
 *       probability {@link Options#reads()} (else a write) from its own {@link SplittableRandom},
 *       seeded {@link #READ_WRITE_SEED} + client so each client draws the same sequence on every
 *       run, takes that lock and releases it. Measured and reported as W2 ({@code ops} are
 *       grants, reads and writes together), with the reads and writes, their acquire waits and
 *       the most readers seen at once added to {@code extra}.
 *   <li>W8, one counter ({@link CounterTarget}): every client increments one counter in a loop.
 *       {@code ops} are acknowledged increments; each answer must be a value no other increment
 *       was answered ({@code duplicates}, reported in the overlaps field), and at the end the
 *       counter must equal the increments acknowledged ({@code lost}).
 *   <li>W9 and W10, keys and a queue ({@link KvTarget}, {@link QueueTarget}): see {@link DataBench}.
 * </ul>
 *
 * <p>An operation counts when its acquisition falls inside the measured window (after the
 * warm-up, for the duration), so waits that began during the warm-up are measured too and
 * hand-offs/s is not biased by the queue standing at the window's start.
 *
 * <p>Mutual exclusion is checked all the time, warm-up included: a holder counter per key in this
 * process, raised after the peer grants the lock and lowered before the release is sent. A second
 * holder of a key (W6: one more than the limit; W7: a writer beside anyone, a reader beside a
 * writer) is an overlap; any overlap makes the run exit non-zero after printing its line.
 */
public final class PeerBench {

    /** Latencies above this are clamped (and still counted) rather than dropped. */
    static final long HIGHEST_NANOS = TimeUnit.MINUTES.toNanos(2);
    /** How long the clients may take past the window to finish their last cycle. */
    static final long DRAIN_SECONDS = 60;
    /** W7: client {@code i} draws its reads and writes from {@code new SplittableRandom(READ_WRITE_SEED + i)}. */
    public static final long READ_WRITE_SEED = 7;
    /**
     * W7's weight of a writer in the holder counter, a reader's being one: the counter is the
     * readers inside plus this for each writer, so a writer is visible to every count.
     */
    private static final long WRITER = 1L << 32;

    private PeerBench() {}

    /** The driver's {@code main}: parse, run, print, exit with the run's status. */
    public static void main(String[] args, int defaultPort, TargetFactory factory) {
        int status;
        try {
            Options options = Options.parse(args, defaultPort);
            try (PeerTarget target = factory.open(options)) {
                if (options.workload().equals("W3")) {
                    if (!(target instanceof KeepAliveTarget keepAlives)) {
                        throw new IllegalArgumentException(target.name() + " has no W3 driver");
                    }
                    status = keepAlives.runKeepAlives(options);
                } else if (options.workload().equals("W6") && !(target instanceof SemaphoreTarget)) {
                    throw new IllegalArgumentException(target.name()
                            + " has no W6 driver: its client library has no semaphore recipe");
                } else if (options.workload().equals("W7") && !(target instanceof ReadWriteLockTarget)) {
                    throw new IllegalArgumentException(target.name()
                            + " has no W7 driver: its client library has no read/write lock recipe");
                } else if (options.workload().equals("W9")) {
                    if (!(target instanceof KvTarget kvs)) {
                        throw new IllegalArgumentException(target.name() + " has no W9 driver");
                    }
                    status = DataBench.runKv(options, target, kvs);
                } else if (options.workload().equals("W10")) {
                    if (!(target instanceof QueueTarget queues)) {
                        throw new IllegalArgumentException(target.name() + " has no W10 driver: it has no queue");
                    }
                    status = DataBench.runQueue(options, target, queues);
                } else if (options.workload().equals("W8")) {
                    if (!(target instanceof CounterTarget counters)) {
                        throw new IllegalArgumentException(target.name() + " has no W8 driver");
                    }
                    status = runCounter(options, target, counters);
                } else {
                    status = run(options, target);
                }
            }
        } catch (IllegalArgumentException e) {
            System.err.println("usage error: " + e.getMessage());
            status = 64;
        } catch (Exception e) {
            System.err.println("peer run failed: " + e);
            e.printStackTrace();
            status = 1;
        }
        System.out.flush();
        // Client libraries leave non-daemon threads behind (event loops, schedulers).
        Runtime.getRuntime().halt(status);
    }

    /** Opens the shared connection to the peer named by {@link Options#host()} and port. */
    @FunctionalInterface
    public interface TargetFactory {
        PeerTarget open(Options options) throws Exception;
    }

    /** Runs the workload, prints the JSON line and returns the exit status (0 when clean). */
    public static int run(Options options, PeerTarget target) throws Exception {
        boolean semaphore = options.workload().equals("W6");
        boolean readWrite = options.workload().equals("W7");
        boolean contended = semaphore || readWrite || options.workload().equals("W2");
        // Holders allowed inside one key at once: a lock's one, a semaphore's limit (W7: see WRITER).
        int allowed = semaphore ? options.limit() : 1;
        int n = options.clients();
        Map<String, AtomicLong> holders = new ConcurrentHashMap<>();
        AtomicInteger peak = new AtomicInteger();
        AtomicLong overlaps = new AtomicLong();
        AtomicLong errors = new AtomicLong();
        AtomicInteger failedSetups = new AtomicInteger();
        Histogram[] cycle = new Histogram[n];
        Histogram[] wait = new Histogram[n];
        long[] acquisitions = new long[n];
        // W7: each client's reads and writes, and their acquire waits.
        long[] reads = new long[n];
        long[] writes = new long[n];
        Histogram[] readWait = new Histogram[n];
        Histogram[] writeWait = new Histogram[n];
        // Measured from, measured until (nanoTime). Set by the barrier's action, once every client has
        // its owner (lease, session, mutex): setting up 64 owners on a loaded machine can take seconds.
        long[] window = new long[2];
        CyclicBarrier start = new CyclicBarrier(n + 1, () -> {
            window[0] = System.nanoTime() + options.warmup().toNanos();
            window[1] = window[0] + options.duration().toNanos();
        });
        List<Thread> threads = new ArrayList<>(n);

        for (int i = 0; i < n; i++) {
            int client = i;
            cycle[i] = new Histogram(HIGHEST_NANOS, 3);
            wait[i] = new Histogram(HIGHEST_NANOS, 3);
            readWait[i] = new Histogram(HIGHEST_NANOS, 3);
            writeWait[i] = new Histogram(HIGHEST_NANOS, 3);
            String key = readWrite ? "tenure-bench/w7" : semaphore ? "tenure-bench/w6"
                    : contended ? "tenure-bench/w2" : "tenure-bench/w1/" + client;
            Thread t = new Thread(() -> {
                PeerTarget.Locker locker = null;
                ReadWriteLockTarget.Owner owner = null;
                try {
                    if (readWrite) {
                        owner = ((ReadWriteLockTarget) target).readWrite(client);
                    } else {
                        locker = semaphore ? ((SemaphoreTarget) target).permits(client, options.limit()) : target.locker(client);
                    }
                } catch (Exception e) {
                    failedSetups.incrementAndGet();
                    System.err.println("client " + client + " could not start: " + e);
                }
                await(start);
                if (locker == null && owner == null) {
                    return;
                }
                AtomicLong held = holders.computeIfAbsent(key, k -> new AtomicLong());
                SplittableRandom draws = new SplittableRandom(READ_WRITE_SEED + client);
                long from = window[0];
                long until = window[1];
                while (System.nanoTime() < until) {
                    boolean read = readWrite && draws.nextDouble() < options.reads();
                    PeerTarget.Locker by = !readWrite ? locker : read ? owner.reader() : owner.writer();
                    // What this holder adds to the key's counter: W7's writer its weight, anyone else one.
                    long weight = readWrite && !read ? WRITER : 1;
                    long t0 = System.nanoTime();
                    try {
                        PeerTarget.Held lock = by.lock(key);
                        long t1 = System.nanoTime();
                        long inside = held.addAndGet(weight);
                        if (semaphore) {
                            peak.accumulateAndGet((int) inside, Math::max);
                        } else if (read) {
                            peak.accumulateAndGet((int) (inside % WRITER), Math::max);
                        }
                        boolean overlap = !readWrite ? inside > allowed
                                : read ? inside >= WRITER  // a writer is inside
                                : inside != WRITER;        // anyone but this writer is inside
                        if (overlap) {
                            overlaps.incrementAndGet();
                        }
                        held.addAndGet(-weight);
                        lock.unlock();
                        long t2 = System.nanoTime();
                        if (t1 >= from && t1 < until) {
                            acquisitions[client]++;
                            cycle[client].recordValue(Math.min(t2 - t0, HIGHEST_NANOS));
                            wait[client].recordValue(Math.min(t1 - t0, HIGHEST_NANOS));
                            if (readWrite) {
                                (read ? reads : writes)[client]++;
                                (read ? readWait : writeWait)[client].recordValue(Math.min(t1 - t0, HIGHEST_NANOS));
                            }
                        }
                    } catch (Exception e) {
                        if (errors.incrementAndGet() <= 5) {
                            System.err.println("client " + client + ": " + e);
                        }
                        pause();
                    }
                }
                try {
                    (readWrite ? owner : locker).close();
                } catch (Exception e) {
                    System.err.println("client " + client + " close: " + e);
                }
            }, target.name() + "-client-" + i);
            t.setDaemon(true);
            threads.add(t);
            t.start();
        }

        await(start);
        long deadline = window[1] + TimeUnit.SECONDS.toNanos(DRAIN_SECONDS);
        int stuck = 0;
        for (Thread t : threads) {
            long left = deadline - System.nanoTime();
            t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
            if (t.isAlive()) {
                stuck++;
            }
        }

        Histogram cycles = new Histogram(HIGHEST_NANOS, 3);
        Histogram waits = new Histogram(HIGHEST_NANOS, 3);
        long ops = 0;
        for (int i = 0; i < n; i++) {
            cycles.add(cycle[i]);
            waits.add(wait[i]);
            ops += acquisitions[i];
        }
        double seconds = options.duration().toNanos() / 1e9;

        Map<String, Object> extra = new LinkedHashMap<>(target.describe());
        if (semaphore) {
            extra.put("recipe", ((SemaphoreTarget) target).semaphoreRecipe());
        }
        if (readWrite) {
            extra.put("recipe", ((ReadWriteLockTarget) target).readWriteRecipe());
        }
        if (contended) {
            List<Long> perClient = new ArrayList<>(n);
            long min = Long.MAX_VALUE;
            long max = 0;
            for (long a : acquisitions) {
                perClient.add(a);
                min = Math.min(min, a);
                max = Math.max(max, a);
            }
            extra.put("acquisitions", perClient);
            extra.put("wait_p50_ms", ms(waits.getValueAtPercentile(50)));
            extra.put("wait_p99_ms", ms(waits.getValueAtPercentile(99)));
            extra.put("wait_max_ms", ms(waits.getMaxValue()));
            extra.put("fairness_min_over_max", max == 0 ? 0 : Math.round((double) min / max * 1000) / 1000.0);
        }
        if (semaphore) {
            extra.put("limit", options.limit());
            extra.put("permits_per_acquire", 1);
            extra.put("holders_peak", peak.get());
        }
        if (readWrite) {
            Histogram readWaits = new Histogram(HIGHEST_NANOS, 3);
            Histogram writeWaits = new Histogram(HIGHEST_NANOS, 3);
            long readCount = 0;
            long writeCount = 0;
            for (int i = 0; i < n; i++) {
                readWaits.add(readWait[i]);
                writeWaits.add(writeWait[i]);
                readCount += reads[i];
                writeCount += writes[i];
            }
            extra.put("read_share", options.reads());
            extra.put("seed", READ_WRITE_SEED);
            extra.put("reads", readCount);
            extra.put("writes", writeCount);
            extra.put("read_wait_p50_ms", ms(readWaits.getValueAtPercentile(50)));
            extra.put("read_wait_p99_ms", ms(readWaits.getValueAtPercentile(99)));
            extra.put("write_wait_p50_ms", ms(writeWaits.getValueAtPercentile(50)));
            extra.put("write_wait_p99_ms", ms(writeWaits.getValueAtPercentile(99)));
            extra.put("write_wait_max_ms", ms(writeWaits.getMaxValue()));
            extra.put("readers_peak", peak.get());
        }
        extra.put("warmup_s", options.warmup().toNanos() / 1e9);
        extra.put("errors", errors.get());
        if (failedSetups.get() > 0) {
            extra.put("failed_clients", failedSetups.get());
        }
        if (stuck > 0) {
            extra.put("stuck_clients", stuck);
        }

        printLine(target, options, seconds, ops, cycles, overlaps.get(), extra);

        if (overlaps.get() > 0) {
            System.err.println("MUTUAL EXCLUSION VIOLATED: " + overlaps.get() + " overlapping holds");
            return 2;
        }
        if (ops == 0 || failedSetups.get() > 0 || stuck > 0) {
            return 1;
        }
        return 0;
    }

    /** W8: every client increments one counter; see the class comment. */
    static int runCounter(Options options, PeerTarget target, CounterTarget counters) throws Exception {
        String name = "tenure-bench/w8";
        counters.resetCounter(name);
        int n = options.clients();
        Histogram[] cycle = new Histogram[n];
        long[] increments = new long[n];
        long[] attempts = new long[n];
        java.util.BitSet answered = new java.util.BitSet();
        AtomicLong acknowledged = new AtomicLong();
        AtomicLong duplicates = new AtomicLong();
        AtomicLong errors = new AtomicLong();
        AtomicInteger failedSetups = new AtomicInteger();
        long[] window = new long[2];
        CyclicBarrier start = new CyclicBarrier(n + 1, () -> {
            window[0] = System.nanoTime() + options.warmup().toNanos();
            window[1] = window[0] + options.duration().toNanos();
        });
        List<Thread> threads = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            int client = i;
            cycle[i] = new Histogram(HIGHEST_NANOS, 3);
            Thread t = new Thread(() -> {
                CounterTarget.Incrementer incrementer = null;
                try {
                    incrementer = counters.incrementer(client, name);
                } catch (Exception e) {
                    failedSetups.incrementAndGet();
                    System.err.println("client " + client + " could not start: " + e);
                }
                await(start);
                if (incrementer == null) {
                    return;
                }
                long from = window[0];
                long until = window[1];
                while (System.nanoTime() < until) {
                    long t0 = System.nanoTime();
                    try {
                        long value = incrementer.increment();
                        long t1 = System.nanoTime();
                        acknowledged.incrementAndGet();
                        synchronized (answered) {
                            if (value < 1 || value > Integer.MAX_VALUE || answered.get((int) value)) {
                                duplicates.incrementAndGet();
                            } else {
                                answered.set((int) value);
                            }
                        }
                        if (t1 >= from && t1 < until) {
                            increments[client]++;
                            cycle[client].recordValue(Math.min(t1 - t0, HIGHEST_NANOS));
                        }
                    } catch (Exception e) {
                        if (errors.incrementAndGet() <= 5) {
                            System.err.println("client " + client + ": " + e);
                        }
                        pause();
                    }
                }
                attempts[client] = incrementer.attempts();
            }, target.name() + "-client-" + i);
            t.setDaemon(true);
            threads.add(t);
            t.start();
        }
        await(start);
        long deadline = window[1] + TimeUnit.SECONDS.toNanos(DRAIN_SECONDS);
        int stuck = 0;
        for (Thread t : threads) {
            t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
            if (t.isAlive()) {
                stuck++;
            }
        }
        Histogram cycles = new Histogram(HIGHEST_NANOS, 3);
        long ops = 0;
        long tries = 0;
        for (int i = 0; i < n; i++) {
            cycles.add(cycle[i]);
            ops += increments[i];
            tries += attempts[i];
        }
        long finalValue = counters.counterValue(name);
        long lost = Math.abs(finalValue - acknowledged.get());
        double seconds = options.duration().toNanos() / 1e9;
        Map<String, Object> extra = new LinkedHashMap<>(target.describe());
        extra.put("recipe", counters.counterRecipe());
        extra.put("counters", 1);
        extra.put("acknowledged", acknowledged.get());
        extra.put("final_value", finalValue);
        extra.put("duplicates", duplicates.get());
        extra.put("lost", lost);
        if (tries > 0) {
            extra.put("attempts_per_increment", Math.round((double) tries / Math.max(1, acknowledged.get()) * 100) / 100.0);
        }
        extra.put("warmup_s", options.warmup().toNanos() / 1e9);
        extra.put("errors", errors.get());
        if (failedSetups.get() > 0) {
            extra.put("failed_clients", failedSetups.get());
        }
        if (stuck > 0) {
            extra.put("stuck_clients", stuck);
        }
        printLine(target, options, seconds, ops, cycles, duplicates.get(), extra);
        if (duplicates.get() > 0 || lost > 0) {
            System.err.println("COUNTER BROKEN: " + duplicates.get() + " values answered twice, " + lost + " increments lost");
            return 2;
        }
        return ops == 0 || failedSetups.get() > 0 || stuck > 0 ? 1 : 0;
    }

    /** Prints the result line of a run of {@code ops} over {@code seconds}, with its latencies and {@code overlaps}. */
    static void printLine(PeerTarget target, Options options, double seconds, long ops, Histogram cycles, long overlaps,
                                  Map<String, Object> extra) {
        Map<String, Object> line = new LinkedHashMap<>();
        line.put("target", target.name());
        line.put("workload", options.workload());
        line.put("clients", options.clients());
        line.put("seconds", seconds);
        line.put("ops", ops);
        line.put("ops_per_sec", Math.round(ops / seconds * 10) / 10.0);
        line.put("p50_ms", ms(cycles.getValueAtPercentile(50)));
        line.put("p99_ms", ms(cycles.getValueAtPercentile(99)));
        line.put("max_ms", ms(cycles.getMaxValue()));
        line.put("overlaps", overlaps);
        line.put("extra", extra);
        printLine(line);
    }

    /** Prints one result line; the map's order is the field order. */
    public static void printLine(Map<String, Object> line) {
        System.out.println(Json.write(line));
    }

    /** Nanoseconds as milliseconds with three decimals, as every latency field is printed. */
    public static double ms(long nanos) {
        return Math.round(nanos / 1_000.0) / 1_000.0;
    }

    static void await(CyclicBarrier barrier) {
        try {
            barrier.await();
        } catch (Exception e) {
            throw new IllegalStateException("start barrier broken", e);
        }
    }

    /** After an error, so a dead peer does not turn into a busy loop. */
    static void pause() {
        try {
            Thread.sleep(10);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
