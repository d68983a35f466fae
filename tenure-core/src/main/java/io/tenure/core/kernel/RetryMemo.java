package io.tenure.core.kernel;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What recent commands answered, so that a retry (the same request after a lost answer, or
 * after a failover) gets the same answer instead of a refusal: the exactly-once guarantee lives
 * in the replicated state, not in the Raft library's in-memory retry cache. Bounded, oldest
 * forgotten first, in insertion order: deterministic, and written to snapshots in that order.
 */
public final class RetryMemo<K, V> {
    private final int capacity;
    private final LinkedHashMap<K, V> entries;

    public RetryMemo(int capacity) {
        this.capacity = capacity;
        this.entries = new LinkedHashMap<>(Math.min(capacity, 1024), 0.75f, false) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<K, V> eldest) {
                return size() > RetryMemo.this.capacity;
            }
        };
    }

    public void remember(K key, V answer) {
        entries.put(key, answer);
    }

    /** The remembered answer, or null. */
    public V recall(K key) {
        return entries.get(key);
    }

    public int size() {
        return entries.size();
    }

    public int capacity() {
        return capacity;
    }

    /** Oldest first. */
    public Map<K, V> entries() {
        return Collections.unmodifiableMap(entries);
    }
}
