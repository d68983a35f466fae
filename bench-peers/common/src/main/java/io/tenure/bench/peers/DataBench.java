package io.tenure.bench.peers;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;

/**
 * W9 and W10, the data workloads of issue 18, as tenure-bench runs them on Tenure ({@code PutGets},
 * {@code Queued}), printed in the same line format.
 *
 * <ul>
 *   <li>W9, keys ({@link KvTarget}): client {@code i} owns the keys of {@value #KEYS} whose number is
 *       {@code i} modulo the clients, and loops over them: a put of a {@value #VALUE_BYTES}-byte
 *       value, then a linearizable read of the same key. {@code ops} are put+get pairs; latencies
 *       are of the pair. As nobody else writes the key, a read that does not answer the value just
 *       put, at a stamp at least the put's, is a {@code stale_read} (the overlaps field).
 *   <li>W10, a queue ({@link QueueTarget}): {@code --clients} producers offer numbered items, each
 *       once the last is acknowledged, holding back while {@value #BACKLOG} acknowledged items wait
 *       unpopped; as many consumers take them, each waiting up to {@value #POLL_MS} ms at a time.
 *       {@code ops} are items taken inside the window; an item's latency runs from the start of its
 *       offer to the end of its take. When the window ends the producers stop and the consumers
 *       drain the queue. An item taken twice is a {@code duplicate} (the overlaps field); an
 *       acknowledged item never taken is {@code lost}.
 * </ul>
 */
final class DataBench {
    static final int KEYS = 1_000;
    static final int VALUE_BYTES = 100;
    static final int BACKLOG = 1_000;
    static final long POLL_MS = 500;

    private DataBench() {}

    /** W9; see the class comment. */
    static int runKv(Options options, PeerTarget target, KvTarget kvs) throws Exception {
        int n = options.clients();
        if (n > KEYS) {
            throw new IllegalArgumentException("W9 shares " + KEYS + " keys out among its clients: at most " + KEYS + " clients");
        }
        Histogram[] cycle = new Histogram[n];
        long[] pairs = new long[n];
        AtomicLong stale = new AtomicLong();
        AtomicLong errors = new AtomicLong();
        AtomicInteger failedSetups = new AtomicInteger();
        long[] window = new long[2];
        CyclicBarrier start = startBarrier(n, options, window);
        List<Thread> threads = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            int client = i;
            cycle[i] = new Histogram(PeerBench.HIGHEST_NANOS, 3);
            threads.add(started(target.name() + "-client-" + i, () -> {
                KvTarget.KvClient kv = null;
                try {
                    kv = kvs.kv(client);
                } catch (Exception e) {
                    failedSetups.incrementAndGet();
                    System.err.println("client " + client + " could not start: " + e);
                }
                PeerBench.await(start);
                if (kv == null) {
                    return;
                }
                int key = client;
                long sequence = 0;
                while (System.nanoTime() < window[1]) {
                    String name = "tenure-bench/w9/" + key;
                    byte[] value = value(client, ++sequence);
                    long t0 = System.nanoTime();
                    try {
                        long stamp = kv.put(name, value);
                        KvTarget.Read read = kv.get(name);
                        long t1 = System.nanoTime();
                        if (read == null || read.stamp() < stamp || !Arrays.equals(read.value(), value)) {
                            stale.incrementAndGet();
                        }
                        if (t1 >= window[0] && t1 < window[1]) {
                            pairs[client]++;
                            cycle[client].recordValue(Math.min(t1 - t0, PeerBench.HIGHEST_NANOS));
                        }
                    } catch (Exception e) {
                        if (errors.incrementAndGet() <= 5) {
                            System.err.println("client " + client + ": " + e);
                        }
                        PeerBench.pause();
                    }
                    key += n;
                    if (key >= KEYS) {
                        key = client;
                    }
                }
            }));
        }
        PeerBench.await(start);
        int stuck = joined(threads, window[1] + TimeUnit.SECONDS.toNanos(PeerBench.DRAIN_SECONDS));
        Histogram cycles = new Histogram(PeerBench.HIGHEST_NANOS, 3);
        long ops = 0;
        for (int i = 0; i < n; i++) {
            cycles.add(cycle[i]);
            ops += pairs[i];
        }
        Map<String, Object> extra = new LinkedHashMap<>(target.describe());
        extra.put("recipe", kvs.kvRecipe());
        extra.put("keys", KEYS);
        extra.put("value_bytes", VALUE_BYTES);
        extra.put("stale_reads", stale.get());
        ended(options, extra, errors.get(), failedSetups.get(), stuck);
        PeerBench.printLine(target, options, options.duration().toNanos() / 1e9, ops, cycles, stale.get(), extra);
        if (stale.get() > 0) {
            System.err.println("STALE READS: " + stale.get() + " reads did not see the put just acknowledged");
            return 2;
        }
        return ops == 0 || failedSetups.get() > 0 || stuck > 0 ? 1 : 0;
    }

    /** W10; see the class comment. */
    static int runQueue(Options options, PeerTarget target, QueueTarget queues) throws Exception {
        String name = "tenure-bench/w10";
        queues.resetQueue(name);
        int n = options.clients();
        Histogram[] latency = new Histogram[n];
        long[] taken = new long[n];
        Ledger ledger = new Ledger(n);
        AtomicLong errors = new AtomicLong();
        AtomicInteger failedSetups = new AtomicInteger();
        long[] window = new long[2];
        CyclicBarrier start = startBarrier(2 * n, options, window);
        List<Thread> producers = new ArrayList<>(n);
        List<Thread> consumers = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            int client = i;
            latency[i] = new Histogram(PeerBench.HIGHEST_NANOS, 3);
            consumers.add(started(target.name() + "-consumer-" + i, () -> {
                QueueTarget.Consumer consumer = null;
                try {
                    consumer = queues.consumer(client, name);
                } catch (Exception e) {
                    failedSetups.incrementAndGet();
                    System.err.println("consumer " + client + " could not start: " + e);
                }
                PeerBench.await(start);
                if (consumer == null) {
                    return;
                }
                while (ledger.wanted()) {
                    try {
                        byte[] item = consumer.poll(POLL_MS);
                        if (item != null) {
                            long now = System.nanoTime();
                            long sent = ledger.popped(item);
                            if (now >= window[0] && now < window[1]) {
                                taken[client]++;
                                latency[client].recordValue(Math.min(Math.max(0, now - sent), PeerBench.HIGHEST_NANOS));
                            }
                        }
                    } catch (Exception e) {
                        if (errors.incrementAndGet() <= 5) {
                            System.err.println("consumer " + client + ": " + e);
                        }
                        PeerBench.pause();
                    }
                }
                try {
                    consumer.close();
                } catch (Exception e) {
                    System.err.println("consumer " + client + " close: " + e);
                }
            }));
            producers.add(started(target.name() + "-producer-" + i, () -> {
                QueueTarget.Producer producer = null;
                try {
                    producer = queues.producer(client, name);
                } catch (Exception e) {
                    failedSetups.incrementAndGet();
                    System.err.println("producer " + client + " could not start: " + e);
                }
                PeerBench.await(start);
                if (producer == null) {
                    return;
                }
                int sequence = 0;
                while (System.nanoTime() < window[1]) {
                    while (ledger.backlog() >= BACKLOG && System.nanoTime() < window[1]) {
                        LockSupport.parkNanos(100_000);
                    }
                    try {
                        producer.offer(Ledger.item(client, sequence, System.nanoTime()));
                        ledger.pushed(client, sequence);
                    } catch (Exception e) {
                        if (errors.incrementAndGet() <= 5) {
                            System.err.println("producer " + client + ": " + e);
                        }
                        PeerBench.pause();
                    }
                    sequence++;
                }
            }));
        }
        PeerBench.await(start);
        long deadline = window[1] + TimeUnit.SECONDS.toNanos(PeerBench.DRAIN_SECONDS);
        int stuck = joined(producers, deadline);
        ledger.producersStopped(deadline);
        stuck += joined(consumers, deadline + TimeUnit.SECONDS.toNanos(5));
        Histogram latencies = new Histogram(PeerBench.HIGHEST_NANOS, 3);
        long ops = 0;
        for (int i = 0; i < n; i++) {
            latencies.add(latency[i]);
            ops += taken[i];
        }
        long lost = ledger.lost();
        Map<String, Object> extra = new LinkedHashMap<>(target.describe());
        extra.put("recipe", queues.queueRecipe());
        extra.put("producers", n);
        extra.put("consumers", n);
        extra.put("backlog_limit", BACKLOG);
        extra.put("acknowledged", ledger.acknowledged.get());
        extra.put("popped", ledger.poppedDistinct.get());
        extra.put("duplicates", ledger.duplicates.get());
        extra.put("lost", lost);
        ended(options, extra, errors.get(), failedSetups.get(), stuck);
        PeerBench.printLine(target, options, options.duration().toNanos() / 1e9, ops, latencies, ledger.duplicates.get(), extra);
        if (ledger.duplicates.get() > 0 || lost > 0) {
            System.err.println("QUEUE BROKEN: " + ledger.duplicates.get() + " items taken twice, " + lost + " acknowledged items never taken");
            return 2;
        }
        return ops == 0 || failedSetups.get() > 0 || stuck > 0 ? 1 : 0;
    }

    /** {@value #VALUE_BYTES} bytes naming the client and the put, so that every put writes a value of its own. */
    static byte[] value(int client, long sequence) {
        byte[] value = new byte[VALUE_BYTES];
        Arrays.fill(value, (byte) '.');
        byte[] label = ("client " + client + " put " + sequence).getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(label, 0, value, 0, Math.min(label.length, VALUE_BYTES));
        return value;
    }

    /** The barrier {@code parties} threads and the main one meet at once set up; it sets the window (from, until). */
    private static CyclicBarrier startBarrier(int parties, Options options, long[] window) {
        return new CyclicBarrier(parties + 1, () -> {
            window[0] = System.nanoTime() + options.warmup().toNanos();
            window[1] = window[0] + options.duration().toNanos();
        });
    }

    private static Thread started(String name, Runnable body) {
        Thread t = new Thread(body, name);
        t.setDaemon(true);
        t.start();
        return t;
    }

    /** Joins the threads until {@code deadline} (nanoTime); returns how many still run. */
    private static int joined(List<Thread> threads, long deadline) throws InterruptedException {
        int stuck = 0;
        for (Thread t : threads) {
            t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
            if (t.isAlive()) {
                stuck++;
            }
        }
        return stuck;
    }

    private static void ended(Options options, Map<String, Object> extra, long errors, int failedSetups, int stuck) {
        extra.put("warmup_s", options.warmup().toNanos() / 1e9);
        extra.put("errors", errors);
        if (failedSetups > 0) {
            extra.put("failed_clients", failedSetups);
        }
        if (stuck > 0) {
            extra.put("stuck_clients", stuck);
        }
    }

    /** W10's items: which were offered (acknowledged) and taken, by producer and number. Thread-safe. */
    static final class Ledger {
        private final BitSet[] pushed;
        private final BitSet[] popped;
        final AtomicLong acknowledged = new AtomicLong();
        final AtomicLong poppedDistinct = new AtomicLong();
        final AtomicLong duplicates = new AtomicLong();
        private volatile long drainUntil;
        private volatile boolean producersStopped;

        Ledger(int producers) {
            pushed = new BitSet[producers];
            popped = new BitSet[producers];
            for (int i = 0; i < producers; i++) {
                pushed[i] = new BitSet();
                popped[i] = new BitSet();
            }
        }

        /** Producer {@code producer}'s item {@code sequence}, offered at {@code sentNanos}: 16 bytes. */
        static byte[] item(int producer, int sequence, long sentNanos) {
            return ByteBuffer.allocate(16).putInt(producer).putInt(sequence).putLong(sentNanos).array();
        }

        void pushed(int producer, int sequence) {
            synchronized (pushed[producer]) {
                pushed[producer].set(sequence);
            }
            acknowledged.incrementAndGet();
        }

        /** Records a taken item; returns when it was offered. */
        long popped(byte[] item) {
            if (item.length != 16) {
                throw new IllegalStateException("an item no producer offered (" + item.length + " bytes)");
            }
            ByteBuffer b = ByteBuffer.wrap(item);
            int producer = b.getInt();
            int sequence = b.getInt();
            long sent = b.getLong();
            if (producer < 0 || producer >= popped.length || sequence < 0) {
                throw new IllegalStateException("an item no producer offered (producer " + producer + ", number " + sequence + ")");
            }
            boolean again;
            synchronized (popped[producer]) {
                again = popped[producer].get(sequence);
                popped[producer].set(sequence);
            }
            (again ? duplicates : poppedDistinct).incrementAndGet();
            return sent;
        }

        long backlog() {
            return acknowledged.get() - poppedDistinct.get();
        }

        void producersStopped(long deadline) {
            drainUntil = deadline;
            producersStopped = true;
        }

        /** Consumers go on while producers run, then until every acknowledged item is taken or the deadline passes. */
        boolean wanted() {
            return !producersStopped || (backlog() > 0 && System.nanoTime() - drainUntil < 0);
        }

        /** Acknowledged items never taken. */
        long lost() {
            long lost = 0;
            for (int i = 0; i < pushed.length; i++) {
                BitSet missing;
                synchronized (pushed[i]) {
                    missing = (BitSet) pushed[i].clone();
                }
                synchronized (popped[i]) {
                    missing.andNot(popped[i]);
                }
                lost += missing.cardinality();
            }
            return lost;
        }
    }
}
