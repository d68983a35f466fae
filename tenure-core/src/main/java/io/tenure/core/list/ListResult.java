package io.tenure.core.list;

import io.tenure.core.kernel.Result;

/** What a list command did. */
public sealed interface ListResult extends Result {

    /**
     * A push at {@code revision}: the list's length after it; {@code handedTo} the lease of the
     * waiter that received the value instead of the list (0 when the list took it).
     */
    record Pushed(String key, int length, long revision, long handedTo) implements ListResult {}

    /**
     * An item popped, by lease {@code leaseId} (0 for a pop without a lease), at {@code revision},
     * from the head ({@code left}) or the tail, for pop {@code requestId}; {@code length} is the
     * list's after it.
     */
    record Popped(String key, byte[] value, long leaseId, long revision, int length, boolean left, long requestId) implements ListResult {}

    /** A pop that does not wait found the list empty: nothing changed. */
    record Empty(String key) implements ListResult {}

    /** The lease waits to pop from the empty list, with {@code ahead} waiters before it. */
    record Waiting(String key, long leaseId, int ahead) implements ListResult {}

    /** The lease no longer waits at the list (or did not). */
    record Left(String key, long leaseId) implements ListResult {}

    /** A popped item given back: {@code handedTo} the waiter that received it (0: back in the list, whose length is {@code length}). */
    record Returned(String key, int length, long handedTo) implements ListResult {}
}
