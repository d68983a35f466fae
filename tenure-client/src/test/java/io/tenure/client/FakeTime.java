package io.tenure.client;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Delayed;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.FutureTask;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A clock and a scheduler on one fake time line: nothing happens until a test advances time, and
 * then the due tasks run on the test's thread, each with the clock set to its due time.
 */
final class FakeTime extends AbstractExecutorService implements ScheduledExecutorService, MonotonicClock {
    private final PriorityQueue<Task<?>> queue = new PriorityQueue<>();
    // Starts far from zero so that code comparing with 0 instead of differencing would show up; on
    // a whole millisecond, so that the lease timers (coalesced per millisecond) fire on the exact
    // instants the tests state in milliseconds. LeaseTimersTest covers the other instants.
    private long now = EPOCH;
    private long sequence;
    private boolean shutdown;

    /** The starting reading, so tests can state expected moments as offsets. */
    static final long EPOCH = (Long.MAX_VALUE - TimeUnit.DAYS.toNanos(1)) / 1_000_000 * 1_000_000;

    @Override
    public synchronized long nanoTime() {
        return now;
    }

    /** Nanoseconds since the start of the time line. */
    synchronized long elapsedNanos() {
        return now - EPOCH;
    }

    /** Moves time forward, running every task that falls due on the way, in due order. */
    void advance(Duration step) {
        long target;
        synchronized (this) {
            target = now + step.toNanos();
        }
        runUntil(target);
    }

    /** Advances to {@code EPOCH + offset}. */
    void advanceTo(Duration offset) {
        long target = EPOCH + offset.toNanos();
        synchronized (this) {
            if (target - now < 0) {
                throw new IllegalArgumentException("time only moves forward: " + offset);
            }
        }
        runUntil(target);
    }

    /** Moves the clock without running anything, as a process pause does to its timers. */
    synchronized void jump(Duration step) {
        now += step.toNanos();
    }

    /** Runs tasks already due (for example ones scheduled with no delay by another thread). */
    void runDueTasks() {
        runUntil(nanoTime());
    }

    synchronized int pendingTasks() {
        return queue.size();
    }

    /** Runs the earliest pending task (and any due at the same moment), moving the clock to it; false if none. */
    boolean runNextTask() {
        long due;
        synchronized (this) {
            Task<?> next = queue.peek();
            if (next == null) {
                return false;
            }
            due = next.dueAt - now > 0 ? next.dueAt : now;
        }
        runUntil(due);
        return true;
    }

    /**
     * Runs a blocking call on another thread and drives this time line for it: whenever that
     * thread is parked waiting for a {@link CompletableFuture} that is not complete (the client
     * blocks in nothing else), the next task runs. So every delay the call schedules passes on
     * this clock, in order, and time stops moving once the call has what it waited for. No
     * real-time waiting is involved.
     *
     * @param limit the most fake time the call may take before the test fails
     */
    <T> T drive(Callable<T> blocking, Duration limit) throws Exception {
        CompletableFuture<T> outcome = new CompletableFuture<>();
        Thread caller = new Thread(() -> {
            try {
                outcome.complete(blocking.call());
            } catch (Throwable t) {
                outcome.completeExceptionally(t);
            }
        }, "fake-time-driven-caller");
        long end = nanoTime() + limit.toNanos();
        caller.start();
        while (!outcome.isDone()) {
            if (!waitsForAFuture(caller)) {
                Thread.onSpinWait(); // the caller is working, or has what it waited for and is waking up
                continue;
            }
            if (nanoTime() - end > 0) {
                AssertionError tooLong = new AssertionError("the call took more than " + limit + " of fake time");
                Throwable where = new Throwable("the caller's stack");
                where.setStackTrace(caller.getStackTrace());
                tooLong.initCause(where);
                caller.interrupt();
                throw tooLong;
            }
            if (!runNextTask()) {
                Thread.onSpinWait(); // nothing scheduled: only the caller can move on
            }
        }
        caller.join();
        try {
            return outcome.get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Exception exception) {
                throw exception;
            }
            throw e;
        }
    }

    /**
     * Whether {@code thread} is parked in {@link CompletableFuture#get()} on a future that is not
     * complete. Its park blocker is then the future's waiter, a {@link ForkJoinPool.ManagedBlocker}
     * that turns releasable the moment the future completes, before the thread wakes.
     */
    private static boolean waitsForAFuture(Thread thread) {
        Thread.State state = thread.getState();
        if (state != Thread.State.WAITING && state != Thread.State.TIMED_WAITING) {
            return false;
        }
        return LockSupport.getBlocker(thread) instanceof ForkJoinPool.ManagedBlocker waiter && !waiter.isReleasable();
    }

    private void runUntil(long target) {
        while (true) {
            Task<?> next;
            synchronized (this) {
                next = queue.peek();
                if (next == null || next.dueAt - target > 0) {
                    now = target;
                    return;
                }
                queue.poll();
                if (next.dueAt - now > 0) {
                    now = next.dueAt; // overdue tasks (after a jump) run late, at the current time
                }
            }
            next.run();
        }
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
        return enqueue(Executors.callable(command), delay, unit);
    }

    @Override
    public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
        return enqueue(callable, delay, unit);
    }

    private synchronized <V> ScheduledFuture<V> enqueue(Callable<V> callable, long delay, TimeUnit unit) {
        if (shutdown) {
            throw new java.util.concurrent.RejectedExecutionException("fake scheduler is shut down");
        }
        Task<V> task = new Task<>(callable, now + Math.max(0, unit.toNanos(delay)), sequence++);
        queue.add(task);
        return task;
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
        throw new UnsupportedOperationException("the client schedules one-shot tasks only");
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay, TimeUnit unit) {
        throw new UnsupportedOperationException("the client schedules one-shot tasks only");
    }

    @Override
    public void execute(Runnable command) {
        schedule(command, 0, TimeUnit.NANOSECONDS);
    }

    @Override
    public synchronized void shutdown() {
        shutdown = true;
    }

    @Override
    public synchronized List<Runnable> shutdownNow() {
        shutdown = true;
        List<Runnable> dropped = new ArrayList<>(queue);
        queue.clear();
        return dropped;
    }

    @Override
    public synchronized boolean isShutdown() {
        return shutdown;
    }

    @Override
    public synchronized boolean isTerminated() {
        return shutdown && queue.isEmpty();
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) {
        return isTerminated();
    }

    private final class Task<V> extends FutureTask<V> implements ScheduledFuture<V> {
        final long dueAt;
        final long order;

        Task(Callable<V> callable, long dueAt, long order) {
            super(callable);
            this.dueAt = dueAt;
            this.order = order;
        }

        @Override
        public long getDelay(TimeUnit unit) {
            return unit.convert(dueAt - nanoTime(), TimeUnit.NANOSECONDS);
        }

        @Override
        public int compareTo(Delayed other) {
            Task<?> that = (Task<?>) other;
            int byTime = Long.compare(dueAt - EPOCH, that.dueAt - EPOCH);
            return byTime != 0 ? byTime : Long.compare(order, that.order);
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            synchronized (FakeTime.this) {
                queue.remove(this);
            }
            return super.cancel(mayInterruptIfRunning);
        }
    }
}
