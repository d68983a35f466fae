package io.tenure.client;

/**
 * Receives the signals of a {@link Subscription}. Calls for one subscription never overlap and
 * come in the order the cluster applied the publishes (so in publish order per channel). At most
 * one {@link #onError} ends it; a subscription closed by its caller ends without one.
 *
 * <p>Calls run on a client thread: keep them short, or hand off to an executor. A listener that
 * falls more than 10,000 signals behind is cut off by its member ({@link #onError}). An exception
 * thrown by {@link #onSignal} is logged and otherwise ignored.
 */
public interface SignalListener {
    /** A signal published on {@code channel}. */
    void onSignal(String channel, byte[] payload);

    /**
     * The subscription has ended for good: refused ({@link InvalidArgumentException}), its lease
     * ended ({@link LeaseNotFoundException}), cut off as too slow, or the client was closed.
     * Members being down never end a subscription: it listens again on another member, missing
     * the signals applied in between (signals are not stored).
     */
    default void onError(TenureException error) {
    }
}
