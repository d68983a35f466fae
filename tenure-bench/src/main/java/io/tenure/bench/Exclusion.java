package io.tenure.bench;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The exclusion check of every lock and semaphore workload: holders per key, counted in-process
 * between "acquire returned" and "release sent". More holders at once than the key allows (one
 * for a lock, the limit for a semaphore) is an overlap, and fails the run. A read/write lock's
 * holders are counted apart: a reader entering beside a writer, or a writer entering beside
 * anyone, is an overlap. Conservative in one direction only: a release is counted out before it
 * is sent, so the next holder's grant can never be seen as an overlap because of this check's
 * own timing.
 */
final class Exclusion {
    /**
     * A writer's weight in a read/write lock's counter, a reader's being one: the counter is the
     * readers inside plus this for each writer, so one atomic add shows every holder to every
     * other.
     */
    private static final long WRITER = 1L << 32;

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

    /** A reader of the read/write lock {@code key} enters: an overlap if a writer is inside. */
    void enterRead(String key) {
        Holders h = holders.computeIfAbsent(key, k -> new Holders());
        long inside = h.readWrite.addAndGet(1);
        h.peak.accumulateAndGet((int) (inside % WRITER), Math::max);
        if (inside >= WRITER) {
            overlaps.increment();
        }
    }

    void exitRead(String key) {
        holders.get(key).readWrite.addAndGet(-1);
    }

    /** The writer of the read/write lock {@code key} enters: an overlap if anyone else is inside. */
    void enterWrite(String key) {
        Holders h = holders.computeIfAbsent(key, k -> new Holders());
        if (h.readWrite.addAndGet(WRITER) != WRITER) {
            overlaps.increment();
        }
    }

    void exitWrite(String key) {
        holders.get(key).readWrite.addAndGet(-WRITER);
    }

    long overlaps() {
        return overlaps.sum();
    }

    /** The most holders seen inside {@code key} at once (a read/write lock's: readers; 0 if none ever entered). */
    int peak(String key) {
        Holders h = holders.get(key);
        return h == null ? 0 : h.peak.get();
    }

    private static final class Holders {
        final AtomicInteger inside = new AtomicInteger();
        final AtomicInteger peak = new AtomicInteger();
        /** A read/write lock's readers inside, plus {@link #WRITER} for each writer. */
        final AtomicLong readWrite = new AtomicLong();
    }
}
