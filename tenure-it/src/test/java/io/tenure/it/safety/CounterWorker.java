package io.tenure.it.safety;

import io.tenure.client.TenureCounter;
import io.tenure.it.safety.History.Pending;
import io.tenure.it.safety.Op.Kind;

/**
 * The counter side of a lock worker's process, on a thread of its own: increments the run's
 * counter ({@link SafetyRun#COUNTER}) in a loop, each an {@link Op} of kind INCR whose value is the
 * value answered, with a pause of 0-{@value #MAX_PAUSE_MILLIS} ms between them. The SDK retries an
 * increment its member failed to answer, with the same request id, on another member. After the
 * run the harness reads the counter ({@code counters.json}), and the checker asks that every
 * acknowledged increment be counted once: no value answered twice, and a final value between the
 * acknowledged increments and those plus the ones whose outcome is unknown (INFO).
 */
final class CounterWorker {
    static final int MAX_PAUSE_MILLIS = 20;

    private final WorkerContext ctx;

    CounterWorker(WorkerContext ctx) {
        this.ctx = ctx;
    }

    void run() {
        TenureCounter counter = ctx.client.counter(SafetyRun.COUNTER);
        while (ctx.running) {
            Pending increment = ctx.history.invoke(Kind.INCR, SafetyRun.COUNTER);
            try {
                long value = counter.incrementAndGet();
                increment.value(value).ok();
            } catch (RuntimeException e) {
                // Unknown, whatever the error: an earlier attempt (the SDK retries with the same request id) may have been
                // applied before a later one was refused, as KvWorker records its compare-and-sets.
                increment.info(WorkerContext.describe(e));
            }
            WorkerContext.sleep(ctx.random.nextInt(MAX_PAUSE_MILLIS + 1));
        }
    }
}
