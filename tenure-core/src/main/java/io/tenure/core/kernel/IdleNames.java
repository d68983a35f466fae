package io.tenure.core.kernel;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * The idle names of every namespace ({@link Names}) of one state, ordered by the position each
 * became idle at, so the leader learns of new ones in one place without scanning them all. A
 * name is idle as one kind: a counter and a lock may both be called "x", and both be idle.
 */
final class IdleNames {
    private record Slot(String kind, String name) {}

    private final Map<Slot, IdleName> idle = new HashMap<>();
    private final TreeSet<IdleName> bySince = new TreeSet<>(
            Comparator.comparingLong(IdleName::since).thenComparing(IdleName::name).thenComparing(IdleName::kind));

    void idle(IdleName entry) {
        busy(entry.kind(), entry.name());
        idle.put(new Slot(entry.kind(), entry.name()), entry);
        bySince.add(entry);
    }

    /** {@code name} of {@code kind} is in use again, or gone: no longer idle. */
    void busy(String kind, String name) {
        IdleName before = idle.remove(new Slot(kind, name));
        if (before != null) {
            bySince.remove(before);
        }
    }

    /** The entry of {@code name} of {@code kind}, or null when it is not idle. */
    IdleName get(String kind, String name) {
        return idle.get(new Slot(kind, name));
    }

    boolean stillIdle(IdleName entry) {
        return entry.equals(get(entry.kind(), entry.name()));
    }

    List<IdleName> after(long position, int limit) {
        List<IdleName> after = new ArrayList<>();
        for (IdleName entry : bySince.tailSet(new IdleName("", "", position + 1), true)) {
            if (after.size() == limit) {
                break;
            }
            after.add(entry);
        }
        return after;
    }

    int size() {
        return idle.size();
    }
}
