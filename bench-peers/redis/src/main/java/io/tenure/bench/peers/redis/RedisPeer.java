package io.tenure.bench.peers.redis;

import io.tenure.bench.peers.CounterTarget;
import io.tenure.bench.peers.KvTarget;
import io.tenure.bench.peers.Options;
import io.tenure.bench.peers.PeerBench;
import io.tenure.bench.peers.PeerTarget;
import io.tenure.bench.peers.QueueTarget;
import io.tenure.bench.peers.ReadWriteLockTarget;
import io.tenure.bench.peers.SemaphoreTarget;
import io.tenure.bench.peers.Versions;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.redisson.Redisson;
import org.redisson.api.RLock;
import org.redisson.api.RPermitExpirableSemaphore;
import org.redisson.api.RReadWriteLock;
import org.redisson.api.RBlockingQueue;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.ByteArrayCodec;
import org.redisson.config.Config;

/**
 * Redis through Redisson's {@link RLock} with its defaults: {@code lock()} without a lease time, so
 * the lock watchdog renews it; waiters are woken through pub/sub. An RLock belongs to a thread, and
 * each benchmark client is one thread, so every client is its own owner; all share one Redisson
 * client whose pools are sized so no client waits for a connection.
 *
 * <p>W6 uses Redisson's {@link RPermitExpirableSemaphore}: set to the limit once per run
 * ({@code trySetPermits} on a fresh key), each acquisition a permit with its own id and a lease
 * time (a crashed holder's permit comes back when it runs out), released by that id.
 *
 * <p>W7 uses Redisson's {@link RReadWriteLock}: one per client and name, its {@code readLock()} and
 * {@code writeLock()} taken with {@code lock()} (no lease time: the watchdog renews them, as W2's
 * RLock) and released with {@code unlock()}. Owned, as an RLock, by the client's thread. A read lock
 * is granted whenever the lock is free or in read mode, whether or not a writer waits: readers
 * overtake waiting writers, which are woken through pub/sub when the last reader leaves.
 *
 * <p>W8 uses Redisson's {@code RAtomicLong.incrementAndGet()}: one {@code INCR}, atomic in Redis,
 * no retries. Not durable at Redis's default (no fsync per write).
 *
 * <p>W9 uses Redisson's {@code RBucket} (bytes, {@link ByteArrayCodec}): {@code set} ({@code SET}),
 * then {@code get} ({@code GET}). One Redis process holds the one copy, so a read is of the last
 * write; nothing is durable, and Redis has no revision to compare (the check compares values).
 *
 * <p>W10 uses Redisson's {@link RBlockingQueue} (bytes): {@code offer} ({@code RPUSH}) and
 * {@code poll(timeout)} ({@code BLPOP}), one blocked connection per waiting consumer. An item taken
 * by a consumer that dies before using it is gone: BLPOP removes it as it answers.
 */
public final class RedisPeer implements PeerTarget, SemaphoreTarget, ReadWriteLockTarget, CounterTarget, KvTarget, QueueTarget {

    /** W6's lease time per permit: far beyond any hold, a bound on a crashed holder's. */
    private static final long PERMIT_LEASE_SECONDS = 30;

    private final RedissonClient redisson;
    private final int poolSize;
    /** W6's semaphores, each emptied and set to its limit by the first client that asks for it. */
    private final Map<String, RPermitExpirableSemaphore> semaphores = new ConcurrentHashMap<>();

    private RedisPeer(Options options) {
        // W10's consumers each hold a connection while BLPOP waits, beside its producers'.
        int users = options.workload().equals("W10") ? 2 * options.clients() : options.clients();
        poolSize = Math.max(64, users + 8);
        Config config = new Config();
        config.useSingleServer()
                .setAddress("redis://" + options.host() + ":" + options.port())
                .setConnectionPoolSize(poolSize)
                .setConnectionMinimumIdleSize(Math.min(poolSize, users + 1))
                .setSubscriptionConnectionPoolSize(Math.max(50, options.clients()));
        redisson = Redisson.create(config);
    }

    public static void main(String[] args) {
        PeerBench.main(args, 6379, RedisPeer::new);
    }

    @Override
    public String name() {
        return "redis";
    }

    @Override
    public Locker locker(int index) {
        Map<String, RLock> locks = new HashMap<>();
        return key -> {
            RLock lock = locks.computeIfAbsent(key, redisson::getLock);
            lock.lock();
            return lock::unlock;
        };
    }

    @Override
    public Locker permits(int index, int limit) {
        return name -> {
            RPermitExpirableSemaphore semaphore = semaphores.computeIfAbsent(name, k -> limited(k, limit));
            String permit = semaphore.acquire(PERMIT_LEASE_SECONDS, TimeUnit.SECONDS);
            return () -> semaphore.release(permit);
        };
    }

    /** The semaphore {@code name} with {@code limit} permits, none held: a key left by an earlier run is dropped. */
    private RPermitExpirableSemaphore limited(String name, int limit) {
        RPermitExpirableSemaphore semaphore = redisson.getPermitExpirableSemaphore(name);
        semaphore.delete();
        if (!semaphore.trySetPermits(limit)) {
            throw new IllegalStateException("semaphore " + name + " already had its permits set");
        }
        return semaphore;
    }

    @Override
    public String semaphoreRecipe() {
        return "RPermitExpirableSemaphore, trySetPermits(limit), acquire(lease " + PERMIT_LEASE_SECONDS
                + " s) and release(permit id)";
    }

    @Override
    public Owner readWrite(int index) {
        Map<String, RReadWriteLock> locks = new HashMap<>();
        Locker reader = name -> {
            RLock read = locks.computeIfAbsent(name, redisson::getReadWriteLock).readLock();
            read.lock();
            return read::unlock;
        };
        Locker writer = name -> {
            RLock write = locks.computeIfAbsent(name, redisson::getReadWriteLock).writeLock();
            write.lock();
            return write::unlock;
        };
        return new Owner() {
            @Override
            public Locker reader() {
                return reader;
            }

            @Override
            public Locker writer() {
                return writer;
            }
        };
    }

    @Override
    public String readWriteRecipe() {
        return "RReadWriteLock, readLock()/writeLock() lock() with the default watchdog and unlock()";
    }

    @Override
    public Map<String, Object> describe() {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("client", "redisson " + Versions.of("org.redisson", "redisson", Redisson.class));
        d.put("recipe", "RLock.lock() with the default watchdog");
        d.put("connection", "one Redisson client shared by all clients, pool " + poolSize);
        return d;
    }

    @Override
    public void resetCounter(String name) {
        redisson.getAtomicLong(name).set(0);
    }

    @Override
    public Incrementer incrementer(int client, String name) {
        org.redisson.api.RAtomicLong counter = redisson.getAtomicLong(name);
        return counter::incrementAndGet;
    }

    @Override
    public long counterValue(String name) {
        return redisson.getAtomicLong(name).get();
    }

    @Override
    public String counterRecipe() {
        return "RAtomicLong.incrementAndGet() (INCR)";
    }

    @Override
    public KvClient kv(int client) {
        return new KvClient() {
            @Override
            public long put(String key, byte[] value) {
                redisson.<byte[]>getBucket(key, ByteArrayCodec.INSTANCE).set(value);
                return 0;
            }

            @Override
            public Read get(String key) {
                byte[] value = redisson.<byte[]>getBucket(key, ByteArrayCodec.INSTANCE).get();
                return value == null ? null : new Read(value, 0);
            }
        };
    }

    @Override
    public String kvRecipe() {
        return "RBucket set (SET), then get (GET); not durable";
    }

    @Override
    public void resetQueue(String name) {
        redisson.getBlockingQueue(name, ByteArrayCodec.INSTANCE).delete();
    }

    @Override
    public Producer producer(int client, String name) {
        RBlockingQueue<byte[]> queue = redisson.getBlockingQueue(name, ByteArrayCodec.INSTANCE);
        return item -> {
            if (!queue.offer(item)) {
                throw new IllegalStateException("queue " + name + " refused an item");
            }
        };
    }

    @Override
    public Consumer consumer(int client, String name) {
        RBlockingQueue<byte[]> queue = redisson.getBlockingQueue(name, ByteArrayCodec.INSTANCE);
        return timeoutMs -> queue.poll(timeoutMs, TimeUnit.MILLISECONDS);
    }

    @Override
    public String queueRecipe() {
        return "RBlockingQueue offer (RPUSH) and poll(timeout) (BLPOP); not durable";
    }

    @Override
    public void close() {
        redisson.shutdown();
    }
}
