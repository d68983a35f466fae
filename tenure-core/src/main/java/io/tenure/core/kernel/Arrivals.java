package io.tenure.core.kernel;

import io.tenure.core.kernel.Result.Code;

/**
 * The checks every request that may hold or join one grant-queue kind's queue makes first (a
 * lock's acquire, a semaphore's, an election's campaign, a barrier's await), in one order, so
 * that every kind refuses the same bad request with the same status: a bad field, then a lease
 * that does not exist, then a name that exists as another kind, then a late copy of a request
 * that already ended.
 */
public final class Arrivals {
    private final String kind;
    private final Names names;
    private final EndedAcquires ended;

    /**
     * @param kind  the kind's name, as {@link Names} and the late-copy refusal call it
     * @param names the namespace the grant-queue kinds share
     * @param ended the kind's ended requests
     */
    public Arrivals(String kind, Names names, EndedAcquires ended) {
        this.kind = kind;
        this.names = names;
        this.ended = ended;
    }

    /**
     * Null when the request may go on; otherwise its refusal, and nothing has changed.
     *
     * @param invalid   the first problem with the request's own fields (INVALID_ARGUMENT), or null
     * @param lease     the request's lease, or null when it does not exist
     * @param leaseId   the lease the request names
     * @param requestId the client's id for the request (0 = none)
     */
    public Result.Rejected refusal(String invalid, Lease lease, String key, long leaseId, long requestId) {
        if (invalid != null) {
            return new Result.Rejected(Code.INVALID_ARGUMENT, invalid);
        }
        if (lease == null) {
            return new Result.Rejected(Code.NOT_FOUND, Leases.notFound(leaseId));
        }
        String otherKind = names.mismatch(key, kind);
        if (otherKind != null) {
            return new Result.Rejected(Code.FAILED_PRECONDITION, otherKind);
        }
        return ended.lateCopy(kind, key, leaseId, requestId);
    }
}
