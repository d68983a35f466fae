package io.tenure.core.scope;

import java.util.List;

/** Who holds and who waits for the sets of scopes that overlap one scope: holders in grant order, waiters in join order. */
public record ScopeView(LockScope scope, List<Holder> holders, List<Waiter> waiters) {

    /** A set held by a lease with its fencing token; {@code requestId} is its acquire's (0 = none). */
    public record Holder(long leaseId, String clientId, long fencingToken, List<ScopeRequest> scopes, byte[] metadata, long requestId) {}

    /** A set waited for; {@code joinedAt} is the log position of its acquire, {@code requestId} its request's (0 = none). */
    public record Waiter(long leaseId, String clientId, long joinedAt, List<ScopeRequest> scopes, long requestId) {}
}
