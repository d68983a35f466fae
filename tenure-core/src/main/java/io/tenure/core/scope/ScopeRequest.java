package io.tenure.core.scope;

import java.util.Objects;

/** One part of a scoped acquire: a scope, held exclusively or shared. */
public record ScopeRequest(LockScope scope, boolean exclusive) {
    public ScopeRequest {
        Objects.requireNonNull(scope, "scope");
    }

    @Override
    public String toString() {
        return scope + (exclusive ? " exclusive" : " shared");
    }
}
