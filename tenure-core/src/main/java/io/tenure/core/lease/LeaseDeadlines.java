package io.tenure.core.lease;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;

/**
 * When each lease may be expired, on this member's monotonic clock. Not replicated: every
 * member records the time at which it applied each lease's latest grant or renewal, and the
 * leader expires a lease once its TTL has passed since then (RATIS.md, "Leases and leader
 * changes"). So a lease is never expired sooner than TTL after the renewal the expiring member
 * applied (I5), no TTL is reset wholesale on a leader change, and a dead client's lease ends
 * about TTL after its last renewal, plus a failover at most.
 *
 * <p>Time is an input: every method takes {@code now} in nanoseconds of a monotonic clock, and
 * compares readings by their difference, as {@link System#nanoTime()} requires. Not thread-safe.
 */
public final class LeaseDeadlines {

    /** A lease whose deadline passed, with the renewal point the expiry must be conditional on. */
    public record Due(long leaseId, long renewedAt) {}

    private record Entry(long renewedAt, long deadline) {}

    private record Slot(long deadline, long leaseId) {}

    private final Map<Long, Entry> entries = new HashMap<>();
    /** Deadlines in order; superseded slots are skipped when they reach the front. */
    private final PriorityQueue<Slot> queue = new PriorityQueue<>((a, b) -> Long.signum(a.deadline - b.deadline));

    /** The lease was granted or renewed at log position {@code renewedAt}, applied here at {@code now}. */
    public void renewed(long leaseId, long ttlMillis, long renewedAt, long now) {
        schedule(leaseId, renewedAt, now + ttlMillis * 1_000_000L);
    }

    /** The lease ended (expired, revoked); forget it. */
    public void ended(long leaseId) {
        entries.remove(leaseId);
    }

    /** Whether this member has a record of the lease. */
    public boolean knows(long leaseId) {
        return entries.containsKey(leaseId);
    }

    /**
     * Leases whose deadline is at or before {@code now}. Each is returned again {@code retryNanos}
     * later until it is renewed or ended, so a lost expiry proposal is retried, never forgotten.
     */
    public List<Due> due(long now, long retryNanos) {
        List<Due> due = new ArrayList<>();
        while (!queue.isEmpty() && queue.peek().deadline - now <= 0) {
            Slot slot = queue.poll();
            Entry entry = entries.get(slot.leaseId);
            if (entry == null || entry.deadline != slot.deadline) {
                continue; // superseded by a renewal, or ended
            }
            due.add(new Due(slot.leaseId, entry.renewedAt));
        }
        for (Due d : due) {
            schedule(d.leaseId(), d.renewedAt(), now + retryNanos);
        }
        return due;
    }

    /** Nanoseconds from {@code now} to the earliest deadline, or -1 when no lease is known. */
    public long nanosUntilNext(long now) {
        while (!queue.isEmpty()) {
            Slot slot = queue.peek();
            Entry entry = entries.get(slot.leaseId);
            if (entry != null && entry.deadline == slot.deadline) {
                return Math.max(0, slot.deadline - now);
            }
            queue.poll();
        }
        return -1;
    }

    /** Remaining time before the lease could be expired here, in nanoseconds, or -1 when unknown. */
    public long remaining(long leaseId, long now) {
        Entry entry = entries.get(leaseId);
        return entry == null ? -1 : Math.max(0, entry.deadline - now);
    }

    public int size() {
        return entries.size();
    }

    private void schedule(long leaseId, long renewedAt, long deadline) {
        Entry previous = entries.put(leaseId, new Entry(renewedAt, deadline));
        if (previous == null || previous.deadline != deadline) {
            queue.add(new Slot(deadline, leaseId));
        }
    }
}
