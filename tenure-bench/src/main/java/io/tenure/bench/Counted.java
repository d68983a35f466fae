package io.tenure.bench;

import io.tenure.client.TenureCounter;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * W8: every client increments one counter in a loop ({@code incrementAndGet}, one call each, the
 * next once the last is answered); one op is an acknowledged increment. Checked all the time,
 * warm-up included: each answer is a value no other increment was answered (an increment applied
 * twice, or two answered the same value, is a {@code duplicates}), and at the end the counter
 * equals the number of increments acknowledged ({@code lost} counts the difference). Either makes
 * the run fail, as an overlap does.
 */
final class Counted {
    static final String COUNTER = "bench/w8";

    private Counted() {
    }

    static BenchResult run(Members members, BenchSettings s) throws Exception {
        try (SdkClients sdks = new SdkClients(members, s.clients(), "bench-w8", s.unaryLockCalls())) {
            sdks.get(0).counter(COUNTER).set(0);
            Window window = new Window(s.warmup(), s.duration());
            CpuMeter cpu = CpuMeter.during(members, window);
            ClientLoops loops = new ClientLoops("W8", s.clients());
            BitSet answered = new BitSet();
            AtomicLong acknowledged = new AtomicLong();
            AtomicLong duplicates = new AtomicLong();
            List<Thread> threads = new ArrayList<>();
            for (int i = 0; i < s.clients(); i++) {
                int client = i;
                threads.add(loops.start("bench-w8-" + i, () -> {
                    TenureCounter counter = sdks.get(client).counter(COUNTER);
                    while (!window.over(System.nanoTime()) && !loops.failed()) {
                        long began = System.nanoTime();
                        long value = counter.incrementAndGet();
                        long ended = System.nanoTime();
                        acknowledged.incrementAndGet();
                        synchronized (answered) {
                            if (value < 1 || value > Integer.MAX_VALUE || answered.get((int) value)) {
                                duplicates.incrementAndGet();
                            } else {
                                answered.set((int) value);
                            }
                        }
                        if (window.counts(began, ended)) {
                            loops.counted(client, ended - began);
                        }
                    }
                }));
            }
            loops.join(threads);
            long finalValue = sdks.get(0).counter(COUNTER).get();
            Map<String, Object> x = new LinkedHashMap<>();
            x.put("counters", 1);
            x.put("sdk_clients", sdks.size());
            x.put("acknowledged", acknowledged.get());
            x.put("final_value", finalValue);
            x.put("duplicates", duplicates.get());
            x.put("lost", Math.abs(finalValue - acknowledged.get()));
            return loops.result(s, window, cpu, duplicates.get(), x);
        }
    }
}
