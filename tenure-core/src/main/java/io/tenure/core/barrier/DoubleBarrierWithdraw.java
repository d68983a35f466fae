package io.tenure.core.barrier;

/**
 * A lease gives up waiting to enter double barrier {@code key} (a timeout, a caller that gave
 * up), in the name of its enter {@code requestId} (0 = none). A lease already let in stays in.
 */
public record DoubleBarrierWithdraw(String key, long leaseId, long requestId) implements DoubleBarrierCommand {}
