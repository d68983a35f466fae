package io.tenure.core.kernel;

/**
 * Ends a lease whose TTL passed on the leader's clock. Conditional: a no-op unless the lease
 * was last granted or renewed at {@code renewedAt}, so an expiry computed before a renewal
 * (a deposed leader's, a slow proposal) cannot end a lease that was kept alive since.
 */
public record LeaseExpire(long leaseId, long renewedAt) implements LeaseCommand, LeaderClockCommand {}
