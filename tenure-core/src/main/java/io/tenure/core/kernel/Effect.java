package io.tenure.core.kernel;

import io.tenure.core.watch.WatchEvent;

/**
 * A consequence of a command for someone other than its proposer; the server acts on it after
 * apply. Primitives produce them only through {@link ApplyContext#wake} and
 * {@link ApplyContext#emit}, so these two kinds serve every primitive.
 */
public sealed interface Effect {

    /**
     * A parked wait is over: the calls of lease {@code key.leaseId()} waiting on {@code key} are
     * answered with {@code result} (a grant with its fencing token, a withdrawn wait, or a
     * rejection when the lease ended). Exactly one waiter wakes per freed unit.
     */
    record Wake(WaitKey key, Result result) implements Effect {}

    /** A change already appended to the event log, for the watches. */
    record Watched(WatchEvent event) implements Effect {}
}
