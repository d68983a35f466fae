package io.tenure.core.barrier;

/** A lease leaves barrier {@code key} before it is released (a timeout, a caller that gave up). */
public record BarrierCancel(String key, long leaseId, long requestId) implements BarrierCommand {}
