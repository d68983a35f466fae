package io.tenure.core.kernel;

import java.util.List;

/**
 * A multi-key transaction (etcd's {@code Txn}): if every one of {@code compares} holds, the
 * {@code success} operations are applied, otherwise the {@code failure} operations; either way
 * all of them or none, at this one log position. Each operation is an ordinary command of a
 * primitive that takes part in transactions ({@link Transactional}): a key-value put or delete,
 * a counter add or set. {@link Transactions} applies it.
 *
 * <p>{@code requestId} (0 = none) names one transaction of its client, the same on every retry of
 * it: a retry (the same transaction with the same id) is answered as the first copy was, and
 * applied once. The operations' own request ids must be 0.
 */
public record Txn(List<TxnCompare> compares, List<Command> success, List<Command> failure, long requestId) implements Command {
    public Txn {
        compares = List.copyOf(compares);
        success = List.copyOf(success);
        failure = List.copyOf(failure);
    }
}
