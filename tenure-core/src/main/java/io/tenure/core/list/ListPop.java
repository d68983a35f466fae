package io.tenure.core.list;

/**
 * Pops the item at the left end (the head) of list {@code key}, or at its right end. When the
 * list is empty: with {@code queue} the lease {@code leaseId} waits, in arrival order, for the
 * next item pushed; without, nothing changes. {@code leaseId} is 0 for a pop that never waits.
 * {@code requestId} (0 = none) names one pop of its client, the same on every retry of it: a retry
 * is answered with the item the first copy popped (or was handed), and pops nothing more.
 */
public record ListPop(String key, boolean left, long leaseId, boolean queue, long requestId) implements ListCommand {}
