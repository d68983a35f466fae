package io.tenure.server;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * A storage resource that refuses a write whose fencing token is not larger than the last one it
 * accepted (seed 000, algorithm 3), and counts holders at once to catch an overlap.
 */
final class FencedRegister {
    private long lastToken;
    private long value;
    private int refusals;
    private final AtomicInteger inside = new AtomicInteger();
    private final AtomicInteger overlaps = new AtomicInteger();

    void enter() {
        if (inside.incrementAndGet() != 1) {
            overlaps.incrementAndGet();
        }
    }

    void leave() {
        inside.decrementAndGet();
    }

    /** Read-modify-write under the token; false when refused as stale. */
    synchronized boolean increment(long token) {
        if (token <= lastToken) {
            refusals++;
            return false;
        }
        lastToken = token;
        value++;
        return true;
    }

    synchronized long value() {
        return value;
    }

    synchronized int refusals() {
        return refusals;
    }

    int overlaps() {
        return overlaps.get();
    }
}
