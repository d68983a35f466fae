package io.tenure.it.safety;

import io.tenure.client.TenureKv;
import io.tenure.it.safety.History.Pending;
import io.tenure.it.safety.Op.Kind;

import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * The key-value side of a lock worker's process, on a thread of its own: on {@link #KEYS} keys
 * shared by every worker, reads a key (KV_READ), then compare-and-sets it on the mod revision read
 * (KV_CAS; put-if-absent when it was absent) to a value no other write uses (the process's number
 * in the high bits), with a pause of 0-{@value #MAX_PAUSE_MILLIS} ms between rounds. The SDK
 * retries a call its member failed to answer, with the same request id, on another member. The
 * checker ({@link HarnessChecks#checkKv}) asks that the histories be those of a linearizable
 * compare-and-set register.
 */
final class KvWorker {
    static final String[] KEYS = {"safety/kv0", "safety/kv1"};
    static final int MAX_PAUSE_MILLIS = 20;

    private final WorkerContext ctx;
    private final long valueBase;
    private long written;

    KvWorker(WorkerContext ctx, int processNumber) {
        this.ctx = ctx;
        this.valueBase = (long) processNumber << 40;
    }

    void run() {
        TenureKv kv = ctx.client.kv();
        while (ctx.running) {
            String key = KEYS[ctx.random.nextInt(KEYS.length)];
            Pending read = ctx.history.invoke(Kind.KV_READ, key);
            long revision;
            try {
                Optional<TenureKv.Entry> entry = kv.get(key);
                revision = entry.map(TenureKv.Entry::modRevision).orElse(0L);
                long value = entry.map(e -> Long.parseLong(new String(e.value(), StandardCharsets.UTF_8))).orElse(0L);
                read.value(value).token(revision).ok();
            } catch (RuntimeException e) {
                read.complete(WorkerContext.outcomeOf(e), WorkerContext.describe(e));
                WorkerContext.sleep(ctx.random.nextInt(MAX_PAUSE_MILLIS + 1));
                continue;
            }
            long value = valueBase | ++written;
            byte[] bytes = Long.toString(value).getBytes(StandardCharsets.UTF_8);
            Pending cas = ctx.history.invoke(Kind.KV_CAS, key).value(value).token(revision);
            try {
                if (revision == 0) {
                    if (kv.putIfAbsent(key, bytes)) {
                        cas.ok();
                    } else {
                        cas.fail("the key exists");
                    }
                } else {
                    TenureKv.Swap swap = kv.swap(key, revision, bytes);
                    cas.position(swap.modRevision());
                    if (swap.swapped()) {
                        cas.ok();
                    } else {
                        cas.fail("the key moved on to revision " + swap.modRevision());
                    }
                }
            } catch (RuntimeException e) {
                // Whatever the error: an earlier attempt of this call (the SDK retries with the same request id) may have
                // been applied before a later one was refused (say, shed by a member that was behind). Only a compare that
                // answered "not swapped" is known not to have happened.
                cas.info(WorkerContext.describe(e));
            }
            WorkerContext.sleep(ctx.random.nextInt(MAX_PAUSE_MILLIS + 1));
        }
    }
}
