package io.tenure.it;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The storage a lock protects, in the test: one register per key that accepts a write only with
 * a fencing token larger than the highest it has accepted for that key (the usage the README
 * prescribes), and counts the holders inside each key's critical section to catch two at once.
 * Holders do a read-modify-write (read, then write the value plus one), so an overlap also shows
 * as a lost update.
 */
final class FencedRegister {
    /** An accepted or refused write. */
    record Write(String key, long token, String writer, long atNanos) {
    }

    private static final class Slot {
        final AtomicInteger holders = new AtomicInteger();
        /** Who is inside, with the token and lease validity each entered with. */
        final Map<String, String> inside = new java.util.concurrent.ConcurrentHashMap<>();
        long highest = Long.MIN_VALUE; // guarded by this
        long value; // guarded by this
        final List<Write> accepted = new ArrayList<>(); // guarded by this
    }

    private final Map<String, Slot> slots = new LinkedHashMap<>();
    private final List<String> overlaps = new CopyOnWriteArrayList<>();
    private final List<Write> refused = new CopyOnWriteArrayList<>();

    FencedRegister(List<String> keys) {
        keys.forEach(key -> slots.put(key, new Slot()));
    }

    /** Enters the key's critical section; an overlap is recorded when someone else is inside. */
    void enter(String key, String who, long token) {
        enter(key, who, token, "");
    }

    /** {@link #enter(String, String, long)}, with what the holder knew of its hold, for the report of an overlap. */
    void enter(String key, String who, long token, String detail) {
        Slot slot = slot(key);
        Map<String, String> others = Map.copyOf(slot.inside);
        slot.inside.put(who, "token " + token + (detail.isEmpty() ? "" : ", " + detail));
        int inside = slot.holders.incrementAndGet();
        if (inside > 1) {
            overlaps.add(who + " (token " + token + (detail.isEmpty() ? "" : ", " + detail) + ") entered " + key
                    + " while " + (inside - 1) + " other holder(s) were inside " + others);
        }
    }

    void exit(String key) {
        slot(key).holders.decrementAndGet();
    }

    /** Leaves the key's critical section entered with {@link #enter(String, String, long, String)}. */
    void exit(String key, String who) {
        slot(key).inside.remove(who);
        exit(key);
    }

    long read(String key) {
        Slot slot = slot(key);
        synchronized (slot) {
            return slot.value;
        }
    }

    /** The fenced write: accepted only with a token above every token accepted for this key. */
    boolean write(String key, long token, long value, String writer) {
        Slot slot = slot(key);
        synchronized (slot) {
            if (token <= slot.highest) {
                refused.add(new Write(key, token, writer, System.nanoTime()));
                return false;
            }
            slot.highest = token;
            slot.value = value;
            slot.accepted.add(new Write(key, token, writer, System.nanoTime()));
            return true;
        }
    }

    /** The accepted writes of a key, in acceptance order. */
    List<Write> history(String key) {
        Slot slot = slot(key);
        synchronized (slot) {
            return List.copyOf(slot.accepted);
        }
    }

    long value(String key) {
        return read(key);
    }

    List<String> overlaps() {
        return List.copyOf(overlaps);
    }

    List<Write> refused() {
        return List.copyOf(refused);
    }

    List<String> keys() {
        return new ArrayList<>(slots.keySet());
    }

    private Slot slot(String key) {
        Slot slot = slots.get(key);
        if (slot == null) {
            throw new IllegalArgumentException("no register for " + key);
        }
        return slot;
    }
}
