package io.tenure.bench.peers.redis;

import io.tenure.bench.peers.Options;
import io.tenure.bench.peers.PeerBench;
import io.tenure.bench.peers.PeerTarget;
import io.tenure.bench.peers.Versions;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import org.redisson.Redisson;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * Redis through Redisson's {@link RLock} with its defaults: {@code lock()} without a lease time, so
 * the lock watchdog renews it; waiters are woken through pub/sub. An RLock belongs to a thread, and
 * each benchmark client is one thread, so every client is its own owner; all share one Redisson
 * client whose pools are sized so no client waits for a connection.
 */
public final class RedisPeer implements PeerTarget {

    private final RedissonClient redisson;
    private final int poolSize;

    private RedisPeer(Options options) {
        poolSize = Math.max(64, options.clients() + 8);
        Config config = new Config();
        config.useSingleServer()
                .setAddress("redis://" + options.host() + ":" + options.port())
                .setConnectionPoolSize(poolSize)
                .setConnectionMinimumIdleSize(Math.min(poolSize, options.clients() + 1))
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
    public Map<String, Object> describe() {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("client", "redisson " + Versions.of("org.redisson", "redisson", Redisson.class));
        d.put("recipe", "RLock.lock() with the default watchdog");
        d.put("connection", "one Redisson client shared by all clients, pool " + poolSize);
        return d;
    }

    @Override
    public void close() {
        redisson.shutdown();
    }
}
