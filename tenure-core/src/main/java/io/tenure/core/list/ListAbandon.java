package io.tenure.core.list;

/**
 * The call of pop {@code requestId} by lease {@code leaseId} went away before its answer: if the
 * lease still waits at list {@code key} for that pop, the wait is withdrawn (a copy of the pop sent
 * again through another member may wait anew); if the pop was answered with an item that no retry
 * has been answered with since, the item is given back, as {@link ListReturn} does. Otherwise
 * nothing changes. Proposed by the member whose call went away; the log decides which came first.
 */
public record ListAbandon(String key, long leaseId, long requestId) implements ListCommand {}
