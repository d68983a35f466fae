package io.tenure.core.latch;

/**
 * Sets latch {@code key}'s count to {@code count} when the latch does not exist (its count is
 * zero), creating it; a latch that exists keeps its count. Not bound to a lease: the latch stays
 * until it is counted down to zero. {@code requestId} (0 = none) names one set-count of its
 * client, the same on every retry of it: a retry is answered as the first copy was.
 */
public record LatchSetCount(String key, int count, long requestId) implements LatchCommand {}
