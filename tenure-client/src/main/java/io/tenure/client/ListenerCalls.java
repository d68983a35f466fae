package io.tenure.client;

import java.util.ArrayDeque;

/**
 * The calls a stream owes its listener, queued while the stream's monitor is held and run after
 * it is released, by one thread at a time, in queue order: listener calls never overlap, keep
 * their order across streams, and never run while the stream is locked ({@link WatchStream},
 * {@link ListenStream}).
 */
final class ListenerCalls {
    private final Object monitor;
    private final ArrayDeque<Runnable> queued = new ArrayDeque<>();
    private boolean running;

    /** @param monitor the stream's monitor, which guards the queue */
    ListenerCalls(Object monitor) {
        this.monitor = monitor;
    }

    /** Queues a call; the caller holds the monitor. */
    void add(Runnable call) {
        queued.add(call);
    }

    /** Runs what was queued, unless another thread already does; the caller must not hold the monitor. */
    void run() {
        synchronized (monitor) {
            if (running) {
                return;
            }
            running = true;
        }
        while (true) {
            Runnable next;
            synchronized (monitor) {
                next = queued.poll();
                if (next == null) {
                    running = false;
                    return;
                }
            }
            try {
                next.run();
            } catch (RuntimeException | Error e) {
                synchronized (monitor) {
                    running = false;
                }
                throw e;
            }
        }
    }
}
