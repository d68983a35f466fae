package io.tenure.core.kv;

import io.tenure.core.kernel.Result;

/** What a key-value command did (its refusals are {@link Result.Rejected}, its no-ops {@link Result.Skipped}). */
public sealed interface KvResult extends Result {

    /**
     * A put, or a compare-and-set that matched: the key has the new value since {@code revision}.
     *
     * @param prevModRevision the mod revision of the value replaced, 0 when the key was created
     * @param version         the key's puts since it was created, this one included
     */
    record Put(String key, long revision, long prevModRevision, long version) implements KvResult {
        public boolean created() {
            return prevModRevision == 0;
        }
    }

    /**
     * A compare-and-set or a conditional delete whose condition did not hold: nothing changed.
     *
     * @param modRevision the key's mod revision, 0 when it is absent
     * @param value       the key's value, null when it is absent; for the retry of a request that
     *                    failed its comparison, null also when the key has changed since (only the
     *                    mod revision is remembered, not a copy of every value: read it again)
     */
    record CompareFailed(String key, long modRevision, byte[] value) implements KvResult {}

    /**
     * A delete: {@code existed} when the key was there and is now gone, at {@code revision};
     * otherwise nothing changed and {@code revision} is 0.
     */
    record Deleted(String key, boolean existed, long revision) implements KvResult {}

    /** An expiry that deleted the key, at {@code revision}. */
    record Expired(String key, long revision) implements KvResult {}
}
