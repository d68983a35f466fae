package io.tenure.spring;

import io.tenure.client.FencedLock;
import io.tenure.client.LeaseLostException;
import io.tenure.client.LockHandle;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A lock of a {@link TenureLockRegistry}: a {@link Lock} owned by a thread within this JVM, and a
 * Tenure lock held by the client's session lease across processes (see the registry for the
 * rules). {@link #fencingToken()} is the token of the grant, for the thread that holds it.
 *
 * <p>{@code lock()} waits until granted, ignoring interrupts; it throws
 * {@link io.tenure.client.LeaseLostException} if the session lease is lost while it waits and
 * {@link io.tenure.client.UnavailableException} if no member can be reached.
 * {@code lockInterruptibly()} and {@code tryLock(time, unit)} withdraw their wait from the
 * server's queue when interrupted or out of time. {@code unlock()} releases the Tenure lock when
 * the thread's last hold ends; if that release cannot reach a member it throws
 * {@code UnavailableException}, and the grant stays with this JVM for the next thread that locks.
 * Conditions are not supported.
 */
public final class RegistryLock implements Lock {
    private static final Logger log = LoggerFactory.getLogger(RegistryLock.class);

    private final TenureLockRegistry registry;
    private final String key;
    private final String name;

    RegistryLock(TenureLockRegistry registry, String key, String name) {
        this.registry = registry;
        this.key = key;
        this.name = name;
    }

    /** The key it was obtained with, as text. */
    public String key() {
        return key;
    }

    /** The Tenure lock's name: the registry's prefix and the key. */
    public String name() {
        return name;
    }

    @Override
    public void lock() {
        TenureLockRegistry.Entry entry = registry.enter(name);
        boolean held = false;
        entry.local.lock();
        try {
            held = takeGrant(entry, () -> {
                entry.fenced.lock();
                return true;
            });
        } catch (InterruptedException e) {
            throw new IllegalStateException("lock() is not interruptible", e); // FencedLock.lock() never throws it
        } finally {
            if (!held) {
                entry.local.unlock();
                registry.leave(name, entry);
            }
        }
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        TenureLockRegistry.Entry entry = registry.enter(name);
        boolean held = false;
        try {
            entry.local.lockInterruptibly();
        } catch (InterruptedException e) {
            registry.leave(name, entry);
            throw e;
        }
        try {
            held = takeGrant(entry, () -> {
                entry.fenced.lockInterruptibly();
                return true;
            });
        } finally {
            if (!held) {
                entry.local.unlock();
                registry.leave(name, entry);
            }
        }
    }

    @Override
    public boolean tryLock() {
        TenureLockRegistry.Entry entry = registry.enter(name);
        if (!entry.local.tryLock()) {
            registry.leave(name, entry);
            return false;
        }
        boolean held = false;
        try {
            held = takeGrant(entry, entry.fenced::tryLock);
            return held;
        } catch (InterruptedException e) {
            throw new IllegalStateException("tryLock() is not interruptible", e); // FencedLock.tryLock() never throws it
        } finally {
            if (!held) {
                entry.local.unlock();
                registry.leave(name, entry);
            }
        }
    }

    /**
     * Waits at most {@code time} for the threads of this JVM that hold or wait for the lock, then
     * in the server's queue for what remains of it.
     */
    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        long deadline = System.nanoTime() + Math.max(0, unit.toNanos(time));
        TenureLockRegistry.Entry entry = registry.enter(name);
        boolean local;
        try {
            local = entry.local.tryLock(time, unit);
        } catch (InterruptedException e) {
            registry.leave(name, entry);
            throw e;
        }
        if (!local) {
            registry.leave(name, entry);
            return false;
        }
        boolean held = false;
        try {
            held = takeGrant(entry, () -> entry.fenced.tryLock(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS));
            return held;
        } finally {
            if (!held) {
                entry.local.unlock();
                registry.leave(name, entry);
            }
        }
    }

    /**
     * Takes back one hold of the current thread; the last one releases the Tenure lock, handing
     * it to the next waiter in any process.
     *
     * @throws IllegalMonitorStateException if the current thread does not hold the lock
     * @throws LeaseLostException           if the session lease was lost while held (the lock is
     *                                      let go all the same): the work done under it may have
     *                                      overlapped another holder's
     * @throws io.tenure.client.UnavailableException if no member could be reached to release it
     */
    @Override
    public void unlock() {
        TenureLockRegistry.Entry entry = heldEntry();
        try {
            if (entry.local.getHoldCount() == 1) {
                entry.fenced.unlock();
            }
        } finally {
            entry.local.unlock();
            registry.leave(name, entry);
        }
    }

    /**
     * Not supported: a condition's waiters would have to be woken across processes.
     *
     * @throws UnsupportedOperationException always
     */
    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("lock '" + name + "' of a TenureLockRegistry has no conditions: "
                + "its holder across processes is a lease, which a JVM condition cannot wait for");
    }

    /**
     * The fencing token of the grant: send it with every write to the guarded resource and let
     * the resource refuse tokens lower than one it has seen.
     *
     * @throws IllegalMonitorStateException if the current thread does not hold the lock
     * @throws LeaseLostException           if the session lease was lost: the lock may be someone else's
     */
    public long fencingToken() {
        return handle().fencingToken();
    }

    /**
     * The grant (its token and lease), for the thread that holds the lock.
     *
     * @throws IllegalMonitorStateException if the current thread does not hold the lock
     * @throws LeaseLostException           if the session lease was lost
     */
    public LockHandle handle() {
        return heldEntry().fenced.handle();
    }

    /** Whether the current thread holds the lock (its lease may still have been lost: see {@link #fencingToken()}). */
    public boolean isHeldByCurrentThread() {
        TenureLockRegistry.Entry entry = registry.entry(name);
        return entry != null && entry.local.isHeldByCurrentThread();
    }

    private TenureLockRegistry.Entry heldEntry() {
        TenureLockRegistry.Entry entry = registry.entry(name);
        if (entry == null || !entry.local.isHeldByCurrentThread()) {
            throw new IllegalMonitorStateException("lock '" + name + "' is not held by the current thread ("
                    + Thread.currentThread().getName() + ")");
        }
        return entry;
    }

    /**
     * Takes the Tenure grant when the current thread's first hold begins (it holds {@code entry.local}).
     * A grant left by an unlock that could not reach a member is still this JVM's while its lease lives.
     */
    private static boolean takeGrant(TenureLockRegistry.Entry entry, Grant grant) throws InterruptedException {
        if (entry.local.getHoldCount() > 1) {
            return true; // a thread locking again: the grant is its own already
        }
        FencedLock fenced = entry.fenced;
        if (fenced.holdCount() > 0) {
            if (fenced.isHeld()) {
                return true;
            }
            try {
                fenced.unlock();
            } catch (LeaseLostException ended) {
                log.debug("lock '{}': the grant an earlier unlock could not release ended with its lease", fenced.name());
            }
        }
        return grant.take();
    }

    /** One way of taking the Tenure grant: waiting, interruptibly, for a time, or not at all. */
    @FunctionalInterface
    private interface Grant {
        boolean take() throws InterruptedException;
    }

    @Override
    public String toString() {
        return "RegistryLock{name='" + name + "', heldByCurrentThread=" + isHeldByCurrentThread() + "}";
    }
}
