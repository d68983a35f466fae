package io.tenure.client;

import java.util.concurrent.CompletableFuture;

/**
 * A listener registered by {@link TenureTopic#listen}: it receives the signals of the channels its
 * pattern matches until closed, until its lease ends, or until the client closes. It follows the
 * cluster across member failures on its own, listening again on another member (and replacing
 * its registration there, so a queue group never counts it twice). Thread-safe.
 */
public final class Subscription implements AutoCloseable {
    private final ListenStream stream;

    Subscription(ListenStream stream) {
        this.stream = stream;
    }

    /** The pattern listened to. */
    public String pattern() {
        return stream.pattern();
    }

    /** The queue group, or "" for none. */
    public String group() {
        return stream.group();
    }

    /**
     * Completes once a member has registered the listener (through the log): every signal
     * published after that reaches it. Completes exceptionally when the listen is refused.
     */
    public CompletableFuture<Void> started() {
        return stream.started();
    }

    /** False once the subscription has ended, for whatever reason. */
    public boolean isOpen() {
        return stream.isOpen();
    }

    /** Unregisters the listener; no listener call follows. Idempotent. */
    @Override
    public void close() {
        stream.close();
    }

    CompletableFuture<Void> ended() {
        return stream.ended();
    }

    void clientClosed() {
        stream.clientClosed();
    }

    @Override
    public String toString() {
        return "Subscription{pattern='" + pattern() + "', group='" + group() + "', open=" + isOpen() + "}";
    }
}
