package io.tenure.it;

import io.tenure.client.Lease;
import io.tenure.client.LockHandle;
import io.tenure.client.TenureClient;
import io.tenure.client.TenureException;
import io.tenure.client.UnavailableException;
import io.tenure.testing.Await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Background load: threads, each with its own client and lease, doing lock/unlock cycles on
 * their own key ({@code PREFIX/THREAD}), so they never wait for each other. An {@code UNAVAILABLE}
 * (a member down, an election) is retried with the same key and lease and counted; anything
 * else that stops a cycle (a lock not granted within its wait, a lost lease, another error) is a
 * failed cycle.
 */
final class LockCycler implements AutoCloseable {
    static final Duration TTL = Duration.ofSeconds(30);
    static final Duration LOCK_WAIT = Duration.ofSeconds(10);

    private final List<String> endpoints;
    private final String prefix;
    private final List<Thread> threads = new ArrayList<>();
    private final AtomicBoolean stop = new AtomicBoolean();
    private final AtomicLong cycles = new AtomicLong();
    private final AtomicLong unavailable = new AtomicLong();
    private final AtomicLong lastCycleNanos = new AtomicLong(System.nanoTime());
    private final AtomicLong maxGapNanos = new AtomicLong();
    private final ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
    private volatile long limit = Long.MAX_VALUE;

    LockCycler(List<String> endpoints, String prefix) {
        this.endpoints = List.copyOf(endpoints);
        this.prefix = prefix;
    }

    /** Starts {@code count} threads; they stop by themselves after {@code maxCycles} cycles in all. */
    LockCycler start(int count, long maxCycles) {
        this.limit = maxCycles;
        lastCycleNanos.set(System.nanoTime());
        for (int i = 0; i < count; i++) {
            String key = prefix + "/" + i;
            Thread thread = new Thread(() -> run(key), "cycler-" + key);
            thread.setDaemon(true);
            threads.add(thread);
            thread.start();
        }
        return this;
    }

    LockCycler start(int count) {
        return start(count, Long.MAX_VALUE);
    }

    private void run(String key) {
        try (TenureClient client = TenureClient.connect(endpoints)) {
            Lease lease = null;
            while (!stop.get() && cycles.get() < limit) {
                if (lease == null || !lease.isValid()) {
                    if (lease != null) {
                        failures.add(key + ": lease " + lease.id() + " lost: " + lease.lost().getNow(null));
                        lease.close();
                    }
                    lease = retry(() -> client.grantLease(TTL, key), key + " lease grant");
                    if (lease == null) {
                        continue;
                    }
                }
                Lease current = lease;
                LockHandle handle = retry(() -> client.acquire(key, current, LOCK_WAIT, null), key + " lock");
                if (handle == null) {
                    continue;
                }
                Boolean released = retry(() -> {
                    handle.release();
                    return true;
                }, key + " unlock");
                if (released == null) {
                    continue;
                }
                long now = System.nanoTime();
                long previous = lastCycleNanos.getAndSet(now);
                maxGapNanos.accumulateAndGet(now - previous, Math::max);
                cycles.incrementAndGet();
            }
            if (lease != null) {
                lease.close();
            }
        } catch (RuntimeException | Error e) {
            failures.add(key + ": " + e);
        }
    }

    /** Runs {@code step}, retrying on UNAVAILABLE; null (and a recorded failure) on any other error. */
    private <T> T retry(java.util.function.Supplier<T> step, String what) {
        while (!stop.get()) {
            try {
                return step.get();
            } catch (UnavailableException e) {
                unavailable.incrementAndGet();
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
            } catch (TenureException e) {
                failures.add(what + ": " + e);
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
                return null;
            }
        }
        return null;
    }

    long cycles() {
        return cycles.get();
    }

    long unavailable() {
        return unavailable.get();
    }

    List<String> failures() {
        return new ArrayList<>(failures);
    }

    /** The longest time between two consecutive completed cycles (any thread), in ms. */
    long maxGapMillis() {
        return TimeUnit.NANOSECONDS.toMillis(maxGapNanos.get());
    }

    /** Waits until {@code count} more cycles completed. */
    void awaitMoreCycles(long count, Duration limit, String when) {
        long target = cycles.get() + count;
        Await.PROCESSES.until(() -> count + " more lock/unlock cycles " + when + " (at " + cycles.get() + ", target " + target
                + ", UNAVAILABLE retried " + unavailable.get() + ", failures " + failures + ")", limit, () -> cycles.get() >= target);
    }

    /** Waits until all threads ended by themselves (their cycle budget is spent). */
    void awaitDone(Duration limit) {
        Await.PROCESSES.until(() -> "the cyclers finish " + this.limit + " cycles (at " + cycles.get() + ", UNAVAILABLE retried "
                + unavailable.get() + ", failures " + failures + ")", limit, () -> threads.stream().noneMatch(Thread::isAlive));
    }

    /** Stops the threads and waits for them (a cycle in progress finishes first). */
    @Override
    public void close() throws InterruptedException {
        stop.set(true);
        for (Thread thread : threads) {
            thread.join(LOCK_WAIT.plusSeconds(30).toMillis());
        }
    }
}
