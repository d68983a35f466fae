package io.tenure.core.kernel;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * Which names of one primitive each lease holds and waits for: what a lease's end must release
 * and withdraw, and what a lease reports. Kept by that primitive's {@link GrantQueue}s, never by
 * hand. Looked up by lease, never iterated unordered. A lease may hold or wait for one name
 * several times (claims of one queue known by their own ids): the name stays tied until the
 * last of them goes.
 */
public final class Ties {
    private final LongMap<TreeMap<String, Integer>> held = new LongMap<>();
    private final LongMap<TreeMap<String, Integer>> waiting = new LongMap<>();
    /** Told each time a lease begins or stops holding, or waiting for, a name; null when nobody counts. */
    private final Leases counted;

    /**
     * Ties whose counts the lease table keeps per client and per owner ({@link Leases#tiesOfClient}):
     * what a primitive's {@link Primitive#ties()} returns, so that the limits on every acquire need
     * not visit each of a client's leases.
     */
    public Ties(Leases leases) {
        this.counted = java.util.Objects.requireNonNull(leases, "leases");
    }

    /** Ties nobody counts: for a queue inside a primitive that counts its leases' names itself. */
    public Ties() {
        this.counted = null;
    }

    /** Whether lease table {@code leases} counts these ties per client and per owner. */
    public boolean countedBy(Leases leases) {
        return counted != null && counted == leases;
    }

    /** What the lease holds, sorted; empty when nothing. */
    public SortedSet<String> heldBy(long leaseId) {
        return view(held.get(leaseId));
    }

    /** What the lease waits for, sorted; empty when nothing. */
    public SortedSet<String> waitedBy(long leaseId) {
        return view(waiting.get(leaseId));
    }

    /** Whether the lease holds or waits for {@code key}. */
    public boolean holdsOrWaits(long leaseId, String key) {
        return holds(leaseId, key) || waitsFor(leaseId, key);
    }

    private boolean holds(long leaseId, String key) {
        TreeMap<String, Integer> keys = held.get(leaseId);
        return keys != null && keys.containsKey(key);
    }

    private boolean waitsFor(long leaseId, String key) {
        TreeMap<String, Integer> keys = waiting.get(leaseId);
        return keys != null && keys.containsKey(key);
    }

    /** The size of {@link #heldBy}, without a view. */
    public int heldCount(long leaseId) {
        TreeMap<String, Integer> keys = held.get(leaseId);
        return keys == null ? 0 : keys.size();
    }

    /** The size of {@link #waitedBy}, without a view. */
    public int waitCount(long leaseId) {
        TreeMap<String, Integer> keys = waiting.get(leaseId);
        return keys == null ? 0 : keys.size();
    }

    /**
     * The views of the resources whose names start with {@code prefix}, in name order, at most
     * {@code limit}: the listing every primitive with named resources offers.
     */
    public static <T, V> List<V> prefixed(NavigableMap<String, T> byName, String prefix, int limit, Function<T, V> view) {
        List<V> found = new ArrayList<>();
        for (Map.Entry<String, T> e : byName.tailMap(prefix, true).entrySet()) {
            if (found.size() >= limit || !e.getKey().startsWith(prefix)) {
                break;
            }
            found.add(view.apply(e.getValue()));
        }
        return found;
    }

    void hold(long leaseId, String key) {
        add(held, leaseId, key);
    }

    void unhold(long leaseId, String key) {
        remove(held, leaseId, key);
    }

    void await(long leaseId, String key) {
        add(waiting, leaseId, key);
    }

    void unawait(long leaseId, String key) {
        remove(waiting, leaseId, key);
    }

    private void add(LongMap<TreeMap<String, Integer>> ties, long leaseId, String key) {
        TreeMap<String, Integer> keys = ties.get(leaseId);
        if (keys == null) {
            keys = new TreeMap<>();
            ties.put(leaseId, keys);
        }
        if (keys.merge(key, 1, Integer::sum) == 1 && counted != null) {
            counted.tied(leaseId, 1); // a name newly tied: the sizes the counts follow grew by one
        }
    }

    private void remove(LongMap<TreeMap<String, Integer>> ties, long leaseId, String key) {
        TreeMap<String, Integer> keys = ties.get(leaseId);
        if (keys == null) {
            return;
        }
        Integer count = keys.get(key);
        if (count == null) {
            return;
        }
        if (count > 1) {
            keys.put(key, count - 1);
        } else {
            keys.remove(key);
            if (keys.isEmpty()) {
                ties.remove(leaseId);
            }
            if (counted != null) {
                counted.tied(leaseId, -1);
            }
        }
    }

    private static SortedSet<String> view(TreeMap<String, Integer> keys) {
        return keys == null ? Primitive.EMPTY : Collections.unmodifiableSortedSet(keys.navigableKeySet());
    }
}
