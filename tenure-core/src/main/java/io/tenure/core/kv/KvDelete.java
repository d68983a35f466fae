package io.tenure.core.kv;

/**
 * Deletes {@code key}: always with {@code expectedModRevision} -1, otherwise only when the key's
 * mod revision is exactly that (0: the key must be absent, so nothing is deleted). Deleting an
 * absent key changes nothing and says so. {@code requestId} (0 = none) names one delete of its
 * client: a retry is answered as the first copy was (a retry of a delete that deleted does not
 * answer "absent", and does not delete a key put since).
 */
public record KvDelete(String key, long expectedModRevision, long requestId) implements KvCommand {
    /** An unconditional delete. */
    public static final long ANY_REVISION = -1;
}
