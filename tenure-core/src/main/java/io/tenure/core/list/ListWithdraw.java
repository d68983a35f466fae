package io.tenure.core.list;

/**
 * A waiting pop's timeout ran out: withdraws the wait of lease {@code leaseId} to pop from list
 * {@code key} for pop {@code requestId} (0 = none; a copy of that pop applied later is refused).
 * Unlike {@link ListCancel}, an item already handed to that pop stays handed: its call was, or is
 * still to be, answered with it (the hand-off came first in the log), so the withdrawal answers
 * the pop's {@link ListResult.Popped} again and changes nothing.
 */
public record ListWithdraw(String key, long leaseId, long requestId) implements ListCommand {}
