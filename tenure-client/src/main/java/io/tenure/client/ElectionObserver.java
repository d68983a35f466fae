package io.tenure.client;

import java.util.Optional;

/** Follows an election's leader ({@link TenureElection#observe}). */
public interface ElectionObserver {

    /**
     * The leader changed: a new leader, a new value proclaimed, or nobody leads (empty). Called
     * for every change in revision order, once each, on a client thread; the first call gives the
     * leader when the observation started.
     */
    void leaderChanged(Optional<LeaderInfo> leader);

    /** The observation ended with an error (the client closed, or a refusal); no more calls follow. */
    default void onError(TenureException error) {
    }
}
