package io.tenure.core.kernel;

/**
 * Renews a batch of leases: one command carries every keep-alive a member received in a short
 * window, so keep-alives cost one log entry per batch, not one each.
 */
public record LeaseRenew(long[] leaseIds) implements LeaseCommand {}
