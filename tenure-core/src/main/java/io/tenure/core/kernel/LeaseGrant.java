package io.tenure.core.kernel;

/** Creates a lease. Granting an id that exists for the same client and TTL returns it again (a retried grant). */
public record LeaseGrant(long leaseId, long ttlMillis, String clientId) implements LeaseCommand {}
