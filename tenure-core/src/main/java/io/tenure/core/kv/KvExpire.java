package io.tenure.core.kv;

/**
 * Deletes {@code key} because its time to live passed, on the leader's monotonic clock, since the
 * leader applied the put of mod revision {@code modRevision}: time is not replicated, so the
 * leader proposes this and every member applies it (I4). It deletes only a key that still has a
 * TTL and exactly that mod revision; a put since refreshed it, and the expiry changes nothing
 * ({@link io.tenure.core.kernel.Result.Skipped}).
 */
public record KvExpire(String key, long modRevision) implements KvCommand, io.tenure.core.kernel.LeaderClockCommand {
}
