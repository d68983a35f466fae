package io.tenure.core.barrier;

/**
 * A lease enters double barrier {@code key} of {@code parties}. When it is the last of the
 * {@code parties}, every entrant is let in together; otherwise, with {@code queue}, it waits for
 * the others (or, while a generation is inside, for the next generation), and without, it fails
 * without a change. Entering again while waiting or inside answers the same again.
 * {@code requestId} (0 = none) names one enter of its client: a copy of it applied after its
 * lease left (or its wait was withdrawn) is refused instead of entering the next generation.
 */
public record DoubleBarrierEnter(String key, long leaseId, int parties, boolean queue, long requestId) implements DoubleBarrierCommand {}
