package io.tenure.core.watch;

import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * The recent watch events, in revision order, kept in a ring of fixed capacity so memory stays
 * bounded. Events older than the {@linkplain #horizon() horizon} are gone: a watch that asks to
 * start before it must be told (etcd's compacted revision) rather than silently miss events.
 * Not thread-safe: the owner of the state guards it.
 */
public final class EventLog {
    private final WatchEvent[] ring;
    private int head;   // index of the oldest event
    private int size;
    private long horizon = 1;

    public EventLog(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be positive, got " + capacity);
        }
        ring = new WatchEvent[capacity];
    }

    /** The oldest revision from which a replay is complete. */
    public long horizon() {
        return horizon;
    }

    public int size() {
        return size;
    }

    public int capacity() {
        return ring.length;
    }

    /** Appends an event whose revision is larger than every retained one, evicting the oldest when full. */
    public void append(WatchEvent event) {
        if (size == ring.length) {
            WatchEvent evicted = ring[head];
            ring[head] = null;
            head = (head + 1) % ring.length;
            size--;
            horizon = evicted.revision() + 1;
        }
        ring[(head + size) % ring.length] = event;
        size++;
    }

    /** Forgets every event; replays may start at {@code newHorizon} or later (after a snapshot restore). */
    public void resetTo(long newHorizon) {
        java.util.Arrays.fill(ring, null);
        head = 0;
        size = 0;
        horizon = newHorizon;
    }

    /**
     * Delivers, in order, every retained event with revision {@code >= from} whose key matches.
     *
     * @return false, delivering nothing, when {@code from} is older than the horizon
     */
    public boolean replay(long from, Predicate<String> keyMatches, Consumer<WatchEvent> sink) {
        if (from < horizon) {
            return false;
        }
        for (int i = firstAtOrAfter(from); i < size; i++) {
            WatchEvent e = ring[(head + i) % ring.length];
            if (keyMatches.test(e.key())) {
                sink.accept(e);
            }
        }
        return true;
    }

    private int firstAtOrAfter(long revision) {
        int lo = 0;
        int hi = size;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (ring[(head + mid) % ring.length].revision() < revision) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }
}
