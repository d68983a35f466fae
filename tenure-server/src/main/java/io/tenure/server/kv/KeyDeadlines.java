package io.tenure.server.kv;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;

/**
 * When each key with a time to live may be expired, on this member's monotonic clock: the key-value
 * twin of the core's {@code LeaseDeadlines}. Not replicated. Every member records the time at which
 * it applied each key's latest put with a TTL (followers too, so that a new leader has them), and
 * the leader proposes {@code KvExpire(key, modRevision)} once the TTL has passed since then. A key
 * this member has no record of (its put came in a snapshot, or before a restart) starts counting
 * when this member becomes leader ({@link #startIfUnknown}): a key is never expired sooner than
 * its TTL after its put, and after a failover at most one TTL later than it would have been.
 *
 * <p>One record per key, for its latest put: a record is replaced only by one of a later mod
 * revision, and forgotten only by a change at a later revision, so a late or reordered call
 * (the new leader's scan racing an apply) never brings a deadline forward.
 *
 * <p>Time is an input: every method takes {@code now} in nanoseconds of a monotonic clock and
 * compares readings by their difference, as {@link System#nanoTime()} requires. Not thread-safe.
 */
public final class KeyDeadlines {

    /** A key whose deadline passed, with the mod revision its expiry must name. */
    public record Due(String key, long modRevision) {}

    private record Record(long modRevision, long deadline) {}

    private record Slot(long deadline, String key, long modRevision) {}

    /** Superseded slots tolerated before the queue is compacted. */
    private static final int COMPACT_SLACK = 1_024;

    private final Map<String, Record> records = new HashMap<>();
    /** Deadlines in order; superseded slots are skipped when they reach the front. */
    private final PriorityQueue<Slot> queue = new PriorityQueue<>((a, b) -> Long.signum(a.deadline - b.deadline));

    /**
     * This member applied, at {@code now}, the put of {@code key} at {@code modRevision} with a
     * TTL of {@code ttlMillis}. Ignored when a later put is recorded already.
     */
    public void put(String key, long modRevision, long ttlMillis, long now) {
        Record known = records.get(key);
        if (known != null && known.modRevision > modRevision) {
            return;
        }
        schedule(key, modRevision, now + ttlMillis * 1_000_000L);
    }

    /**
     * The new leader's rule: a key with a TTL whose put at {@code modRevision} this member has no
     * record of starts counting now. A key already recorded at that put keeps its deadline.
     */
    public void startIfUnknown(String key, long modRevision, long ttlMillis, long now) {
        Record known = records.get(key);
        if (known == null || known.modRevision < modRevision) {
            schedule(key, modRevision, now + ttlMillis * 1_000_000L);
        }
    }

    /**
     * The key changed at {@code revision} in a way that leaves it without a TTL (deleted, expired,
     * put without one): forget its deadline unless a later put is recorded.
     */
    public void forget(String key, long revision) {
        Record known = records.get(key);
        if (known != null && known.modRevision < revision) {
            records.remove(key);
        }
    }

    /** Forgets the deadline of the put at {@code modRevision}, when that is the one recorded (the key moved on, unseen). */
    public void drop(String key, long modRevision) {
        Record known = records.get(key);
        if (known != null && known.modRevision == modRevision) {
            records.remove(key);
        }
    }

    /**
     * Keys whose deadline is at or before {@code now}, earliest first, at most {@code max}. Each is
     * returned again {@code retryNanos} later until a change forgets it, so a lost or skipped expiry
     * is proposed again, never forgotten.
     */
    public List<Due> due(long now, long retryNanos, int max) {
        List<Due> due = new ArrayList<>();
        while (due.size() < max && !queue.isEmpty() && queue.peek().deadline - now <= 0) {
            Slot slot = queue.poll();
            Record known = records.get(slot.key);
            if (known == null || known.deadline != slot.deadline || known.modRevision != slot.modRevision) {
                continue; // superseded by a later put, or forgotten
            }
            due.add(new Due(slot.key, slot.modRevision));
        }
        for (Due d : due) {
            schedule(d.key(), d.modRevision(), now + retryNanos);
        }
        return due;
    }

    /** Whether this member has a deadline for the put of {@code key} at {@code modRevision}. */
    public boolean knows(String key, long modRevision) {
        Record known = records.get(key);
        return known != null && known.modRevision == modRevision;
    }

    /** Nanoseconds from {@code now} until the key could be expired here (0 when due), or -1 when no deadline is recorded. */
    public long remaining(String key, long now) {
        Record known = records.get(key);
        return known == null ? -1 : Math.max(0, known.deadline - now);
    }

    /** Keys with a recorded deadline. */
    public int size() {
        return records.size();
    }

    private void schedule(String key, long modRevision, long deadline) {
        Record previous = records.put(key, new Record(modRevision, deadline));
        if (previous == null || previous.deadline != deadline || previous.modRevision != modRevision) {
            queue.add(new Slot(deadline, key, modRevision));
        }
        if (queue.size() > 2 * records.size() + COMPACT_SLACK) {
            // A key put again and again with a long TTL leaves a superseded slot per put: keep the live ones.
            queue.removeIf(s -> {
                Record known = records.get(s.key);
                return known == null || known.deadline != s.deadline || known.modRevision != s.modRevision;
            });
        }
    }
}
