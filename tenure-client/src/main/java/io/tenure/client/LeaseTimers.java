package io.tenure.client;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The timers of a client's leases. Each lease has a renewal tick, a loss deadline that moves with
 * every acknowledgement, and a stall check per keep-alive: 100,000 leases make about 90,000
 * timers a second. Scheduled one by one, each woke the scheduler's thread on its own, and that
 * thread took most of the client's CPU. Here the timers due in the same millisecond share one
 * scheduled task, so the thread wakes at most once a millisecond however many leases there are.
 *
 * <p>So a timer is off by less than {@link #SLOT_NANOS}, in the direction its caller can afford:
 * {@link #notBefore} may fire that much late (a renewal tick, a stall check, a reconnect: a
 * keep-alive sent a hair late is still sent TTL/6 before it is needed), {@link #notAfter} that much
 * early (the loss deadline: its handler reads the clock and re-arms for the remainder, which,
 * under one slot, is scheduled exactly). A delay under one slot is always scheduled exactly.
 */
final class LeaseTimers {
    private static final Logger LOG = LoggerFactory.getLogger(LeaseTimers.class);
    static final long SLOT_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    /** A scheduled timer; cancelling is idempotent and never waits. */
    interface Timer {
        void cancel();
    }

    private final MonotonicClock clock;
    private final ScheduledExecutorService scheduler;
    /** The timers of each pending millisecond, keyed by its start divided by {@link #SLOT_NANOS}. */
    private final ConcurrentHashMap<Long, Slot> slots = new ConcurrentHashMap<>();

    LeaseTimers(MonotonicClock clock, ScheduledExecutorService scheduler) {
        this.clock = clock;
        this.scheduler = scheduler;
    }

    /**
     * Runs {@code task} on the scheduler no sooner than {@code delayNanos} from now, and less than
     * one slot later.
     *
     * @throws java.util.concurrent.RejectedExecutionException when the scheduler was shut down
     */
    Timer notBefore(Runnable task, long delayNanos) {
        return schedule(task, delayNanos, true);
    }

    /**
     * Runs {@code task} on the scheduler no later than {@code delayNanos} from now, and less than
     * one slot sooner.
     *
     * @throws java.util.concurrent.RejectedExecutionException when the scheduler was shut down
     */
    Timer notAfter(Runnable task, long delayNanos) {
        return schedule(task, delayNanos, false);
    }

    private Timer schedule(Runnable task, long delayNanos, boolean late) {
        if (delayNanos < SLOT_NANOS) {
            ScheduledFuture<?> exact = scheduler.schedule(task, Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
            return () -> exact.cancel(false);
        }
        long now = clock.nanoTime();
        long slot = late ? Math.floorDiv(now + delayNanos + SLOT_NANOS - 1, SLOT_NANOS) : Math.floorDiv(now + delayNanos, SLOT_NANOS);
        Pending pending = new Pending(task);
        while (true) {
            Slot s = slots.computeIfAbsent(slot, k -> new Slot(k, now));
            if (s.add(pending)) {
                return pending;
            }
            // That slot fired between the lookup and the add; it has left the map, so retry.
        }
    }

    private static final class Pending implements Timer {
        final Runnable task;
        volatile boolean cancelled;

        Pending(Runnable task) {
            this.task = task;
        }

        @Override
        public void cancel() {
            cancelled = true;
        }
    }

    private final class Slot {
        private final long key;
        private List<Pending> due = new ArrayList<>();

        Slot(long key, long now) {
            this.key = key;
            // Nanosecond readings may be negative or near overflow: schedule by difference.
            long delay = key * SLOT_NANOS - now;
            scheduler.schedule(this::fire, Math.max(0, delay), TimeUnit.NANOSECONDS);
        }

        synchronized boolean add(Pending pending) {
            if (due == null) {
                return false;
            }
            due.add(pending);
            return true;
        }

        private void fire() {
            slots.remove(key, this);
            List<Pending> firing;
            synchronized (this) {
                firing = due;
                due = null;
            }
            for (Pending p : firing) {
                if (!p.cancelled) {
                    try {
                        p.task.run();
                    } catch (RuntimeException e) {
                        LOG.warn("a lease timer failed: {}", e.toString(), e);
                    }
                }
            }
        }
    }
}
