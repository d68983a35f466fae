package io.tenure.core.list;

/**
 * Withdraws the wait of lease {@code leaseId} to pop from list {@code key}; {@code requestId} is
 * that of the pop given up (0 = none): a copy of it applied later is refused.
 */
public record ListCancel(String key, long leaseId, long requestId) implements ListCommand {}
