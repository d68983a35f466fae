package io.tenure.client;

import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A Tenure lock seen as a {@link java.util.concurrent.locks.Lock}, as {@link TenureLock#asLock()}
 * hands it out, for code written against the JDK's locks; {@link #fencingToken()} gives the token
 * of the grant to send with every protected write.
 *
 * <pre>{@code
 * FencedLock lock = client.lock("invoices/2026-11").asLock();
 * if (lock.tryLock(30, TimeUnit.SECONDS)) {
 *     try {
 *         ledger.write("invoices/2026-11", lock.fencingToken(), () -> closeTheMonth());
 *     } finally {
 *         lock.unlock();   // the next waiter gets the lock, with a larger token
 *     }
 * }
 * }</pre>
 *
 * <h2>The one difference: ownership is the lease, not the thread</h2>
 * A {@link java.util.concurrent.locks.ReentrantLock} belongs to the thread that locked it. This
 * lock belongs to the lease of its {@link TenureLock} (the client's session lease, or the one
 * given to {@link TenureClient#lock(String, Lease)}), as every Tenure grant does. So:
 * <ul>
 *   <li><b>Threads sharing a view share the hold.</b> While the view holds the lock, a
 *       {@code lock()} or {@code tryLock()} from any thread returns at once and adds one to the
 *       hold count, and any thread may {@code unlock()}; the lock goes to the next waiter when the
 *       count comes back to zero, as a {@code ReentrantLock}'s does. Views of one name over one
 *       lease are one grant on the server: keep one view per name and lease.</li>
 *   <li><b>To exclude threads of one process from each other</b>, give each a lease of its own
 *       ({@code client.lock(name, client.grantLease(ttl)).asLock()}), or put a JVM lock in front
 *       (as the {@code tenure-spring} module's lock registry does).</li>
 *   <li><b>The lock can end without {@code unlock()}</b>: when the lease is {@linkplain Lease#lost()
 *       lost}, the server may give the lock to another holder. From then on {@link #fencingToken()},
 *       {@code lock()} and {@code tryLock()} throw {@link LeaseLostException}, and so does each
 *       {@link #unlock()}, after counting the hold down, so that the code that held it learns that
 *       its work may have overlapped another holder's. Send {@link #fencingToken()} with every
 *       write: a pause can outlast the lease between a check and the write.</li>
 * </ul>
 *
 * <p>Only one thread of a view waits on the server at a time; the others wait for it, and find
 * the lock held when it was granted. Waits are FIFO on the server, across every client.
 * {@link #lockInterruptibly()} and {@link #tryLock(long, TimeUnit)} withdraw their wait from the
 * lock's queue on the server when interrupted or when the time runs out (a grant that won that
 * race is given back), so no ghost waiter holds up the others. {@link #lock()} waits until
 * granted, ignoring interrupts as the JDK's does; it throws {@link LeaseLostException} if the lease
 * is lost while it waits, and {@link UnavailableException} if no member can be reached. Conditions
 * are not supported ({@link #newCondition()}).
 *
 * <p>Thread-safe.
 */
public final class FencedLock implements Lock {
    private final TenureLock lock;
    /** One thread of this view at a time waits on the server; the lease's queue entry is the view's. */
    private final ReentrantLock acquiring = new ReentrantLock(true);
    /** The grant while the view holds the lock, else null. Guarded by this. */
    private LockHandle held;
    /** Locks minus unlocks while {@link #held} is set. Guarded by this. */
    private int holds;

    FencedLock(TenureLock lock) {
        this.lock = lock;
    }

    /** The lock's name. */
    public String name() {
        return lock.name();
    }

    /**
     * Waits in the lock's queue until granted, or adds a hold if this view holds it. Interrupts
     * do not end the wait; the thread's interrupt flag is set again when it returns.
     *
     * @throws LeaseLostException   if the lease is lost before the grant (the wait is withdrawn),
     *                              or the view still holds a grant of a lost lease (unlock it first)
     * @throws UnavailableException if no member could be reached
     */
    @Override
    public void lock() {
        acquiring.lock();
        boolean interrupted = false;
        try {
            if (addHold()) {
                return;
            }
            CompletableFuture<LockHandle> granting = lock.acquireAsync();
            while (true) {
                try {
                    hold(granting.get());
                    return;
                } catch (InterruptedException e) {
                    interrupted = true; // lock() is not interruptible: keep waiting
                } catch (ExecutionException e) {
                    throw Futures.rethrowable(e.getCause());
                }
            }
        } finally {
            acquiring.unlock();
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * As {@link #lock()}, but an interrupt ends the wait: it is withdrawn from the lock's queue on
     * the server (a grant that won the race is given back) and this throws.
     *
     * @throws InterruptedException if the thread was interrupted before or while waiting
     */
    @Override
    public void lockInterruptibly() throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException("interrupted before waiting for lock '" + name() + "'");
        }
        acquiring.lockInterruptibly();
        try {
            if (!addHold()) {
                hold(interruptibly(lock.acquireAsync()));
            }
        } finally {
            acquiring.unlock();
        }
    }

    /**
     * Takes the lock only if it is free now, or held by this view (one more hold); never waits
     * or joins the queue. False also while another thread of this view is waiting for it.
     *
     * @throws LeaseLostException   if the lease is lost, or the view still holds a grant of a lost lease
     * @throws UnavailableException if no member could be reached
     */
    @Override
    public boolean tryLock() {
        if (!acquiring.tryLock()) {
            return false;
        }
        try {
            if (addHold()) {
                return true;
            }
            return lock.tryAcquire().map(handle -> {
                hold(handle);
                return true;
            }).orElse(false);
        } finally {
            acquiring.unlock();
        }
    }

    /**
     * Waits in the lock's queue at most {@code time}; zero or less tries once without waiting.
     * When the time runs out, or the thread is interrupted, the wait is withdrawn from the queue
     * on the server (a grant that won the race is given back).
     *
     * @return true when granted (or already held by this view), false when the time ran out
     * @throws InterruptedException if the thread was interrupted before or while waiting
     * @throws LeaseLostException   if the lease is lost before the grant
     * @throws UnavailableException if no member could be reached
     */
    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        java.util.Objects.requireNonNull(unit, "unit");
        if (Thread.interrupted()) {
            throw new InterruptedException("interrupted before waiting for lock '" + name() + "'");
        }
        long deadline = System.nanoTime() + Math.max(0, unit.toNanos(time));
        if (!acquiring.tryLock(time, unit)) {
            return false; // another thread of this view waited for the lock the whole time
        }
        try {
            if (addHold()) {
                return true;
            }
            long remaining = Math.max(0, deadline - System.nanoTime());
            try {
                // The server bounds the wait; the client's own deadline is only a backstop for a
                // member that never answers, a request timeout later.
                hold(interruptibly(lock.acquireAsync(Duration.ofNanos(remaining))));
                return true;
            } catch (LockNotAcquiredException timedOut) {
                return false;
            }
        } finally {
            acquiring.unlock();
        }
    }

    /**
     * Takes back one hold; when none is left, releases the lock on the server, handing it to the
     * next waiter, and returns once the server confirmed.
     *
     * @throws IllegalMonitorStateException if this view does not hold the lock
     * @throws LeaseLostException           if the lease was lost while held (the hold is counted
     *                                      down all the same): the work done under it may have
     *                                      overlapped another holder's
     * @throws UnavailableException         if no member could be reached to release it; the view
     *                                      still holds it (one hold): call {@code unlock()} again
     */
    @Override
    public void unlock() {
        if (countDown()) {
            return;
        }
        // The last hold: no acquire of this view may start until the server has released the
        // grant, or the lease's new acquire could be answered with the grant being released.
        acquiring.lock();
        try {
            LockHandle releasing;
            synchronized (this) {
                if (countDown()) {
                    return; // another thread added a hold meanwhile
                }
                releasing = held;
                held = null;
                holds = 0;
            }
            boolean leaseValid = releasing.lease().isValid();
            try {
                releasing.release(); // with a lost lease only logged: the lock ends with the lease
            } catch (UnavailableException e) {
                hold(releasing); // still held on the server: a later unlock() tries again
                throw e;
            }
            if (!leaseValid) {
                throw releasing.lease().lostException();
            }
        } finally {
            acquiring.unlock();
        }
    }

    /**
     * Takes back one hold if more than one is left, and says so; false when the last one is left.
     *
     * @throws IllegalMonitorStateException if the view does not hold the lock
     * @throws LeaseLostException           after counting down, if the grant's lease was lost
     */
    private synchronized boolean countDown() {
        if (held == null) {
            throw new IllegalMonitorStateException("lock '" + name() + "' is not held by this view");
        }
        if (holds == 1) {
            return false;
        }
        holds--;
        if (!held.lease().isValid()) {
            throw held.lease().lostException();
        }
        return true;
    }

    /**
     * Not supported: a condition's waiters would have to be woken across processes, by whoever
     * holds the lock next. Watch a key ({@link TenureClient#watch}) or use a
     * {@link TenureCountDownLatch} or a {@link TenureBarrier} to wait for another holder's work.
     *
     * @throws UnsupportedOperationException always
     */
    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("lock '" + name() + "' has no conditions: a Tenure lock is held by a lease, "
                + "not a thread; wait for other holders' work with a watch, a count-down latch or a barrier instead");
    }

    /**
     * The fencing token of the grant this view holds: send it with every write to the guarded
     * resource, and let the resource refuse tokens lower than one it has seen. Tokens of a name
     * strictly increase across grants.
     *
     * @throws IllegalMonitorStateException if this view does not hold the lock
     * @throws LeaseLostException           if the lease was lost: the lock may be someone else's
     */
    public long fencingToken() {
        return handle().fencingToken();
    }

    /**
     * The grant this view holds (its key, token and lease), checked as {@link #fencingToken()} is.
     *
     * @throws IllegalMonitorStateException if this view does not hold the lock
     * @throws LeaseLostException           if the lease was lost
     */
    public synchronized LockHandle handle() {
        if (held == null) {
            throw new IllegalMonitorStateException("lock '" + name() + "' is not held by this view: no fencing token");
        }
        if (!held.lease().isValid()) {
            throw held.lease().lostException();
        }
        return held;
    }

    /** True while this view holds the lock and its lease is {@linkplain Lease#isValid() valid}: a hint, not a guarantee. */
    public synchronized boolean isHeld() {
        return held != null && held.lease().isValid();
    }

    /** How many {@code lock()}s (and successful {@code tryLock()}s) this view has not yet unlocked. */
    public synchronized int holdCount() {
        return held == null ? 0 : holds;
    }

    /** One more hold if this view holds the lock; false if it does not. */
    private synchronized boolean addHold() {
        if (held == null) {
            return false;
        }
        if (!held.lease().isValid()) {
            throw held.lease().lostException();
        }
        if (holds == Integer.MAX_VALUE) {
            throw new Error("maximum lock count exceeded for lock '" + name() + "'");
        }
        holds++;
        return true;
    }

    private synchronized void hold(LockHandle granted) {
        held = granted;
        holds = 1;
    }

    /**
     * Waits for {@code granting}; an interrupt withdraws the wait (cancelling the acquire gives
     * back a grant that won the race) and is rethrown.
     */
    private LockHandle interruptibly(CompletableFuture<LockHandle> granting) throws InterruptedException {
        try {
            return granting.get();
        } catch (InterruptedException e) {
            if (!granting.cancel(true) && !granting.isCompletedExceptionally()) {
                // Granted just as the interrupt came: nobody holds it for the caller, so give it back.
                granting.join().releaseAsync();
            }
            throw e;
        } catch (ExecutionException e) {
            throw Futures.rethrowable(e.getCause());
        } catch (CancellationException e) {
            throw new TenureException("the wait for lock '" + name() + "' was cancelled", e);
        }
    }

    @Override
    public String toString() {
        synchronized (this) {
            return "FencedLock{name='" + name() + "', holds=" + holdCount()
                    + (held == null ? "" : ", fencingToken=" + held.fencingToken() + ", lease=" + held.lease().id()) + "}";
        }
    }
}
