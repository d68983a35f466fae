package io.tenure.core.election;

import java.util.List;

/**
 * An election that has a leader: the leader's lease, client id, fencing token (the stamp of its
 * election) and value, and the candidates in the order they will lead.
 *
 * @param createRevision  the revision at which the election went from no leader to a leader
 * @param valueRevision   the revision of the leader's value (its election, or its last proclaim)
 * @param version         changes of leader or value since then (1 for the first leader)
 */
public record ElectionView(String key, long leaderLeaseId, String leader, long fencingToken, byte[] value,
                           long createRevision, long valueRevision, long version, List<Candidate> candidates) {

    /** A lease waiting to lead; {@code joinedAt} is the log position of its campaign. */
    public record Candidate(long leaseId, String clientId, long joinedAt) {}
}
