package io.tenure.core.kv;

/**
 * Sets {@code key} to {@code value}, creating it or replacing its value, lease and TTL (a put
 * without a lease or a TTL leaves the key with none). The key may be bound to a live lease
 * ({@code leaseId}, 0 = none: it goes when the lease ends) or given a time to live
 * ({@code ttlMillis}, 0 = none: the leader expires it that long after it applied this put, see
 * {@link KvExpire}), not both. {@code requestId} (0 = none) names one put of its client, the same
 * on every retry of it: a retry is answered as the first copy was, and applied once.
 *
 * @param value the new value; null is taken as empty (the log writes both alike)
 */
public record KvPut(String key, byte[] value, long leaseId, long ttlMillis, long requestId) implements KvCommand {
    public KvPut {
        value = value == null ? new byte[0] : value;
    }
}
