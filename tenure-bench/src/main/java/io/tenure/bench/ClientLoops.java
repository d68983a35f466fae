package io.tenure.bench;

import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.HdrHistogram.Histogram;

/**
 * The clients of one run, each a loop on its own thread: the first failure of any stops them all
 * (each loop checks {@link #failed} at every turn) and is thrown by {@link #join}; each client's
 * counted ops and their latencies, summed into the run's result.
 */
final class ClientLoops {
    private final String workload;
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private final Histogram[] latencies;
    private final long[] ops;

    ClientLoops(String workload, int clients) {
        this.workload = workload;
        this.latencies = new Histogram[clients];
        this.ops = new long[clients];
        for (int i = 0; i < clients; i++) {
            latencies[i] = Latencies.histogram();
        }
    }

    /** One client's loop. */
    interface Loop {
        void run() throws Exception;
    }

    /** Starts {@code loop} on a thread of its own; what it throws stops every loop. */
    Thread start(String name, Loop loop) {
        Thread thread = new Thread(() -> {
            try {
                loop.run();
            } catch (Throwable t) {
                failure.compareAndSet(null, t);
            }
        }, name);
        thread.start();
        return thread;
    }

    /** Whether a client failed: the loops stop at their next turn. */
    boolean failed() {
        return failure.get() != null;
    }

    /** Waits for the threads to end, then throws the first failure, if any. */
    void join(List<Thread> threads) throws InterruptedException {
        for (Thread t : threads) {
            t.join();
        }
        Throwable f = failure.get();
        if (f != null) {
            throw new IllegalStateException(workload + " client failed: " + f, f);
        }
    }

    /** Client {@code client}'s op that counts, which took {@code nanos}. Called by that client's thread only. */
    void counted(int client, long nanos) {
        Latencies.recordNanos(latencies[client], nanos);
        ops[client]++;
    }

    /** The run's result: every client's counted ops and latencies over the window, with {@code overlaps} and {@code extra}. */
    BenchResult result(BenchSettings s, Window window, CpuMeter cpu, long overlaps, Map<String, Object> extra) throws InterruptedException {
        Histogram all = Latencies.histogram();
        long total = 0;
        for (int i = 0; i < ops.length; i++) {
            all.add(latencies[i]);
            total += ops[i];
        }
        cpu.report(total, window.seconds(), extra);
        return new BenchResult(s.label(), s.workload(), s.clients(), window.seconds(), total, total / window.seconds(),
                Latencies.ms(all, 50), Latencies.ms(all, 99), Latencies.maxMs(all), overlaps, extra);
    }
}
