package io.tenure.core.latch;

/**
 * A lease waits until latch {@code key}'s count is zero: a latch that does not exist answers at
 * once; otherwise, with {@code queue}, the lease waits (bound to it: its end withdraws the wait),
 * and without, the await answers the count without a change. Awaiting again while waiting keeps
 * the wait. {@code requestId} (0 = none) names one await of its client: a copy of it applied after
 * its wait ended (released or withdrawn) is refused instead of waiting for the latch's next round.
 */
public record LatchAwait(String key, long leaseId, boolean queue, long requestId) implements LatchCommand {}
