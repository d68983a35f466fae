package io.tenure.client;

import java.util.Arrays;
import java.util.Objects;

/**
 * One change of a lock key, as a {@link Watch} delivers it: a {@link Type#PUT} when a lease is
 * granted the lock (fresh, or handed over from the previous holder), a {@link Type#DELETE} when
 * the lock is released, or its lease ends, with nobody waiting.
 *
 * <p>Every change has its own {@link #revision()}: the log position of the command that made it,
 * unique across all keys and strictly increasing. For a PUT it is the new holder's fencing token.
 *
 * @param type             PUT (granted) or DELETE (freed)
 * @param key              the lock's key
 * @param revision         the log position of the change; for a PUT, the grant's fencing token
 * @param holder           the client id of the lease that now holds the lock; empty for a DELETE
 * @param leaseId          the lease that now holds the lock; 0 for a DELETE
 * @param metadata         what the new holder attached to its lock request; empty for a DELETE
 * @param prevHolder       the client id of the holder before this change; empty when the lock was free
 * @param prevFencingToken the fencing token of the holder before this change (the grant this change
 *                         ended); 0 when the lock was free
 * @param createRevision   for a PUT of a lock or semaphore, the revision at which it was created; of
 *                         an election, the leader's fencing token (its {@code revision} is that of
 *                         the change, a new leader or a proclaimed value, and {@code metadata} the
 *                         leader's value); 0 for a DELETE
 * @param kind             what changed: "lock", "semaphore", "election", "barrier", "double barrier" or "latch" (barriers and latches have
 *                         namespaces of their own, so a barrier may have a lock's name); "lock"
 *                         from a member that does not say
 */
public record WatchEvent(Type type, String key, long revision, String holder, long leaseId, byte[] metadata,
                         String prevHolder, long prevFencingToken, long createRevision, String kind) {
    private static final byte[] NONE = new byte[0];

    public enum Type {
        /** The lock was granted: {@link #holder()} holds it with fencing token {@link #revision()}. */
        PUT,
        /** The lock was released, or its holder's lease ended, and nobody was waiting: it is free. */
        DELETE
    }

    /** An event without its key's {@link #createRevision()}. */
    public WatchEvent(Type type, String key, long revision, String holder, long leaseId, byte[] metadata,
                      String prevHolder, long prevFencingToken) {
        this(type, key, revision, holder, leaseId, metadata, prevHolder, prevFencingToken, 0);
    }

    /** A lock's event, or one from a member that does not name the kind. */
    public WatchEvent(Type type, String key, long revision, String holder, long leaseId, byte[] metadata,
                      String prevHolder, long prevFencingToken, long createRevision) {
        this(type, key, revision, holder, leaseId, metadata, prevHolder, prevFencingToken, createRevision, "lock");
    }

    public WatchEvent {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(key, "key");
        holder = holder == null ? "" : holder;
        prevHolder = prevHolder == null ? "" : prevHolder;
        metadata = metadata == null || metadata.length == 0 ? NONE : metadata.clone();
        kind = kind == null || kind.isEmpty() ? "lock" : kind;
    }

    /** The fencing token of the grant a PUT announces (its revision); 0 for a DELETE. */
    public long fencingToken() {
        return type == Type.PUT ? revision : 0;
    }

    /** A copy of the new holder's metadata; empty for a DELETE. */
    @Override
    public byte[] metadata() {
        return metadata.length == 0 ? NONE : metadata.clone();
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof WatchEvent that
                && type == that.type && key.equals(that.key) && revision == that.revision
                && holder.equals(that.holder) && leaseId == that.leaseId && Arrays.equals(metadata, that.metadata)
                && prevHolder.equals(that.prevHolder) && prevFencingToken == that.prevFencingToken
                && createRevision == that.createRevision && kind.equals(that.kind);
    }

    @Override
    public int hashCode() {
        return Objects.hash(type, key, revision, holder, leaseId, Arrays.hashCode(metadata), prevHolder, prevFencingToken, createRevision, kind);
    }

    @Override
    public String toString() {
        return "WatchEvent{" + type + " " + kind + " '" + key + "' revision=" + revision
                + (type == Type.PUT ? ", holder='" + holder + "', lease=" + leaseId + ", metadata=" + metadata.length + " bytes" : "")
                + (prevFencingToken != 0 ? ", prev holder='" + prevHolder + "' (token " + prevFencingToken + ")" : "")
                + "}";
    }
}
