package io.tenure.core.latch;

/**
 * Lowers latch {@code key}'s count by one; at zero every waiter is released and the latch is gone.
 * Counting down a latch that does not exist changes nothing. {@code requestId} (0 = none) names
 * one count-down of its client, the same on every retry of it: a retry is answered as the first
 * copy was, and counts down once.
 */
public record LatchCountDown(String key, long requestId) implements LatchCommand {}
