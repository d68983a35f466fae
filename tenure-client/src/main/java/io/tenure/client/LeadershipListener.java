package io.tenure.client;

/**
 * Told by an {@link ElectionLatch} when its lease becomes leader and when it stops being leader,
 * on a client thread; keep the calls short (start or stop work elsewhere).
 */
public interface LeadershipListener {

    /** This latch leads now, with {@code leadership}'s fencing token. */
    void isLeader(Leadership leadership);

    /**
     * This latch no longer leads: it resigned (closed), or its lease was lost (the server may hand
     * leadership to the next candidate at any moment). Stop the leader's work.
     */
    void notLeader();
}
