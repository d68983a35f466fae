package io.tenure.spring;

import io.tenure.client.FencedLock;
import io.tenure.client.TenureClient;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;
import org.springframework.integration.support.locks.ExpirableLockRegistry;

/**
 * Spring Integration's {@link org.springframework.integration.support.locks.LockRegistry} over
 * Tenure locks: {@link #obtain(Object)} gives a {@link RegistryLock}, a
 * {@link java.util.concurrent.locks.Lock} whose {@link RegistryLock#fencingToken()} is the token
 * of the grant, to send with every write to the guarded resource.
 *
 * <pre>{@code
 * TenureLockRegistry registry = new TenureLockRegistry(client);          // or the auto-configured bean
 * RegistryLock lock = registry.obtain("invoices/2026-11");                // Tenure lock "spring/invoices/2026-11"
 * if (lock.tryLock(30, TimeUnit.SECONDS)) {
 *     try {
 *         ledger.write(batch, lock.fencingToken());
 *     } finally {
 *         lock.unlock();
 *     }
 * }
 * }</pre>
 *
 * <h2>Names</h2>
 * The key's {@code toString()} after the registry's prefix ({@value #DEFAULT_PREFIX} unless
 * another is given) is the Tenure lock's name: every registry with the same prefix, in any
 * process, means the same lock by the same key, and {@code tenure lock describe spring/KEY} shows
 * its holder and waiters.
 *
 * <h2>Who holds a lock</h2>
 * Within this JVM a lock belongs to a thread, as the locks of Spring Integration's other
 * registries do: threads exclude each other, a thread may lock again (its holds are counted), and
 * only the thread that holds it may unlock it ({@link IllegalMonitorStateException} otherwise).
 * Across processes it is a Tenure lock held by the client's {@linkplain TenureClient#session()
 * session lease}: granted on first use, kept alive by the client every TTL/3, and granted anew
 * when lost, so the registry outlives a lost lease. Two registries in one JVM exclude each other
 * only when their clients differ (each client has its own session lease); the auto-configuration
 * gives the registry a client of its own. Waits are FIFO across every process, and an interrupted
 * or timed-out wait leaves the server's queue.
 *
 * <p>When the session lease is lost, the server may give a held lock to another process:
 * {@link RegistryLock#fencingToken()} then throws {@link io.tenure.client.LeaseLostException},
 * and so does {@code unlock()} (which still lets go), so the holder learns its work may have
 * overlapped another's.
 *
 * <p>Not a {@code RenewableLockRegistry}: there is nothing to renew by hand, since the client keeps
 * the lease alive as long as it runs.
 *
 * <p>Thread-safe.
 */
public final class TenureLockRegistry implements ExpirableLockRegistry {
    /** The prefix of lock names unless another is given. */
    public static final String DEFAULT_PREFIX = "spring/";

    private final TenureClient client;
    private final String prefix;
    /** Monotonic nanoseconds, for {@link #expireUnusedOlderThan(long)}. */
    private final LongSupplier nanoTime;
    /** The locks that a thread holds or waits for, or that were used recently, by name. */
    private final ConcurrentHashMap<String, Entry> entries = new ConcurrentHashMap<>();

    /** A registry naming its locks {@value #DEFAULT_PREFIX}{@code KEY}, held by {@code client}'s session lease. */
    public TenureLockRegistry(TenureClient client) {
        this(client, DEFAULT_PREFIX);
    }

    /**
     * A registry naming its locks {@code prefix + key}, held by {@code client}'s session lease.
     *
     * @param prefix put before every key; may be empty
     * @throws IllegalArgumentException if {@code client} or {@code prefix} is null
     */
    public TenureLockRegistry(TenureClient client, String prefix) {
        this(client, prefix, System::nanoTime);
    }

    TenureLockRegistry(TenureClient client, String prefix, LongSupplier nanoTime) {
        if (client == null) {
            throw new IllegalArgumentException("client must not be null");
        }
        if (prefix == null) {
            throw new IllegalArgumentException("prefix must not be null (use \"\" for none)");
        }
        this.client = client;
        this.prefix = prefix;
        this.nanoTime = Objects.requireNonNull(nanoTime, "nanoTime");
    }

    /** What is put before every key to make the Tenure lock's name. */
    public String prefix() {
        return prefix;
    }

    /**
     * The lock of {@code lockKey}: the Tenure lock named {@link #prefix()} + {@code lockKey.toString()}.
     * Nothing is sent until it is locked; every call for one key returns a lock that is the same lock.
     *
     * @throws IllegalArgumentException if the key is null or blank, or the name is longer than 1 KiB in UTF-8
     */
    @Override
    public RegistryLock obtain(Object lockKey) {
        if (lockKey == null) {
            throw new IllegalArgumentException("lockKey must not be null");
        }
        String key = lockKey.toString();
        if (key == null || key.isBlank()) {
            throw new IllegalArgumentException("lockKey must not be blank, got '" + key + "'");
        }
        String name = prefix + key;
        try {
            client.lock(name); // checks the name now rather than at the first lock()
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("lockKey '" + abbreviated(key) + "' makes a bad lock name: " + e.getMessage(), e);
        }
        return new RegistryLock(this, key, name);
    }

    /**
     * Forgets the locks that no thread of this JVM holds or waits for and that were last locked
     * or unlocked more than {@code age} milliseconds ago, so that a registry used with many keys
     * does not grow without end. A lock obtained before stays usable: it is remembered again when
     * next locked. Nothing is sent to the server: a lock nobody holds takes no room there.
     *
     * @throws IllegalArgumentException if {@code age} is negative
     */
    @Override
    public void expireUnusedOlderThan(long age) {
        if (age < 0) {
            throw new IllegalArgumentException("age must be zero or more milliseconds, got " + age);
        }
        long ageNanos = TimeUnit.MILLISECONDS.toNanos(age);
        long now = nanoTime.getAsLong();
        for (String name : entries.keySet()) {
            entries.computeIfPresent(name, (n, entry) -> entry.users == 0 && entry.fenced.holdCount() == 0
                    && now - entry.lastUsed >= ageNanos ? null : entry);
        }
    }

    /** How many locks the registry remembers (held, waited for, or not yet expired). */
    int size() {
        return entries.size();
    }

    /** The state of lock {@code name} for a thread about to lock it, remembered until it leaves. */
    Entry enter(String name) {
        return entries.compute(name, (n, entry) -> {
            Entry e = entry != null ? entry : new Entry(client.lock(name).asLock());
            e.users++;
            e.lastUsed = nanoTime.getAsLong();
            return e;
        });
    }

    /** A thread stopped holding or waiting for {@code entry}'s lock. */
    void leave(String name, Entry entry) {
        entries.computeIfPresent(name, (n, e) -> {
            if (e == entry) {
                e.users--;
                e.lastUsed = nanoTime.getAsLong();
            }
            return e;
        });
    }

    /** The state of lock {@code name}, or null when no thread holds or waits for it and it has expired. */
    Entry entry(String name) {
        return entries.get(name);
    }

    private static String abbreviated(String key) {
        return key.length() <= 64 ? key : key.substring(0, 64) + "...";
    }

    @Override
    public String toString() {
        return "TenureLockRegistry{prefix='" + prefix + "', locks=" + entries.size() + "}";
    }

    /**
     * One lock's state in this JVM: the thread that holds it, and the Tenure grant. The grant is
     * taken when a thread's first hold begins and released when its last ends.
     */
    static final class Entry {
        /** Which thread of this JVM holds the lock; its holds are counted here. */
        final ReentrantLock local = new ReentrantLock();
        /** The Tenure lock, one hold while a thread holds {@link #local}. */
        final FencedLock fenced;
        /** Threads holding or waiting for the lock, counting each hold. Changed only in the map's compute (atomic per name); volatile for the reads there. */
        volatile int users;
        /** When a thread last began or ended a hold or a wait. Changed only in the map's compute (atomic per name); volatile for the reads there. */
        volatile long lastUsed;

        Entry(FencedLock fenced) {
            this.fenced = fenced;
        }
    }
}
