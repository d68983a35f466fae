package io.tenure.shedlock;

import io.tenure.client.Lease;
import io.tenure.client.LockHandle;
import java.util.Deque;
import java.util.Iterator;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One run's hold of a ShedLock lock on Tenure, as {@link TenureLockProvider#lock} returns it: the
 * Tenure lock held by a lease of TTL {@code lockAtMostFor} that is never renewed, with its
 * {@linkplain #fencingToken() fencing token}.
 *
 * <p>From {@code lock()} until {@link #unlock()} it is also the current thread's lock (the thread
 * ShedLock runs the task on), which {@link TenureLockProvider#currentFencingToken()} reads.
 * {@link #unlock()} revokes the lease, at once or, before {@code lockAtLeastFor} has passed, on
 * the provider's timer at that moment. Thread-safe.
 */
public final class TenureSimpleLock implements SimpleLock {
    private static final Logger log = LoggerFactory.getLogger(TenureSimpleLock.class);
    /** The locks each thread took and has not unlocked, innermost last. */
    private static final ThreadLocal<Deque<TenureSimpleLock>> HELD = ThreadLocal.withInitial(ConcurrentLinkedDeque::new);

    private final String name;
    private final LockHandle handle;
    private final long lockAtLeastUntilNanos;
    private final ScheduledExecutorService releases;
    /** The taking thread's locks: unlock may run on another thread, and must leave this one's. */
    private final Deque<TenureSimpleLock> heldBy;
    private final AtomicBoolean unlocked = new AtomicBoolean();

    private TenureSimpleLock(String name, LockHandle handle, long lockAtLeastUntilNanos, ScheduledExecutorService releases,
                             Deque<TenureSimpleLock> heldBy) {
        this.name = name;
        this.handle = handle;
        this.lockAtLeastUntilNanos = lockAtLeastUntilNanos;
        this.releases = releases;
        this.heldBy = heldBy;
    }

    /** A granted lock, made the current thread's innermost one. */
    static TenureSimpleLock held(LockConfiguration configuration, LockHandle handle, long startedAtNanos, ScheduledExecutorService releases) {
        Deque<TenureSimpleLock> threadLocks = HELD.get();
        TenureSimpleLock lock = new TenureSimpleLock(configuration.getName(), handle,
                startedAtNanos + configuration.getLockAtLeastFor().toNanos(), releases, threadLocks);
        threadLocks.addLast(lock);
        return lock;
    }

    /** The innermost lock the current thread holds. */
    static Optional<TenureSimpleLock> innermost() {
        return Optional.ofNullable(HELD.get().peekLast());
    }

    /** The lock ShedLock names {@code name} that the current thread holds, if any. */
    static Optional<TenureSimpleLock> heldByThisThread(String name) {
        for (Iterator<TenureSimpleLock> locks = HELD.get().descendingIterator(); locks.hasNext(); ) {
            TenureSimpleLock lock = locks.next();
            if (lock.name.equals(name)) {
                return Optional.of(lock);
            }
        }
        return Optional.empty();
    }

    /** ShedLock's name of the lock (without the provider's prefix). */
    public String name() {
        return name;
    }

    /** The Tenure lock's name: the provider's prefix and {@link #name()}. */
    public String key() {
        return handle.key();
    }

    /** The fencing token of this grant: higher than every earlier grant of the lock. */
    public long fencingToken() {
        return handle.fencingToken();
    }

    /** The lease holding the lock: its TTL is {@code lockAtMostFor}, and it is never renewed. */
    public Lease lease() {
        return handle.lease();
    }

    /**
     * Ends this run's hold: at once, or, before {@code lockAtLeastFor} has passed since
     * {@code lock()}, at that moment (the provider's timer revokes the lease then; other nodes
     * cannot take the lock until it does). A revoke that no member answers leaves the lock to end
     * at {@code lockAtMostFor}; it is logged, not thrown, so that it does not hide the task's
     * own outcome.
     *
     * @throws IllegalStateException if this lock was already unlocked
     */
    @Override
    public void unlock() {
        if (!unlocked.compareAndSet(false, true)) {
            throw new IllegalStateException("lock '" + name + "' (fencing token " + fencingToken() + ") was already unlocked");
        }
        heldBy.remove(this);
        if (heldBy.isEmpty() && HELD.get() == heldBy) {
            HELD.remove(); // a pooled scheduler thread keeps nothing between runs
        }
        long early = lockAtLeastUntilNanos - System.nanoTime();
        if (early <= 0) {
            handle.lease().close();
            return;
        }
        try {
            releases.schedule(() -> handle.lease().close(), early, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException closed) {
            log.warn("lock '{}' is released at its lockAtMostFor of {} ms: its provider was closed before its lockAtLeastFor passed",
                    name, handle.lease().ttl().toMillis());
        }
    }

    @Override
    public String toString() {
        return "TenureSimpleLock[" + name + ", token " + fencingToken() + ", lockAtMostFor " + handle.lease().ttl()
                + (unlocked.get() ? ", unlocked]" : "]");
    }
}
