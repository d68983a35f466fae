package io.tenure.server;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;

/**
 * What one stream owes its client (a watch's events, a listener's signals), sent at the pace its
 * transport accepts: items are queued (by the apply thread) and drained on a delivery executor in
 * batches, one drain at a time per queue, while the transport is ready. A queue more than its
 * limit behind refuses the next item and drops what waits: its owner then cuts the client off
 * with a reason, instead of growing memory or slowing anyone else.
 *
 * @param <T> what is sent
 */
public final class PacedQueue<T> {
    private static final int SEND_BATCH = 256;

    /** Where a queue's items go: one transport stream. Calls come from one thread at a time. */
    public interface Transport<T> {
        void send(List<T> batch);

        /** Whether the transport takes more now. */
        boolean ready();
    }

    private final int limit;
    private final Executor delivery;
    private final Transport<T> transport;
    private final ArrayDeque<T> pending = new ArrayDeque<>();
    private boolean draining;
    private volatile boolean closed;

    /** @param limit the most items that may wait; one more is refused */
    public PacedQueue(int limit, Executor delivery, Transport<T> transport) {
        this.limit = limit;
        this.delivery = delivery;
        this.transport = transport;
    }

    /**
     * Queues {@code item} and starts a drain. Ignored once closed.
     *
     * @return false when the queue was full: the item and everything waiting are dropped
     */
    public boolean offer(T item) {
        if (closed) {
            return true;
        }
        synchronized (this) {
            pending.add(item);
            if (pending.size() > limit) {
                pending.clear();
                return false;
            }
        }
        resume();
        return true;
    }

    /** Queues {@code item} without starting a drain (a replay before the stream is registered; {@link #resume} follows). */
    public synchronized void add(T item) {
        pending.add(item);
    }

    /** Drains what waits, on the delivery executor, unless a drain runs or nothing waits (the transport became ready, say). */
    public void resume() {
        synchronized (this) {
            if (draining || pending.isEmpty()) {
                return;
            }
            draining = true;
        }
        delivery.execute(this::drain);
    }

    /** Nothing more is sent. */
    public void close() {
        closed = true;
    }

    public boolean isClosed() {
        return closed;
    }

    private void drain() {
        while (true) {
            List<T> batch;
            synchronized (this) {
                if (closed || pending.isEmpty() || !transport.ready()) {
                    draining = false;
                    return;
                }
                batch = new ArrayList<>(Math.min(SEND_BATCH, pending.size()));
                while (batch.size() < SEND_BATCH && !pending.isEmpty()) {
                    batch.add(pending.poll());
                }
            }
            transport.send(batch);
        }
    }
}
