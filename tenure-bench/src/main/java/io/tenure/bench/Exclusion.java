package io.tenure.bench;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * The mutual-exclusion check of every lock workload: holders per key, counted in-process
 * between "acquire returned" and "release sent". Two at once is an overlap, and fails the run.
 * Conservative in one direction only: a release is counted out before it is sent, so the
 * next holder's grant can never be seen as an overlap because of this check's own timing.
 */
final class Exclusion {
    private final ConcurrentHashMap<String, AtomicInteger> holders = new ConcurrentHashMap<>();
    private final LongAdder overlaps = new LongAdder();

    void enter(String key) {
        if (holders.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet() > 1) {
            overlaps.increment();
        }
    }

    void exit(String key) {
        holders.get(key).decrementAndGet();
    }

    long overlaps() {
        return overlaps.sum();
    }
}
