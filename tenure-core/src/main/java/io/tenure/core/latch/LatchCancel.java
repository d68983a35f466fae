package io.tenure.core.latch;

/** A lease stops waiting at latch {@code key} (a timeout, a caller that gave up); the count is unchanged. */
public record LatchCancel(String key, long leaseId, long requestId) implements LatchCommand {}
