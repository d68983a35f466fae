package io.tenure.core.scope;

/**
 * Withdraws lease {@code leaseId}'s waiting acquire {@code requestId} (a caller that timed out or
 * went away). When the grant won the race, the answer is the grant: the caller owns it and must
 * release it. A late copy of the acquire, applied after this, is refused.
 */
public record ScopeCancel(long leaseId, long requestId) implements ScopeCommand {
}
