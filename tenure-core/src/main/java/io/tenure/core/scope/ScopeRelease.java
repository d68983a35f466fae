package io.tenure.core.scope;

/** Lets go the set of scopes lease {@code leaseId} holds with {@code fencingToken}; a retry of a release is answered again. */
public record ScopeRelease(long leaseId, long fencingToken) implements ScopeCommand {
}
