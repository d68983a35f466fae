package io.tenure.core.kernel;

import java.util.Objects;

/**
 * A map from {@code long} keys to non-null values that boxes no key: open addressing with linear
 * probing, and backward-shift deletion (no tombstones). For lookups by lease on every acquire,
 * where a {@code HashMap<Long, V>} allocates a {@code Long} per call. It has no iteration, so its
 * order can never leak into the state.
 */
final class LongMap<V> {
    private long[] keys;
    private Object[] values; // null: a free slot
    private int size;

    LongMap() {
        keys = new long[16];
        values = new Object[16];
    }

    int size() {
        return size;
    }

    /** The value of {@code key}, or null. */
    @SuppressWarnings("unchecked")
    V get(long key) {
        int mask = keys.length - 1;
        for (int i = slot(key, mask); ; i = (i + 1) & mask) {
            Object value = values[i];
            if (value == null) {
                return null;
            }
            if (keys[i] == key) {
                return (V) value;
            }
        }
    }

    /** Sets {@code key} to {@code value} (not null). */
    void put(long key, V value) {
        Objects.requireNonNull(value, "value");
        if ((size + 1) * 4L > keys.length * 3L) {
            resize(keys.length * 2);
        }
        int mask = keys.length - 1;
        for (int i = slot(key, mask); ; i = (i + 1) & mask) {
            if (values[i] == null) {
                keys[i] = key;
                values[i] = value;
                size++;
                return;
            }
            if (keys[i] == key) {
                values[i] = value;
                return;
            }
        }
    }

    /** Removes {@code key}; returns its value, or null when it had none. */
    @SuppressWarnings("unchecked")
    V remove(long key) {
        int mask = keys.length - 1;
        int hole = slot(key, mask);
        while (values[hole] != null && keys[hole] != key) {
            hole = (hole + 1) & mask;
        }
        V removed = (V) values[hole];
        if (removed == null) {
            return null;
        }
        // Pull back every later entry of the run whose home slot does not lie after the hole, so
        // that each stays reachable from its home without a tombstone.
        for (int j = (hole + 1) & mask; values[j] != null; j = (j + 1) & mask) {
            int home = slot(keys[j], mask);
            if (((j - home) & mask) >= ((j - hole) & mask)) {
                keys[hole] = keys[j];
                values[hole] = values[j];
                hole = j;
            }
        }
        keys[hole] = 0;
        values[hole] = null;
        size--;
        return removed;
    }

    private void resize(int capacity) {
        long[] oldKeys = keys;
        Object[] oldValues = values;
        keys = new long[capacity];
        values = new Object[capacity];
        int mask = capacity - 1;
        for (int k = 0; k < oldKeys.length; k++) {
            if (oldValues[k] != null) {
                int i = slot(oldKeys[k], mask);
                while (values[i] != null) {
                    i = (i + 1) & mask;
                }
                keys[i] = oldKeys[k];
                values[i] = oldValues[k];
            }
        }
    }

    private static int slot(long key, int mask) {
        long h = key * 0x9E3779B97F4A7C15L; // Fibonacci hashing: consecutive ids spread over the table
        return (int) (h ^ (h >>> 32)) & mask;
    }
}
