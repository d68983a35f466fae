package io.tenure.client;

import java.util.List;
import java.util.Objects;

/**
 * The sets of scopes held and waited for that overlap a scope, read linearizably
 * ({@link TenureClient#describe(Scope)}). A set is shown whole: a holder of
 * {@code [range 42:0-10, path /data/a]} is listed when either part overlaps the scope described.
 *
 * @param scope    the scope described
 * @param holders  the sets held, by fencing token (the order they were granted)
 * @param waiters  the sets waited for, in queue order (the order they asked)
 * @param revision the revision of the state read: watch from {@code revision + 1} to see every later change
 */
public record ScopeDescription(Scope scope, List<Holder> holders, List<Waiter> waiters, long revision) {
    public ScopeDescription {
        Objects.requireNonNull(scope, "scope");
        holders = List.copyOf(holders);
        waiters = List.copyOf(waiters);
    }

    /** Whether any lease holds a set overlapping the scope. */
    public boolean held() {
        return !holders.isEmpty();
    }

    /**
     * A lease holding a set, with the one fencing token of its grant.
     *
     * @param metadata what the holder attached when acquiring (never null)
     */
    public record Holder(long leaseId, String clientId, long fencingToken, List<ScopePart> parts, byte[] metadata) {
        public Holder {
            Objects.requireNonNull(clientId, "clientId");
            parts = List.copyOf(parts);
            metadata = metadata == null ? new byte[0] : metadata.clone();
        }

        @Override
        public byte[] metadata() {
            return metadata.clone();
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof Holder h && h.leaseId == leaseId && h.clientId.equals(clientId) && h.fencingToken == fencingToken
                    && h.parts.equals(parts) && java.util.Arrays.equals(h.metadata, metadata);
        }

        @Override
        public int hashCode() {
            return Objects.hash(leaseId, clientId, fencingToken, parts, java.util.Arrays.hashCode(metadata));
        }

        @Override
        public String toString() {
            return "Holder{lease=" + leaseId + ", clientId='" + clientId + "', fencingToken=" + fencingToken + ", parts=" + parts
                    + ", metadata=" + metadata.length + " bytes}";
        }
    }

    /** A lease waiting for a set, queued by the command at {@code joinedRevision}. */
    public record Waiter(long leaseId, String clientId, long joinedRevision, List<ScopePart> parts) {
        public Waiter {
            Objects.requireNonNull(clientId, "clientId");
            parts = List.copyOf(parts);
        }
    }
}
