package io.tenure.server;

import io.tenure.server.metrics.ServerMetrics;
import io.tenure.server.raft.Proposer;
import io.tenure.server.raft.Proposer.Lane;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.function.LongSupplier;

/**
 * Whether the member takes new work now. A member whose log is behind sheds new requests
 * (acquires, grants, reads, watches) with a retry hint instead of queueing them without bound, so
 * that the renewals that keep held leases alive, which are never shed and go first in the log
 * ({@link Lane#RENEWAL}), are still answered within their clients' safety windows.
 *
 * <p>"Behind" is measured, not guessed: the age of the oldest new work waiting for a log entry
 * (it grows once requests arrive faster than entries commit and apply), the age of the oldest
 * renewal waiting (renewals come first: while they wait, nothing new is taken), and the number of
 * commands waiting. The hint is about twice the work queue's age: the time its backlog needs to
 * drain, so that clients that were shed together come back once it has.
 */
public final class Admission {
    /** How long new work may wait for the log before the member sheds new work. */
    public static final Duration DEFAULT_SHED_AFTER = Duration.ofMillis(200);
    /** Commands of new work waiting for the log at most, whatever their age. */
    public static final int MAX_WAITING = 100_000;
    static final long MIN_HINT_MS = 50;
    static final long MAX_HINT_MS = 5_000;

    /** What waits for the log (the {@link Proposer}'s queues). */
    public interface Backlog {
        /** The waits of the oldest renewal and the oldest new work (0 when none), and how much work waits, read at once. */
        record Waits(long renewalNanos, long workNanos, int workWaiting) {}

        Waits waits(long now);
    }

    private final Backlog proposer;
    private final ServerMetrics metrics;
    private final long shedAfterNanos;
    private final LongSupplier nanoClock;

    public Admission(Backlog proposer, ServerMetrics metrics, Duration shedAfter, LongSupplier nanoClock) {
        this.proposer = proposer;
        this.metrics = metrics;
        this.shedAfterNanos = shedAfter.toNanos();
        this.nanoClock = nanoClock;
    }

    /**
     * Starts a linearizable read with {@code barrier} (the proposer's read barrier), unless the
     * member sheds reads now: then the read fails with {@link Overloaded}, before any barrier.
     */
    public CompletableFuture<Void> admitRead(Supplier<CompletableFuture<Void>> barrier) {
        try {
            admit("read");
        } catch (Overloaded shed) {
            return CompletableFuture.failedFuture(shed);
        }
        return barrier.get();
    }

    /**
     * Takes one new request of {@code kind}, or sheds it.
     *
     * @throws Overloaded when the member is behind; counted by kind in the metrics
     */
    public void admit(String kind) {
        Backlog.Waits waits = proposer.waits(nanoClock.getAsLong());
        long work = waits.workNanos();
        long renewal = waits.renewalNanos();
        int waiting = waits.workWaiting();
        String behind;
        if (work >= shedAfterNanos) {
            behind = "new work has waited " + millis(work) + " ms for the log";
        } else if (renewal >= shedAfterNanos / 4) {
            behind = "lease renewals have waited " + millis(renewal) + " ms for the log";
        } else if (waiting >= MAX_WAITING) {
            behind = waiting + " commands wait for the log";
        } else {
            return;
        }
        long hint = Math.max(MIN_HINT_MS, Math.min(MAX_HINT_MS, 2 * millis(Math.max(work, renewal))));
        metrics.shed(kind);
        throw new Overloaded(kind, hint, "this member is behind (" + behind + "): " + kind
                + " not taken; retry in about " + hint + " ms (keep-alives are still served)");
    }

    private static long millis(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }
}
