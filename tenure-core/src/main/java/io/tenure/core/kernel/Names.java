package io.tenure.core.kernel;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * The one namespace of the grant-queue kinds (locks, semaphores, and the kinds to come): a name
 * that exists as one kind refuses a request of another, with a message naming both. Each
 * primitive takes a name when it creates the resource and frees it when the resource goes, and
 * takes its names again when it reads its snapshot section, so this is never written itself.
 *
 * <p>A kind whose idle resource keeps something worth keeping (a semaphore's limit, a barrier's
 * parties) does not free its name when the last holder and waiter go: it marks it {@link #idle}
 * at that position, and the name goes when the leader, after the member's idle time, proposes
 * {@link IdleForget} for it at that same position. Idle names are ordered by that position, so
 * the leader learns of new ones without scanning them all.
 */
public final class Names {
    private final Map<String, String> kinds = new HashMap<>();
    /** Idle name → the position it became idle at. */
    private final Map<String, IdleName> idle = new HashMap<>();
    private final TreeSet<IdleName> idleBySince = new TreeSet<>(
            Comparator.comparingLong(IdleName::since).thenComparing(IdleName::name));

    /**
     * Null when {@code name} is free or exists as {@code kind}; otherwise the refusal, naming both
     * kinds (for example "'jobs/a' is a lock, not a semaphore").
     */
    public String mismatch(String name, String kind) {
        String existing = kinds.get(name);
        if (existing == null || existing.equals(kind)) {
            return null;
        }
        IdleName resting = idle.get(name);
        return "'" + name + "' is " + article(existing) + existing + ", not " + article(kind) + kind
                + (resting == null ? " (a name is of one kind while it is held or waited for)"
                        : " (idle since revision " + resting.since() + "; a name stays its kind for the idle time after its last use)");
    }

    private static String article(String kind) {
        return "aeiou".indexOf(kind.charAt(0)) >= 0 ? "an " : "a ";
    }

    /** {@code name} now exists as {@code kind}, in use; the caller checked {@link #mismatch} first. */
    public void take(String name, String kind) {
        String before = kinds.putIfAbsent(name, kind);
        if (before != null && !before.equals(kind)) {
            throw new IllegalStateException("'" + name + "' is already a " + before + ", not a " + kind);
        }
        busy(name);
    }

    /** {@code name} no longer exists as {@code kind}. */
    public void free(String name, String kind) {
        if (kinds.remove(name, kind)) {
            busy(name);
        }
    }

    /** {@code name}, of {@code kind}, has no holder and no waiter since {@code position}; it stays its kind until forgotten. */
    public void idle(String name, String kind, long position) {
        if (!kind.equals(kinds.get(name))) {
            throw new IllegalStateException("'" + name + "' is not a " + kind);
        }
        busy(name);
        IdleName entry = new IdleName(kind, name, position);
        idle.put(name, entry);
        idleBySince.add(entry);
    }

    /** Whether {@code name} is idle (exists, with no holder and no waiter). */
    public boolean isIdle(String name) {
        return idle.containsKey(name);
    }

    /** The position {@code name} became idle at, or 0 when it is not idle. */
    public long idleSinceOf(String name) {
        IdleName entry = idle.get(name);
        return entry == null ? 0 : entry.since();
    }

    /** Whether {@code entry} still stands: the name is idle, of that kind, since that position. */
    public boolean stillIdle(IdleName entry) {
        return entry.equals(idle.get(entry.name()));
    }

    private void busy(String name) {
        IdleName before = idle.remove(name);
        if (before != null) {
            idleBySince.remove(before);
        }
    }

    /** Idle names that became idle after {@code position}, oldest first, at most {@code limit}. */
    public List<IdleName> idleAfter(long position, int limit) {
        List<IdleName> after = new ArrayList<>();
        for (IdleName entry : idleBySince.tailSet(new IdleName("", "", position + 1), true)) {
            if (after.size() == limit) {
                break;
            }
            after.add(entry);
        }
        return after;
    }

    /** How many names are idle. */
    public int idleCount() {
        return idle.size();
    }

    /** How many names exist, over every kind. */
    public int size() {
        return kinds.size();
    }
}
