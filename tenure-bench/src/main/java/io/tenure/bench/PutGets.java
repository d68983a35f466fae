package io.tenure.bench;

import io.tenure.client.TenureKv;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

/**
 * W9: key-value puts and linearizable gets. Each client owns the keys of {@value #KEYS} whose
 * number is its own modulo the clients, and loops over them: a put of a {@value #VALUE_BYTES}-byte
 * value, then a linearizable get of the same key, the next pair once the last is answered. One op
 * is a put+get pair; latencies are of the pair. Checked all the time, warm-up included: as nobody
 * else writes the key, the get must answer the value just put, at a mod revision at least the
 * put's; any other answer is a {@code stale_read}, reported in the overlaps field, and fails the run.
 */
final class PutGets {
    static final String PREFIX = "bench/w9/";
    /** The keys the clients share out, as issue 18 defines W9. */
    static final int KEYS = 1_000;
    static final int VALUE_BYTES = 100;

    private PutGets() {
    }

    static BenchResult run(Members members, BenchSettings s) throws Exception {
        try (SdkClients sdks = new SdkClients(members, s.clients(), "bench-w9", s.unaryLockCalls())) {
            Window window = new Window(s.warmup(), s.duration());
            CpuMeter cpu = CpuMeter.during(members, window);
            ClientLoops loops = new ClientLoops("W9", s.clients());
            AtomicLong stale = new AtomicLong();
            List<Thread> threads = new ArrayList<>();
            for (int i = 0; i < s.clients(); i++) {
                int client = i;
                threads.add(loops.start("bench-w9-" + i, () -> {
                    TenureKv kv = sdks.get(client).kv();
                    int key = client;
                    long sequence = 0;
                    while (!window.over(System.nanoTime()) && !loops.failed()) {
                        String name = PREFIX + key;
                        byte[] value = value(client, ++sequence);
                        long began = System.nanoTime();
                        long revision = kv.put(name, value);
                        Optional<TenureKv.Entry> read = kv.get(name);
                        long ended = System.nanoTime();
                        if (read.isEmpty() || read.get().modRevision() < revision || !Arrays.equals(read.get().value(), value)) {
                            stale.incrementAndGet();
                        }
                        if (window.counts(began, ended)) {
                            loops.counted(client, ended - began);
                        }
                        key += s.clients();
                        if (key >= KEYS) {
                            key = client;
                        }
                    }
                }));
            }
            loops.join(threads);
            Map<String, Object> x = new LinkedHashMap<>();
            x.put("recipe", "kv().put then kv().get (linearizable) of the same key");
            x.put("keys", KEYS);
            x.put("value_bytes", VALUE_BYTES);
            x.put("sdk_clients", sdks.size());
            x.put("stale_reads", stale.get());
            return loops.result(s, window, cpu, stale.get(), x);
        }
    }

    /** {@value #VALUE_BYTES} bytes naming the client and the put, so that every put writes a value of its own. */
    static byte[] value(int client, long sequence) {
        byte[] value = new byte[VALUE_BYTES];
        Arrays.fill(value, (byte) '.');
        byte[] label = ("client " + client + " put " + sequence).getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(label, 0, value, 0, Math.min(label.length, VALUE_BYTES));
        return value;
    }
}
