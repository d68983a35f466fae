package io.tenure.it;

import io.tenure.client.Lease;
import io.tenure.client.LeaseLoss;
import io.tenure.client.LeaseLostException;
import io.tenure.client.LeaseNotFoundException;
import io.tenure.client.LockHandle;
import io.tenure.client.Leadership;
import io.tenure.client.LockNotAcquiredException;
import io.tenure.client.NotElectedException;
import io.tenure.client.TenureClient;
import io.tenure.client.TenureException;
import io.tenure.client.UnavailableException;

import java.time.Duration;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;

/**
 * The lease of one load client of the fault tests (a thread with a {@link TenureClient} of its
 * own), and the lock and election calls every such client makes the same way around it. The
 * lease is granted when first needed and replaced once lost, never while valid. An acquire (or a
 * campaign) cut by UNAVAILABLE is retried with the same lease: the wait keeps its place, and a
 * retry never leaves a second wait behind. A release (or a resignation) is retried while no
 * member answers and the lease is valid. What happens is
 * counted in the test's {@link Tally}: a lost lease or a wait that timed out is no violation; a
 * lease the server does not know while the client still trusts it is. Used by one thread.
 */
final class WorkerLease implements AutoCloseable {
    /** What a test's load clients count and record, shared by all their leases; {@code lockTimeouts} counts campaigns not elected in time too. */
    record Tally(AtomicLong unavailable, AtomicLong lockTimeouts, Queue<String> leasesLost, Queue<String> violations,
                 Queue<String> unexpected) {
        Tally() {
            this(new AtomicLong(), new AtomicLong(), new ConcurrentLinkedQueue<>(), new ConcurrentLinkedQueue<>(),
                    new ConcurrentLinkedQueue<>());
        }

        /** Records the loss of {@code lease} unless the test ended it itself (revoked or closed). */
        Lease watch(Lease lease) {
            lease.lost().thenAccept(loss -> {
                if (loss.reason() != LeaseLoss.Reason.REVOKED && loss.reason() != LeaseLoss.Reason.CLOSED) {
                    leasesLost.add(lease.clientId() + " " + lease.id() + ": " + loss);
                }
            });
            return lease;
        }
    }

    private final TenureClient client;
    private final String name;
    private final Duration ttl;
    private final Tally tally;
    private Lease lease;

    WorkerLease(TenureClient client, String name, Duration ttl, Tally tally) {
        this.client = client;
        this.name = name;
        this.ttl = ttl;
        this.tally = tally;
    }

    /**
     * Runs the client's {@code cycle} until {@code stop}, then closes the lease; an exception that
     * escapes a cycle ends the loop and is recorded as unexpected.
     */
    void loop(AtomicBoolean stop, Runnable cycle) {
        try {
            while (!stop.get()) {
                cycle.run();
            }
        } catch (RuntimeException | Error e) {
            tally.unexpected().add(name + ": " + e);
        } finally {
            close();
        }
    }

    /** The lease if it is valid, else a new one; null, after a short pause, when no member could grant one now. */
    Lease valid() {
        if (lease != null && lease.isValid()) {
            return lease;
        }
        if (lease != null) {
            lease.close();
        }
        lease = null;
        try {
            lease = tally.watch(client.grantLease(ttl, name));
        } catch (UnavailableException e) {
            tally.unavailable().incrementAndGet();
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
        }
        return lease;
    }

    /**
     * Acquires (a lock, or an election's leadership) with {@code attempt} and the {@linkplain
     * #valid() valid} lease, retrying while no member answers until {@code stop}; null when not
     * granted (the wait timed out, the lease is lost, or another error, recorded as unexpected
     * with {@code what}).
     */
    <T> T acquire(Function<Lease, T> attempt, AtomicBoolean stop, String what) {
        while (!stop.get()) {
            try {
                return attempt.apply(lease);
            } catch (UnavailableException e) {
                tally.unavailable().incrementAndGet();
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
            } catch (LockNotAcquiredException | NotElectedException e) {
                tally.lockTimeouts().incrementAndGet();
                return null;
            } catch (LeaseLostException e) {
                return null; // recorded by the tally's watch; the next valid() replaces the lease
            } catch (LeaseNotFoundException e) {
                if (lease.isValid()) {
                    tally.violations().add(name + ": the server does not know lease " + lease.id()
                            + " while its last keep-alive was acknowledged within its safe window: " + e.getMessage());
                }
                lease.close();
                lease = null;
                return null;
            } catch (TenureException e) {
                tally.unexpected().add(name + " " + what + ": " + e);
                return null;
            }
        }
        return null;
    }

    /**
     * Releases {@code handle}, retrying while no member answers and its lease is valid (with the
     * lease lost, the lock ends with it); false after another error, recorded as unexpected.
     */
    boolean release(LockHandle handle) {
        return giveBack(handle::release, handle.lease(), "unlock " + handle);
    }

    /** Resigns {@code leading}, as {@link #release} releases a lock. */
    boolean resign(Leadership leading) {
        return giveBack(leading::resign, leading.lease(), "resign " + leading);
    }

    private boolean giveBack(Runnable call, Lease held, String what) {
        while (true) {
            try {
                call.run();
                return true;
            } catch (UnavailableException e) {
                tally.unavailable().incrementAndGet();
                if (!held.isValid()) {
                    return true;
                }
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
            } catch (TenureException e) {
                tally.unexpected().add(name + " " + what + ": " + e);
                return false;
            }
        }
    }

    @Override
    public void close() {
        if (lease != null) {
            lease.close();
        }
    }
}
