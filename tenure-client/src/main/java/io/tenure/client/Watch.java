package io.tenure.client;

import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;

/**
 * An open watch on a lock key or a key prefix, made by {@link TenureClient#watch} or
 * {@link TenureClient#watchPrefix}; its events go to the {@link WatchListener} given there.
 * It follows the cluster across member failures on its own (see {@link TenureClient#watch}) and
 * ends when closed, when the client is closed, on compaction, or on a refusal. Thread-safe.
 */
public final class Watch implements AutoCloseable {
    private final WatchStream stream;
    /** Handed to users, so that completing or cancelling it cannot disturb the stream's own. */
    private final CompletableFuture<Long> startedView;

    Watch(WatchStream stream) {
        this.stream = stream;
        this.startedView = new CompletableFuture<>();
        stream.started().whenComplete((revision, failure) -> {
            if (failure == null) {
                startedView.complete(revision);
            } else if (failure instanceof CancellationException) {
                startedView.cancel(false);
            } else {
                startedView.completeExceptionally(failure);
            }
        });
    }

    /** The watched key, or the prefix for {@link #isPrefix() a prefix watch}. */
    public String key() {
        return stream.key();
    }

    /** True for a watch made by {@link TenureClient#watchPattern}: {@link #key()} is the pattern. */
    public boolean isPattern() {
        return stream.pattern();
    }

    /** True for a watch made by {@link TenureClient#watchPrefix}. */
    public boolean isPrefix() {
        return stream.prefix();
    }

    /**
     * The revision of the latest event handed to the listener, 0 before the first. Every change
     * from the start revision up to it has been delivered; to continue elsewhere without a gap,
     * watch again from this plus one.
     */
    public long lastRevision() {
        return stream.lastDelivered();
    }

    /**
     * Completes when the first member confirms the watch, with that member's revision at the
     * time: for a watch from revision 0 ("from the next change"), exactly the changes after it
     * are delivered. Completes exceptionally if the watch ends before it is confirmed (start
     * revision compacted, refused, client closed), and is cancelled by {@link #close()}.
     */
    public CompletableFuture<Long> started() {
        return startedView;
    }

    /** False once the watch has ended, for whatever reason. */
    public boolean isOpen() {
        return stream.isOpen();
    }

    /**
     * Cancels the watch on the server and stops delivery: undelivered events are dropped and the
     * listener is not called again (a call already running on another thread finishes). No
     * {@code onError} follows. Idempotent.
     */
    @Override
    public void close() {
        stream.close();
    }

    @Override
    public String toString() {
        return "Watch{" + (isPattern() ? "pattern" : isPrefix() ? "prefix" : "key") + "='" + key() + "', lastRevision=" + lastRevision()
                + ", open=" + isOpen() + "}";
    }

    void start() {
        stream.start();
    }

    /** Ends the watch because the client is closing; the listener gets {@code onError}. */
    void clientClosed() {
        stream.clientClosed();
    }

    /** Completes once the watch has ended, however it ended. */
    CompletableFuture<Void> ended() {
        return stream.ended();
    }
}
