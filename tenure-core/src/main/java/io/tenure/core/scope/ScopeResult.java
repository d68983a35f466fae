package io.tenure.core.scope;

import io.tenure.core.kernel.Result;

import java.util.List;

/** What a scope command did. */
public sealed interface ScopeResult extends Result {

    /**
     * The set is held by the lease with this fencing token (one token for the whole set: the
     * stamp of its grant); {@code again} when the request had been granted already.
     */
    record Granted(long leaseId, long fencingToken, List<ScopeRequest> scopes, long requestId, boolean again) implements ScopeResult {}

    /**
     * The set waits; {@code joinedAt} is the log position of its acquire, orders the queue and
     * names the wait. {@code blockers}: whom it waits for now.
     */
    record Queued(long leaseId, long joinedAt, long requestId, List<Blocker> blockers) implements ScopeResult {}

    /** A try found the set blocked; nothing changed. */
    record Busy(long leaseId, List<Blocker> blockers) implements ScopeResult {}

    /** The set held with {@code fencingToken} was let go; {@code granted} waiting sets were granted as a result. */
    record Released(long leaseId, long fencingToken, int granted) implements ScopeResult {}

    /** The wait of acquire {@code requestId} was withdrawn ({@code waited} false when there was none, or it ended before). */
    record Cancelled(long leaseId, long requestId, boolean waited) implements ScopeResult {}

    /**
     * The set would have waited and closed a cycle of waits: each step's lease waits for the
     * next's (the last's for the first's, the asking lease). Nothing was queued.
     */
    record Deadlock(long leaseId, List<ScopeRequest> asked, List<Step> cycle) implements ScopeResult {
        /** The cycle as one sentence: the leases and the scopes that stand in each other's way. */
        public String message() {
            StringBuilder s = new StringBuilder("deadlock: lease ").append(leaseId).append(" asking for ").append(asked)
                    .append(" would wait in a cycle: ");
            for (int i = 0; i < cycle.size(); i++) {
                Step step = cycle.get(i);
                if (i > 0) {
                    s.append(", which ");
                }
                s.append("lease ").append(step.waiting()).append(" waits for lease ").append(step.blocker().leaseId())
                        .append(step.blocker().holding() ? " (holding " : " (queued ahead for ").append(step.blocker().scope())
                        .append(step.blocker().exclusive() ? " exclusive" : " shared").append(')');
            }
            return s.append("; nothing was queued: release what the lease holds and ask for the whole set at once").toString();
        }
    }

    /** One edge of a wait-for cycle: lease {@code waiting} waits for {@code blocker}. */
    record Step(long waiting, Blocker blocker) {}

    /**
     * A lease that stands in a claim's way: it holds {@code scope} ({@code holding}, with
     * {@code fencingToken}) or waits for it ahead of the claim (token 0), in a mode that conflicts.
     */
    record Blocker(long leaseId, String clientId, LockScope scope, boolean exclusive, boolean holding, long fencingToken) {}
}
