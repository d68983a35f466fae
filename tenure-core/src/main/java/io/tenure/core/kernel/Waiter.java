package io.tenure.core.kernel;

/** A queued claim; {@code joinedAt} is the log position of the request that queued it, and orders the queue. */
public record Waiter<C extends Claim>(C claim, long joinedAt) {
    public long leaseId() {
        return claim.leaseId();
    }

    /** The claim's id in its queue ({@link Claim#id}). */
    public long id() {
        return claim.id();
    }
}
