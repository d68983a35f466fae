package io.tenure.core.kernel;

/** A granted claim and its fencing token (the stamp of its grant). */
public record Hold<C extends Claim>(C claim, long token) {
    public long leaseId() {
        return claim.leaseId();
    }

    /** The claim's id in its queue ({@link Claim#id}). */
    public long id() {
        return claim.id();
    }
}
