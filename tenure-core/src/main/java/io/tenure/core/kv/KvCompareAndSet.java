package io.tenure.core.kv;

/**
 * Sets {@code key} to {@code newValue}, as {@link KvPut} does, only if the key is as the caller
 * last saw it: with {@code expectedModRevision} at 0 or above, when the key's mod revision is
 * exactly that (0: the key must be absent, a create-if-absent); otherwise, when its value is
 * exactly {@code expectedValue} (an absent key has no value, and never matches). On a mismatch
 * nothing changes and the answer carries the key's current mod revision and value: a result,
 * not a refusal. {@code requestId} (0 = none) names one compare-and-set of its client: a retry is
 * answered as the first copy was, and applied once.
 *
 * @param expectedModRevision the mod revision to compare with, or -1 to compare the value instead
 * @param expectedValue       the value to compare with when {@code expectedModRevision} is -1;
 *                            null (no value to compare) is refused then
 * @param newValue            the value to set; null is taken as empty
 */
public record KvCompareAndSet(String key, long expectedModRevision, byte[] expectedValue, byte[] newValue,
                              long leaseId, long ttlMillis, long requestId) implements KvCommand {
    public KvCompareAndSet {
        newValue = newValue == null ? new byte[0] : newValue;
    }
}
