package io.tenure.core.signal;

/** A registered listener as read: its id, its lease, its pattern and its group ("" = none). */
public record ListenerView(long listenerId, long leaseId, String pattern, String group) {
}
