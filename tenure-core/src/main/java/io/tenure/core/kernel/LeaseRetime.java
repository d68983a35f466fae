package io.tenure.core.kernel;

/**
 * Renews a lease to a new TTL (the text protocol's {@code n} with a TTL, or without one after a
 * grant with another: dflockd renews a hold to the TTL it names). Answers as a renewal does
 * ({@link LeaseResult.LeasesRenewed}, a TTL of 0 for a lease that is gone), so every member
 * starts the new TTL from its own application of it, as for a renewal.
 */
public record LeaseRetime(long leaseId, long ttlMillis) implements LeaseCommand {}
