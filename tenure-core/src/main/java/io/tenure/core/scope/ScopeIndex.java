package io.tenure.core.scope;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Every scope held, of every kind, by hold id (a grant's fencing token, unique across all
 * grants): which holds a claim of a scope in a mode conflicts with, as {@link LockScope#conflicts}
 * says, found without looking at unrelated holds. Names and whole inodes are kept by key, byte
 * ranges in a {@link RangeIndex} per inode, paths in one {@link PathIndex}.
 *
 * <p>Deterministic: answers come sorted by hold id. Not thread-safe.
 */
public final class ScopeIndex {
    private record Entry(LockScope scope, boolean exclusive) {}

    private final Map<Long, Entry> byHold = new HashMap<>();
    private final Map<String, TreeMap<Long, Boolean>> names = new HashMap<>();
    private final Map<Long, TreeMap<Long, Boolean>> wholeInodes = new HashMap<>();
    private final Map<Long, RangeIndex> ranges = new HashMap<>();
    private final PathIndex paths = new PathIndex();

    public int size() {
        return byHold.size();
    }

    public boolean isEmpty() {
        return byHold.isEmpty();
    }

    /** The scope hold {@code hold} holds, or null. */
    public LockScope scopeOf(long hold) {
        Entry entry = byHold.get(hold);
        return entry == null ? null : entry.scope();
    }

    /** Whether hold {@code hold} holds its scope exclusively (false also when it holds nothing here). */
    public boolean exclusive(long hold) {
        Entry entry = byHold.get(hold);
        return entry != null && entry.exclusive();
    }

    /**
     * Records that hold {@code hold} holds {@code scope}; it does not check for conflicts (the
     * caller granted it because {@link #conflicts} found none).
     *
     * @throws IllegalArgumentException when the hold already holds a scope here
     */
    public void add(long hold, LockScope scope, boolean exclusive) {
        if (byHold.containsKey(hold)) {
            throw new IllegalArgumentException("hold " + hold + " already holds " + byHold.get(hold).scope());
        }
        if (scope instanceof LockScope.Named n) {
            names.computeIfAbsent(n.name(), k -> new TreeMap<>()).put(hold, exclusive);
        } else if (scope instanceof LockScope.Inode i) {
            wholeInodes.computeIfAbsent(i.inode(), k -> new TreeMap<>()).put(hold, exclusive);
        } else if (scope instanceof LockScope.ByteRange r) {
            ranges.computeIfAbsent(r.inode(), k -> new RangeIndex()).add(hold, r.start(), r.end(), exclusive);
        } else if (scope instanceof LockScope.Path p) {
            paths.add(hold, p.path(), exclusive);
        }
        byHold.put(hold, new Entry(scope, exclusive));
    }

    /** Forgets hold {@code hold}; whether it held anything here. */
    public boolean remove(long hold) {
        Entry entry = byHold.remove(hold);
        if (entry == null) {
            return false;
        }
        LockScope scope = entry.scope();
        if (scope instanceof LockScope.Named n) {
            removeKeyed(names, n.name(), hold);
        } else if (scope instanceof LockScope.Inode i) {
            removeKeyed(wholeInodes, i.inode(), hold);
        } else if (scope instanceof LockScope.ByteRange r) {
            RangeIndex index = ranges.get(r.inode());
            index.remove(hold);
            if (index.isEmpty()) {
                ranges.remove(r.inode());
            }
        } else if (scope instanceof LockScope.Path) {
            paths.remove(hold);
        }
        return true;
    }

    /** The holds that keep a claim of {@code scope} in the given mode from being granted, by hold id. */
    public List<Long> conflicts(LockScope scope, boolean exclusive) {
        List<Long> out = new ArrayList<>();
        if (scope instanceof LockScope.Named n) {
            addKeyed(names.get(n.name()), exclusive, out);
        } else if (scope instanceof LockScope.Inode i) {
            addKeyed(wholeInodes.get(i.inode()), exclusive, out);
            RangeIndex index = ranges.get(i.inode());
            if (index != null) {
                index.conflicts(0, Long.MAX_VALUE, exclusive).forEach(h -> out.add(h.hold()));
            }
        } else if (scope instanceof LockScope.ByteRange r) {
            addKeyed(wholeInodes.get(r.inode()), exclusive, out);
            RangeIndex index = ranges.get(r.inode());
            if (index != null) {
                index.conflicts(r.start(), r.end(), exclusive).forEach(h -> out.add(h.hold()));
            }
        } else if (scope instanceof LockScope.Path p) {
            paths.conflicts(p.path(), exclusive).forEach(h -> out.add(h.hold()));
        }
        out.sort(null);
        return out;
    }

    private static void addKeyed(TreeMap<Long, Boolean> holds, boolean exclusive, List<Long> out) {
        if (holds == null) {
            return;
        }
        holds.forEach((hold, heldExclusive) -> {
            if (exclusive || heldExclusive) {
                out.add(hold);
            }
        });
    }

    private static <K> void removeKeyed(Map<K, TreeMap<Long, Boolean>> byKey, K key, long hold) {
        TreeMap<Long, Boolean> holds = byKey.get(key);
        holds.remove(hold);
        if (holds.isEmpty()) {
            byKey.remove(key);
        }
    }
}
