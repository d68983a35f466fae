package io.tenure.core.list;

/**
 * Gives back {@code value}, popped by a caller whose answer could not be delivered (its call went
 * away, or its member stopped): the first lease waiting to pop receives it, or it goes back to the
 * end it was popped from ({@code left}: the head), even when the list is at its most items. Proposed
 * by the member that popped it; {@code requestId} is the pop's, so that a retry of that pop does not
 * get the item again from the memo.
 */
public record ListReturn(String key, byte[] value, boolean left, long requestId) implements ListCommand {
    public ListReturn {
        value = value == null ? new byte[0] : value;
    }
}
