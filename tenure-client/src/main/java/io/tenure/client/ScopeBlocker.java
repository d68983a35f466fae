package io.tenure.client;

/**
 * A lease in the way of a set of scopes: it holds {@link #part()} ({@link #holding()}, with the
 * fencing token of its grant), or waits for it ahead of the set (a later set never passes an
 * earlier waiter it conflicts with, so a waiter blocks too).
 *
 * @param leaseId      the blocking lease
 * @param clientId     its client id, the holder name it was granted with
 * @param part         the part it holds or waits for that conflicts with the set
 * @param holding      true when it holds {@code part}, false when it waits for it
 * @param fencingToken the token of its grant when holding; 0 when waiting
 */
public record ScopeBlocker(long leaseId, String clientId, ScopePart part, boolean holding, long fencingToken) {
    public ScopeBlocker {
        java.util.Objects.requireNonNull(clientId, "clientId");
        java.util.Objects.requireNonNull(part, "part");
    }

    /** As in {@code 'worker-1' (lease 12) holds range 42:0-4096 exclusive (token 880)}. */
    @Override
    public String toString() {
        return (clientId.isEmpty() ? "a lease" : "'" + clientId + "'") + " (lease " + leaseId + ") "
                + (holding ? "holds " + part + " (token " + fencingToken + ")" : "waits for " + part);
    }
}
