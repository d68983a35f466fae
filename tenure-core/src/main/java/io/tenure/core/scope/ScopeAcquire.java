package io.tenure.core.scope;

import java.util.List;

/**
 * Asks for a set of scopes for a lease, all or nothing: the set is granted at once, with one
 * fencing token, when no part of it conflicts with a holder or with an earlier waiter; otherwise,
 * with {@code queue}, the set waits as one claim (in every part's way at once), and without it the
 * command fails with the blockers and nothing changes. A set names each part once and no two
 * parts overlap (ask for the wider one).
 *
 * <p>{@code requestId} (0 = none) names one acquire of its client, the same on every retry: a
 * retry while the set waits keeps its place, one after the grant gets the same grant, and a late
 * copy after the grant was released or the wait withdrawn is refused.
 */
public record ScopeAcquire(long leaseId, List<ScopeRequest> scopes, byte[] metadata, boolean queue, long requestId)
        implements ScopeCommand {
    public ScopeAcquire {
        scopes = List.copyOf(scopes);
    }
}
