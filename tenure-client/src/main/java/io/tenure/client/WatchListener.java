package io.tenure.client;

/**
 * Receives what a {@link Watch} sees. The calls for one watch never overlap and come in revision
 * order: every event once, none skipped (see {@link TenureClient#watch}), then at most one of
 * {@link #onCompacted} or {@link #onError}, after which the watch has ended and nothing more
 * arrives. A watch closed by its caller ({@link Watch#close()}) ends without either.
 *
 * <p>Calls run on a client thread (usually the gRPC thread that received the events): keep them
 * short, or hand off to an executor; a slow listener slows the delivery of this watch's events.
 * An exception thrown by a listener method is logged and otherwise ignored: the event counts as
 * delivered and the watch goes on.
 */
public interface WatchListener {
    /** The next change, with a revision higher than every one delivered before. */
    void onEvent(WatchEvent event);

    /**
     * The watch has ended because the changes from the revision it had to continue from are no
     * longer retained by the server: {@code compactRevision} is the oldest revision that still
     * is. Events may have been missed, so state derived from them is stale: read the current
     * state again, then start a new watch from the revision after that read.
     */
    void onCompacted(long compactRevision);

    /**
     * The watch has ended for good: the server refused it ({@link InvalidArgumentException}, or
     * another {@link TenureException} for a status the client cannot retry), or the client was
     * closed (a plain {@link TenureException} saying so). Members being down or unreachable
     * never end a watch; it keeps reconnecting until closed.
     */
    void onError(TenureException error);
}
