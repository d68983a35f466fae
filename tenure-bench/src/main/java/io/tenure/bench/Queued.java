package io.tenure.bench;

import io.tenure.client.Lease;
import io.tenure.client.TenureQueue;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * W10: a blocking queue with as many producers as consumers ({@code --clients} of each) on one
 * list. Producers push numbered items ({@code offer}) at the tail, each once the last is
 * acknowledged, holding back while {@value #BACKLOG} acknowledged items wait unpopped (so the run
 * measures hand-off, not an ever-longer list); consumers pop from the head, each with its own lease,
 * waiting up to {@code POLL} for an item ({@code poll(timeout)}). One op is an item popped inside
 * the measured window; its latency runs from the start of its push to the end of its pop. When the
 * window ends the producers stop and the consumers drain the list. Checked all the time: no item
 * is popped twice ({@code duplicates}, reported in the overlaps field) and at the end every
 * acknowledged push was popped ({@code lost}); either fails the run.
 */
final class Queued {
    static final String QUEUE = "bench/w10";
    /** Acknowledged items not yet popped beyond which producers wait. */
    static final int BACKLOG = 1_000;
    static final Duration POLL = Duration.ofMillis(500);
    /** How long the consumers may take to drain the list once the producers stopped. */
    static final long DRAIN_NANOS = TimeUnit.SECONDS.toNanos(60);

    private Queued() {
    }

    static BenchResult run(Members members, BenchSettings s) throws Exception {
        int n = s.clients();
        try (SdkClients producing = new SdkClients(members, n, "bench-w10-producer", s.unaryLockCalls());
             SdkClients consuming = new SdkClients(members, n, "bench-w10-consumer", s.unaryLockCalls())) {
            // One lease per consumer: a lease waits at most once in a list's queue.
            List<Lease> leases = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                leases.add(consuming.get(i).grantLease(s.ttl()));
            }
            Ledger ledger = new Ledger(n);
            Window window = new Window(s.warmup(), s.duration());
            CpuMeter cpu = CpuMeter.during(members, window);
            ClientLoops loops = new ClientLoops("W10", n);
            List<Thread> producers = new ArrayList<>();
            List<Thread> consumers = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                int client = i;
                consumers.add(loops.start("bench-w10-consumer-" + i, () -> {
                    TenureQueue queue = consuming.get(client).queue(QUEUE, leases.get(client));
                    while (!loops.failed() && ledger.wanted()) {
                        Optional<byte[]> item = queue.poll(POLL);
                        if (item.isPresent()) {
                            long now = System.nanoTime();
                            long sent = ledger.popped(item.get());
                            if (window.counts(now, now)) {
                                loops.counted(client, now - sent);
                            }
                        }
                    }
                }));
            }
            for (int i = 0; i < n; i++) {
                int client = i;
                producers.add(loops.start("bench-w10-producer-" + i, () -> {
                    TenureQueue queue = producing.get(client).queue(QUEUE);
                    for (int sequence = 0; !window.over(System.nanoTime()) && !loops.failed(); sequence++) {
                        while (ledger.backlog() >= BACKLOG && !window.over(System.nanoTime())) {
                            LockSupport.parkNanos(100_000);
                        }
                        queue.offer(Ledger.item(client, sequence, System.nanoTime()));
                        ledger.pushed(client, sequence);
                    }
                }));
            }
            try {
                loops.join(producers);
            } finally {
                ledger.producersStopped();
                loops.join(consumers);
            }
            leases.forEach(Lease::close);
            Map<String, Object> x = new LinkedHashMap<>();
            x.put("recipe", "queue(name).offer at the tail; queue(name, own lease).poll(" + POLL.toMillis() + " ms) at the head");
            x.put("producers", n);
            x.put("consumers", n);
            x.put("backlog_limit", BACKLOG);
            x.put("sdk_clients", producing.size() + consuming.size());
            x.put("acknowledged", ledger.acknowledged());
            x.put("popped", ledger.poppedDistinct());
            x.put("duplicates", ledger.duplicates());
            x.put("lost", ledger.lost());
            return loops.result(s, window, cpu, ledger.duplicates(), x);
        }
    }

    /** Which items were pushed (acknowledged) and popped, by producer and number. Thread-safe. */
    static final class Ledger {
        private final BitSet[] pushed;
        private final BitSet[] popped;
        private final AtomicLong acknowledged = new AtomicLong();
        private final AtomicLong poppedDistinct = new AtomicLong();
        private final AtomicLong duplicates = new AtomicLong();
        private volatile long drainUntil = Long.MAX_VALUE;
        private volatile boolean producersStopped;

        Ledger(int producers) {
            pushed = new BitSet[producers];
            popped = new BitSet[producers];
            for (int i = 0; i < producers; i++) {
                pushed[i] = new BitSet();
                popped[i] = new BitSet();
            }
        }

        /** Producer {@code producer}'s item {@code sequence}, pushed at {@code sentNanos}: 16 bytes. */
        static byte[] item(int producer, int sequence, long sentNanos) {
            return ByteBuffer.allocate(16).putInt(producer).putInt(sequence).putLong(sentNanos).array();
        }

        void pushed(int producer, int sequence) {
            synchronized (pushed[producer]) {
                pushed[producer].set(sequence);
            }
            acknowledged.incrementAndGet();
        }

        /** Records a popped item; returns when it was sent. */
        long popped(byte[] item) {
            ByteBuffer b = ByteBuffer.wrap(item);
            int producer = b.getInt();
            int sequence = b.getInt();
            long sent = b.getLong();
            if (producer < 0 || producer >= popped.length || sequence < 0) {
                throw new IllegalStateException("an item no producer pushed: " + java.util.HexFormat.of().formatHex(item));
            }
            boolean again;
            synchronized (popped[producer]) {
                again = popped[producer].get(sequence);
                popped[producer].set(sequence);
            }
            if (again) {
                duplicates.incrementAndGet();
            } else {
                poppedDistinct.incrementAndGet();
            }
            return sent;
        }

        /** Acknowledged items not popped yet (about: a pop may land before its push's acknowledgement). */
        long backlog() {
            return acknowledged.get() - poppedDistinct.get();
        }

        void producersStopped() {
            drainUntil = System.nanoTime() + DRAIN_NANOS;
            producersStopped = true;
        }

        /** Whether consumers should go on: while producers run, then until every acknowledged item is popped or the drain time is up. */
        boolean wanted() {
            if (!producersStopped) {
                return true;
            }
            return backlog() > 0 && System.nanoTime() - drainUntil < 0;
        }

        long acknowledged() {
            return acknowledged.get();
        }

        long poppedDistinct() {
            return poppedDistinct.get();
        }

        long duplicates() {
            return duplicates.get();
        }

        /** Acknowledged items never popped. */
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
