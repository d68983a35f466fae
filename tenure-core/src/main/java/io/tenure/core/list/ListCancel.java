package io.tenure.core.list;

/**
 * Withdraws the wait of lease {@code leaseId} to pop from list {@code key}; {@code requestId} is
 * that of the pop given up (0 = none): a copy of it applied later is refused. When that pop was
 * handed an item already, and no retry of it was answered with the item, the item goes back (as
 * {@link ListReturn} does): its caller gave up before the answer reached it.
 */
public record ListCancel(String key, long leaseId, long requestId) implements ListCommand {}
