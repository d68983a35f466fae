package io.tenure.spike.engine;

import io.tenure.core.lock.LockResult;
import org.HdrHistogram.Histogram;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The product's W1 and W2 at the engine level: {@code clients} threads, client {@code i} owning
 * lease {@code i + 1}, looping until the measured window ends. An operation counts when it began
 * after the warm-up and ended inside the window. Every client checks what it can of the results
 * and the run fails at the first violation.
 */
enum Workload {
    /** Uncontended: client i acquires and releases its own key; one operation is a cycle, timed whole. */
    W1("cycle") {
        @Override
        ClientLoop loop(Locks locks, Window window) {
            return (client, latencies) -> {
                String key = "w1/" + client;
                long leaseId = client + 1;
                long lastToken = 0;
                long count = 0;
                while (!window.over(System.nanoTime())) {
                    long began = System.nanoTime();
                    LockResult.Granted grant = locks.acquire(key, leaseId);
                    if (grant.fencingToken() <= lastToken) {
                        throw new IllegalStateException(key + ": token " + grant.fencingToken() + " after " + lastToken);
                    }
                    lastToken = grant.fencingToken();
                    if (locks.release(grant).nextFencingToken() != 0) {
                        throw new IllegalStateException(key + " had a waiter, but only its client uses it");
                    }
                    long ended = System.nanoTime();
                    if (window.counts(began, ended)) {
                        record(latencies, ended - began);
                        count++;
                    }
                }
                return count;
            };
        }
    },
    /** Contended: every client acquires one key (FIFO queue), then releases it at once; one operation is a grant, timed from the call. */
    W2("wait") {
        @Override
        ClientLoop loop(Locks locks, Window window) {
            String key = "w2";
            AtomicLong holder = new AtomicLong();
            AtomicLong lastToken = new AtomicLong();
            return (client, latencies) -> {
                long leaseId = client + 1;
                long count = 0;
                while (!window.over(System.nanoTime())) {
                    long began = System.nanoTime();
                    LockResult.Granted grant = locks.acquire(key, leaseId);
                    long granted = System.nanoTime();
                    if (!holder.compareAndSet(0, leaseId)) {
                        throw new IllegalStateException(key + " granted to lease " + leaseId + " while lease " + holder.get() + " holds it");
                    }
                    long before = lastToken.getAndSet(grant.fencingToken());
                    if (grant.fencingToken() <= before) {
                        throw new IllegalStateException(key + ": token " + grant.fencingToken() + " after " + before);
                    }
                    holder.set(0);
                    locks.release(grant);
                    if (window.counts(began, granted)) {
                        record(latencies, granted - began);
                        count++;
                    }
                }
                return count;
            };
        }
    };

    /** What the latency of one operation spans. */
    final String latency;

    Workload(String latency) {
        this.latency = latency;
    }

    /** One client's loop: records its counted latencies and returns how many operations counted. */
    @FunctionalInterface
    interface ClientLoop {
        long run(int client, Histogram latencies) throws Exception;
    }

    abstract ClientLoop loop(Locks locks, Window window);

    /** The warm-up, then the measured window, on {@link System#nanoTime()}. */
    record Window(long start, long end) {
        static Window after(double warmupSeconds, double seconds) {
            long start = System.nanoTime() + (long) (warmupSeconds * 1e9);
            return new Window(start, start + (long) (seconds * 1e9));
        }

        boolean counts(long began, long ended) {
            return began - start >= 0 && ended - end <= 0;
        }

        boolean over(long now) {
            return now - end >= 0;
        }

        double seconds() {
            return (end - start) / 1e9;
        }
    }

    /** What the clients measured: every counted latency, and each client's count. */
    record Outcome(Histogram latencies, long[] counts) {
        long operations() {
            long sum = 0;
            for (long c : counts) {
                sum += c;
            }
            return sum;
        }
    }

    /** The running clients of one workload. */
    static final class Clients {
        private final List<Thread> threads = new ArrayList<>();
        private final Histogram[] latencies;
        private final long[] counts;
        private final AtomicReference<Throwable> failure = new AtomicReference<>();

        /** Starts {@code clients} threads running the workload's loop. */
        Clients(Workload workload, Locks locks, Window window, int clients) {
            ClientLoop loop = workload.loop(locks, window);
            latencies = new Histogram[clients];
            counts = new long[clients];
            for (int i = 0; i < clients; i++) {
                int client = i;
                latencies[i] = new Histogram(60_000_000L, 3);
                Thread thread = new Thread(() -> {
                    try {
                        counts[client] = loop.run(client, latencies[client]);
                    } catch (Throwable t) {
                        failure.compareAndSet(null, t);
                    }
                }, workload + "-client-" + i);
                thread.setDaemon(true);
                thread.start();
                threads.add(thread);
            }
        }

        /** Waits for every client to finish; throws the first client's failure as soon as it happens (the others are daemons). */
        Outcome join() throws InterruptedException {
            for (Thread t : threads) {
                while (t.isAlive() && failure.get() == null) {
                    t.join(100);
                }
                if (failure.get() != null) {
                    throw new IllegalStateException("a client failed: " + failure.get().getMessage(), failure.get());
                }
            }
            Histogram all = new Histogram(60_000_000L, 3);
            for (Histogram h : latencies) {
                all.add(h);
            }
            return new Outcome(all, counts);
        }
    }

    /** In microseconds, up to one minute. */
    private static void record(Histogram latencies, long nanos) {
        latencies.recordValue(Math.min(60_000_000L, nanos / 1_000));
    }
}
