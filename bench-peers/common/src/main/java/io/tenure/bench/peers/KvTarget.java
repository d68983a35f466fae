package io.tenure.bench.peers;

/**
 * A peer with keys and values that W9 can load: every client puts a key of its own, then reads
 * it back with the peer's linearizable read.
 */
public interface KvTarget {

    /** The key-value client of benchmark client {@code client}; called once, on that client's thread, before the warm-up. */
    KvClient kv(int client) throws Exception;

    /** The {@code recipe} printed with W9's figures: which calls put and read, and what makes the read linearizable. */
    String kvRecipe();

    /** One client's puts and reads. Used by one thread only. */
    interface KvClient {
        /** Puts {@code value} at {@code key}; returns the put's stamp (a revision or version; 0 when the peer has none). */
        long put(String key, byte[] value) throws Exception;

        /** Reads {@code key} linearizably; null when it is absent. */
        Read get(String key) throws Exception;
    }

    /** A read: the value and its stamp, comparable with a put's (at least the last put's when the read is not stale). */
    record Read(byte[] value, long stamp) {}
}
