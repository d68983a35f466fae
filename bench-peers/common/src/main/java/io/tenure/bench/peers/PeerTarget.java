package io.tenure.bench.peers;

import java.util.Map;

/**
 * One peer system as the workloads see it: a connection shared by every benchmark client, from
 * which each client takes its own {@link Locker} (its own lock owner: an etcd lease, a Curator
 * mutex instance, a Redisson thread identity).
 *
 * <p>A driver implements this and nothing else; {@link PeerBench} runs the workloads, checks mutual
 * exclusion and prints the JSON line.
 */
public interface PeerTarget extends AutoCloseable {

    /** The {@code target} field of the JSON line: {@code etcd}, {@code zookeeper} or {@code redis}. */
    String name();

    /**
     * The lock owner of benchmark client {@code client}; called once per client, on that client's
     * thread, before the warm-up. Owners are distinct even when they share one connection.
     */
    Locker locker(int client) throws Exception;

    /** Settings worth printing with the figures (client version, how connections are shared). */
    Map<String, Object> describe();

    /** One lock owner. Used by one thread only. */
    interface Locker extends AutoCloseable {

        /** Blocks until this owner holds {@code key}; returns the handle that releases it. */
        Held lock(String key) throws Exception;

        @Override
        default void close() throws Exception {}
    }

    /** A held lock. */
    interface Held {
        void unlock() throws Exception;
    }
}
