package io.tenure.core.kernel;

import java.util.List;

/**
 * A primitive that takes part in {@link Txn}s: it compares what it holds, and applies some of its
 * commands as a transaction's operations. Each step is split so that a transaction checks every
 * operation before it applies any: checks change nothing, and the apply of a checked, admitted
 * operation cannot be refused.
 */
public interface Transactional {

    /**
     * Null when {@code compare} (whose kind, key, target and relation are present and checked)
     * is well formed for this primitive, else a message naming the field (INVALID_ARGUMENT).
     */
    String checkCompare(TxnCompare compare);

    /** Whether a well-formed {@code compare} holds now. */
    boolean compare(TxnCompare compare);

    /**
     * Null when {@code operation} is one of this primitive's commands that a transaction may apply,
     * with well-formed fields, else a message naming the field (INVALID_ARGUMENT).
     */
    String checkOperation(Command operation);

    /**
     * Null when this state admits {@code operations} (each well formed, all of this primitive, in
     * the transaction's order) applied one after the other, else the refusal of the first it does
     * not admit (a key over the store's limit, an increment out of range, a lease that is gone).
     */
    Refusal admit(List<Command> operations);

    /** Applies one checked and admitted operation, with its watch event. */
    TxnResult.Done applyOperation(ApplyContext context, Command operation);

    /** The problem of an operation that names its own request id, or null: a transaction's retries are answered by its own. */
    static String ownRequestId(long requestId) {
        return requestId == 0 ? null
                : "request_id must be 0 inside a transaction (the transaction's own request id answers its retries), got " + requestId;
    }

    /** Operation {@code index} (of those handed to {@link #admit}) is refused, and why. */
    record Refusal(int index, Result.Rejected why) {}
}
