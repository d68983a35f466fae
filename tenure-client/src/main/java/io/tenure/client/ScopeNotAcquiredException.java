package io.tenure.client;

import java.util.List;
import java.util.stream.Collectors;

/**
 * A set of scopes was not granted within the caller's timeout. Nothing is held and nothing stays
 * queued: the wait was withdrawn. Carries the leases in its way when the member answered
 * ({@link #blockers()}); as a {@link LockNotAcquiredException}, {@link #holder()} is the first
 * holding blocker's client id and {@link #waiters()} counts the waiting ones.
 */
public class ScopeNotAcquiredException extends LockNotAcquiredException {
    private final List<ScopePart> parts;
    private final List<ScopeBlocker> blockers;

    public ScopeNotAcquiredException(List<ScopePart> parts, List<ScopeBlocker> blockers) {
        super(message(parts, blockers), describe(parts),
                blockers.stream().filter(ScopeBlocker::holding).map(ScopeBlocker::clientId).findFirst().orElse(""),
                blockers.stream().filter(b -> !b.holding()).map(ScopeBlocker::leaseId).distinct().count());
        this.parts = List.copyOf(parts);
        this.blockers = List.copyOf(blockers);
    }

    /** The parts asked for. */
    public List<ScopePart> parts() {
        return parts;
    }

    /** Who stood in the way when the attempt ended: holders first as the member listed them, then waiters ahead. */
    public List<ScopeBlocker> blockers() {
        return blockers;
    }

    /** The parts as one line, {@code range 42:0-10 exclusive, path /a shared}. */
    static String describe(List<ScopePart> parts) {
        return parts.stream().map(ScopePart::toString).collect(Collectors.joining(", "));
    }

    private static String message(List<ScopePart> parts, List<ScopeBlocker> blockers) {
        return "scopes [" + describe(parts) + "] not acquired"
                + (blockers.isEmpty() ? "" : ": " + blockers.stream().map(ScopeBlocker::toString).collect(Collectors.joining("; ")));
    }
}
