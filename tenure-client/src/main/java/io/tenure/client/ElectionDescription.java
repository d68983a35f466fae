package io.tenure.client;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * An election as read linearizably ({@link TenureElection#describe()}).
 *
 * @param name                the election's name
 * @param leader              who leads, with its value and fencing token; empty when nobody leads
 *                            (there are then no candidates either)
 * @param leaderTtlRemaining  how long the leader's lease has before the serving member could
 *                            expire it, if that member knows (empty right after a restart, and
 *                            when nobody leads)
 * @param candidates          the leases waiting to lead, in the order they will lead
 * @param revision            the revision of the state read: watch from {@code revision + 1} to
 *                            see every later change
 */
public record ElectionDescription(String name, Optional<LeaderInfo> leader, Optional<Duration> leaderTtlRemaining,
                                  List<Candidate> candidates, long revision) {

    public ElectionDescription {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(leader, "leader");
        Objects.requireNonNull(leaderTtlRemaining, "leaderTtlRemaining");
        candidates = List.copyOf(candidates);
    }

    /** A lease waiting to lead: its client id, and the revision at which it stood. */
    public record Candidate(long leaseId, String clientId, long joinedRevision) {}
}
