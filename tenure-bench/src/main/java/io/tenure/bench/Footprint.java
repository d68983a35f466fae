package io.tenure.bench;

import io.tenure.core.TenureState;
import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.Command;
import io.tenure.core.kernel.Result;
import io.tenure.core.kv.KvPut;
import io.tenure.core.list.ListPush;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What one key and one list item cost a member (issue 18): fills a {@link TenureState}, the state
 * every member holds, with {@code --keys} keys of {@code --value-bytes}-byte values, then with
 * {@code --items} items of that size in one list, and prints one JSON line with two figures for
 * each: the heap the state grew by, over the count (live bytes after a full collection, from the
 * {@link MemoryMXBean}), and the snapshot the state writes, over the count.
 *
 * <p>The heap figure is the state's alone: a member holds besides a bounded ring of recent watch
 * events (65,536 by default, each with its value), the Raft log not yet compacted and its buffers;
 * here the ring holds {@value #EVENT_LOG_CAPACITY} events, so it does not grow with the count.
 * Run it with a collector that compacts fully on {@link System#gc()} ({@code -XX:+UseSerialGC}),
 * so that "used after a collection" is the live bytes:
 *
 * <pre>{@code
 * java -XX:+UseSerialGC -Xmx2g -cp "tenure-bench/target/classes:$(cat tenure-bench/target/classpath.txt)" \
 *     io.tenure.bench.Footprint --keys 100000 --items 100000 --value-bytes 100
 * }</pre>
 */
public final class Footprint {
    static final int EVENT_LOG_CAPACITY = 1_024;
    /** Commands per log entry, as positions go: entry index × 2^16 + the command's place (ARCHITECTURE.md, I2). */
    private static final long ENTRY = 1L << 16;

    private Footprint() {
    }

    public static void main(String[] args) throws Exception {
        int keys = 100_000;
        int items = 100_000;
        int valueBytes = 100;
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--keys" -> keys = Integer.parseInt(args[i + 1]);
                case "--items" -> items = Integer.parseInt(args[i + 1]);
                case "--value-bytes" -> valueBytes = Integer.parseInt(args[i + 1]);
                default -> throw new IllegalArgumentException("unknown option " + args[i] + " (--keys N --items N --value-bytes N)");
            }
        }
        if (args.length % 2 != 0) {
            throw new IllegalArgumentException("an option without its value: --keys N --items N --value-bytes N");
        }
        System.out.println(new com.fasterxml.jackson.databind.ObjectMapper().writeValueAsString(measure(keys, items, valueBytes)));
    }

    /** The figures, as the JSON line prints them. */
    static Map<String, Object> measure(int keys, int items, int valueBytes) throws IOException {
        TenureState state = new TenureState(EVENT_LOG_CAPACITY);
        long[] position = {0};
        long heap0 = liveHeap();
        long snapshot0 = snapshotBytes(state);
        for (int i = 0; i < keys; i++) {
            applied(state, ++position[0] * ENTRY, new KvPut(String.format("footprint/key/%08d", i), value(i, valueBytes), 0, 0, 0));
        }
        long heap1 = liveHeap();
        long snapshot1 = snapshotBytes(state);
        for (int i = 0; i < items; i++) {
            applied(state, ++position[0] * ENTRY, new ListPush("footprint/list", value(i, valueBytes), false, 0));
        }
        long heap2 = liveHeap();
        long snapshot2 = snapshotBytes(state);
        Map<String, Object> line = new LinkedHashMap<>();
        line.put("keys", keys);
        line.put("items", items);
        line.put("value_bytes", valueBytes);
        line.put("heap_bytes_per_key", keys == 0 ? 0 : (heap1 - heap0) / keys);
        line.put("snapshot_bytes_per_key", keys == 0 ? 0 : (snapshot1 - snapshot0) / keys);
        line.put("heap_bytes_per_item", items == 0 ? 0 : (heap2 - heap1) / items);
        line.put("snapshot_bytes_per_item", items == 0 ? 0 : (snapshot2 - snapshot1) / items);
        line.put("event_log_capacity", EVENT_LOG_CAPACITY);
        line.put("heap_method", "MemoryMXBean heap used after System.gc() x3, collector "
                + ManagementFactory.getGarbageCollectorMXBeans().stream().map(b -> b.getName()).toList());
        line.put("jvm", System.getProperty("java.vm.name") + " " + System.getProperty("java.version"));
        // Keeps the state reachable until every figure is read.
        line.put("applied_position", state.appliedPosition());
        return line;
    }

    private static void applied(TenureState state, long position, Command command) {
        Applied applied = state.apply(position, command);
        if (applied.result() instanceof Result.Rejected rejected) {
            throw new IllegalStateException("the state refused " + command.getClass().getSimpleName() + ": " + rejected.message());
        }
    }

    /** {@code size} bytes, different for every {@code i}, as distinct values would be. */
    private static byte[] value(int i, int size) {
        byte[] value = new byte[size];
        Arrays.fill(value, (byte) 'v');
        byte[] number = Integer.toString(i).getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        System.arraycopy(number, 0, value, 0, Math.min(number.length, size));
        return value;
    }

    private static long liveHeap() {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return memory.getHeapMemoryUsage().getUsed();
    }

    private static long snapshotBytes(TenureState state) throws IOException {
        long[] count = {0};
        state.writeSnapshot(new OutputStream() {
            @Override
            public void write(int b) {
                count[0]++;
            }

            @Override
            public void write(byte[] b, int off, int len) {
                count[0] += len;
            }
        });
        return count[0];
    }
}
