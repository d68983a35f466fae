package io.tenure.core.barrier;

/**
 * A lease arrives at barrier {@code key} of {@code parties}. When it is the last party, every
 * party is released together; otherwise, with {@code queue}, it waits for the others, and
 * without, it fails without a change. Arriving again while waiting keeps the place.
 * {@code requestId} (0 = none) names one await of its client: a copy of it applied after the
 * barrier released it (or its wait was withdrawn) is refused instead of joining the next round.
 */
public record BarrierAwait(String key, long leaseId, int parties, boolean queue, long requestId) implements BarrierCommand {}
