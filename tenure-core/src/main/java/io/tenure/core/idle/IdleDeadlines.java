package io.tenure.core.idle;

import io.tenure.core.kernel.IdleName;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * When each idle name may be forgotten, on this member's monotonic clock: the idle time after this
 * member first saw it idle. Every member keeps one as it applies, so that a new leader knows at
 * once; only the leader proposes. Since a name is forgotten only if it is still idle since the
 * same position, and this member saw it idle at the time recorded, a name is never forgotten
 * before it was idle for the idle time; it may be later (by the sweep interval, or by a whole idle
 * time for one this member learnt of late, from a snapshot). Time is an input; not thread-safe.
 */
public final class IdleDeadlines {
    private final long idleNanos;
    /** Each name, with the time this member first saw it idle: in that order, so the due ones come first. */
    private final LinkedHashMap<IdleName, Long> firstSeen = new LinkedHashMap<>();
    private long lastSince;

    /** @param idleNanos how long a name stays idle before it may be forgotten; 0 forgets at the next sweep */
    public IdleDeadlines(long idleNanos) {
        if (idleNanos < 0) {
            throw new IllegalArgumentException("the idle time must not be negative, got " + idleNanos + " ns");
        }
        this.idleNanos = idleNanos;
    }

    /** The position of the newest idle name seen: the next sweep asks for those after it. */
    public long lastSince() {
        return lastSince;
    }

    /** Names seen idle at {@code now}, newly or again (a name already known keeps its first time). */
    public void saw(List<IdleName> names, long now) {
        for (IdleName name : names) {
            firstSeen.putIfAbsent(name, now);
            lastSince = Math.max(lastSince, name.since());
        }
    }

    /**
     * The state was replaced (a snapshot was installed): idle names at or before the last position
     * seen may be new to this member, so the next sweep asks for all of them again.
     */
    public void rescan() {
        lastSince = 0;
    }

    /**
     * At most {@code max} names, oldest first, that were idle for the idle time at {@code now}. They
     * stay known until {@link #drop}ped: the member drops those that are no longer idle (forgotten,
     * or used again), and keeps the others for the next sweep, whether or not it leads.
     */
    public List<IdleName> due(long now, int max) {
        List<IdleName> due = new ArrayList<>();
        for (Map.Entry<IdleName, Long> e : firstSeen.entrySet()) {
            if (due.size() == max || now - e.getValue() < idleNanos) {
                break;
            }
            due.add(e.getKey());
        }
        return due;
    }

    /** Forgets {@code names}: each is no longer idle since the position it names. */
    public void drop(Collection<IdleName> names) {
        names.forEach(firstSeen::remove);
    }

    /** How many idle names this member knows of. */
    public int size() {
        return firstSeen.size();
    }
}
