package io.tenure.core.kv;

/**
 * A key with a time to live, for the leader's expiry loop: it may propose
 * {@code new KvExpire(key, modRevision)} once {@code ttlMillis} have passed on its monotonic clock
 * since it applied the put of {@code modRevision} (or since it became leader, for a put it did
 * not see applied: never sooner than that).
 */
public record KvTtl(String key, long modRevision, long ttlMillis) {}
