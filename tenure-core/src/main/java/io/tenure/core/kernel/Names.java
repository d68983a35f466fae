package io.tenure.core.kernel;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

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
 *
 * <p>A kind with a namespace of its own (counters) makes it with {@link #newNamespace}: its names
 * never clash with these, and its idle ones are in the same order, so the leader forgets them
 * the same way.
 */
public final class Names {
    private final Map<String, String> kinds = new HashMap<>();
    /** The idle names of this namespace and of every one made from it. */
    private final IdleNames idle;

    public Names() {
        this(new IdleNames());
    }

    private Names(IdleNames idle) {
        this.idle = idle;
    }

    /**
     * Another namespace whose names never clash with these, sharing their idle names: what goes
     * idle there is forgotten through {@link IdleForget} as these are.
     */
    public Names newNamespace() {
        return new Names(idle);
    }

    /**
     * Null when {@code name} is free or exists as {@code kind}; otherwise the refusal, naming both
     * kinds (for example "'jobs/a' is a lock, not a semaphore").
     */
    public String mismatch(String name, String kind) {
        String existing = kinds.get(name);
        if (existing == null || existing.equals(kind)) {
            return null;
        }
        IdleName resting = idle.get(existing, name);
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
        idle.busy(kind, name);
    }

    /** {@code name} no longer exists as {@code kind}. */
    public void free(String name, String kind) {
        if (kinds.remove(name, kind)) {
            idle.busy(kind, name);
        }
    }

    /** {@code name}, of {@code kind}, has no holder and no waiter since {@code position}; it stays its kind until forgotten. */
    public void idle(String name, String kind, long position) {
        if (!kind.equals(kinds.get(name))) {
            throw new IllegalStateException("'" + name + "' is not a " + kind);
        }
        idle.idle(new IdleName(kind, name, position));
    }

    /** Whether {@code name} is idle (exists, with no holder and no waiter). */
    public boolean isIdle(String name) {
        String kind = kinds.get(name);
        return kind != null && idle.get(kind, name) != null;
    }

    /** The position {@code name} became idle at, or 0 when it is not idle. */
    public long idleSinceOf(String name) {
        String kind = kinds.get(name);
        IdleName entry = kind == null ? null : idle.get(kind, name);
        return entry == null ? 0 : entry.since();
    }

    /** Whether {@code entry} still stands: the name is idle, of that kind, since that position (in any namespace sharing these idle names). */
    public boolean stillIdle(IdleName entry) {
        return idle.stillIdle(entry);
    }

    /** Idle names that became idle after {@code position}, oldest first, at most {@code limit}, over every namespace sharing them. */
    public List<IdleName> idleAfter(long position, int limit) {
        return idle.after(position, limit);
    }

    /** How many names are idle, over every namespace sharing them. */
    public int idleCount() {
        return idle.size();
    }

    /** How many names exist in this namespace, over every kind. */
    public int size() {
        return kinds.size();
    }
}
