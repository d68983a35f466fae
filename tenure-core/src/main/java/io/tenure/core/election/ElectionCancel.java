package io.tenure.core.election;

/**
 * Withdraws a lease's candidacy (a campaign's timeout, a caller that gave up). When the lease was
 * elected first, the result says so. {@code requestId} names the campaign given up: a copy of it
 * applied later is refused.
 */
public record ElectionCancel(String key, long leaseId, long requestId) implements ElectionCommand {}
