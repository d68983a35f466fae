package io.tenure.core.list;

/**
 * Pushes {@code value} at the left end (the head) of list {@code key}, or at its right end (the
 * tail), creating the list; when leases wait to pop from it, the first of them receives the value
 * instead and the list stays empty. {@code requestId} (0 = none) names one push of its client,
 * the same on every retry of it: a retry is answered as the first copy was and pushes nothing.
 */
public record ListPush(String key, byte[] value, boolean left, long requestId) implements ListCommand {
    public ListPush {
        value = value == null ? new byte[0] : value;
    }
}
