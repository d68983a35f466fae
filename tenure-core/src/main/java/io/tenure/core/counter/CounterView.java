package io.tenure.core.counter;

/**
 * A counter that exists: its value, and when it was created and last changed. A counter that
 * does not exist reads 0 and has no view.
 *
 * @param version    the changes since it was created, that one included
 * @param idleSince  the log position at which it became 0, after which the leader forgets it
 *                   after its idle time; 0 while it is not 0
 */
public record CounterView(String key, long value, long createRevision, long modRevision, long version, long idleSince) {}
