package io.tenure.core.signal;

import io.tenure.core.kernel.Result;

/** What a signal command did. */
public sealed interface SignalResult extends Result {

    /** The listener is registered (or was already, and now has the pattern and group asked for). */
    record Listening(long listenerId, String pattern, String group) implements SignalResult {}

    /** The listener is no longer registered; {@code was} tells whether it was until now. */
    record Unlistened(long listenerId, boolean was) implements SignalResult {}

    /**
     * A signal went to {@code receivers} (listener ids, in id order; each member delivers to those
     * connected to it). A retry's answer has {@code retry} set, the first copy's receiver count,
     * and no receivers: it was delivered once, by the first copy.
     */
    record Published(String channel, byte[] payload, long[] receivers, int receiverCount, boolean retry) implements SignalResult {}
}
