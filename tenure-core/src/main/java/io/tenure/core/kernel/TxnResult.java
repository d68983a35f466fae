package io.tenure.core.kernel;

import java.util.List;

/**
 * What a {@link Txn} did: whether every comparison held ({@code succeeded}: the success operations
 * were applied, otherwise the failure ones), one {@link Done} per applied operation in their
 * order, and the store revision after it.
 */
public record TxnResult(boolean succeeded, long revision, List<Done> operations) implements Result {
    public TxnResult {
        operations = List.copyOf(operations);
    }

    /**
     * What one operation did, in terms every transactional primitive shares.
     *
     * @param revision the revision of its change (its watch event), 0 when it changed nothing
     * @param changed  whether it changed anything (false only for a delete of an absent key)
     * @param previous a key-value put: the mod revision of the value it replaced (0 = created);
     *                 a counter change: the value before
     * @param value    a key-value put: the key's version after it; a counter change: the value after
     */
    public record Done(long revision, boolean changed, long previous, long value) {}
}
