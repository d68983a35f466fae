package io.tenure.core.kernel;

/**
 * Creates a lease. Granting an id that exists for the same client, TTL and owner returns it again
 * (a retried grant).
 *
 * @param owner the user whose call granted it, as the receiving member authenticated it; empty
 *              when none (authentication off, or a lease from before owners were recorded). Only
 *              its owner, or a user with {@code admin} on what it holds, may release or revoke it.
 */
public record LeaseGrant(long leaseId, long ttlMillis, String clientId, String owner) implements LeaseCommand {
    public LeaseGrant {
        owner = owner == null ? "" : owner;
    }

    /** A lease without an owner. */
    public LeaseGrant(long leaseId, long ttlMillis, String clientId) {
        this(leaseId, ttlMillis, clientId, "");
    }
}
