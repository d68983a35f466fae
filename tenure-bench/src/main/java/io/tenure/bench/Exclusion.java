package io.tenure.bench;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * The exclusion check of every lock and semaphore workload: holders per key, counted in-process
 * between "acquire returned" and "release sent". More holders at once than the key allows (one
 * for a lock, the limit for a semaphore) is an overlap, and fails the run. Conservative in one
 * direction only: a release is counted out before it is sent, so the next holder's grant can
 * never be seen as an overlap because of this check's own timing.
 */
final class Exclusion {
    private final ConcurrentHashMap<String, Holders> holders = new ConcurrentHashMap<>();
    private final LongAdder overlaps = new LongAdder();

    /** A lock's holder enters: a second one inside at once is an overlap. */
    void enter(String key) {
        enter(key, 1);
    }

    /** One of at most {@code allowed} holders enters (a semaphore's limit, one permit each). */
    void enter(String key, int allowed) {
        Holders h = holders.computeIfAbsent(key, k -> new Holders());
        int inside = h.inside.incrementAndGet();
        h.peak.accumulateAndGet(inside, Math::max);
        if (inside > allowed) {
            overlaps.increment();
        }
    }

    void exit(String key) {
        holders.get(key).inside.decrementAndGet();
    }

    long overlaps() {
        return overlaps.sum();
    }

    /** The most holders seen inside {@code key} at once (0 if none ever entered). */
    int peak(String key) {
        Holders h = holders.get(key);
        return h == null ? 0 : h.peak.get();
    }

    private static final class Holders {
        final AtomicInteger inside = new AtomicInteger();
        final AtomicInteger peak = new AtomicInteger();
    }
}
