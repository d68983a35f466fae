package io.tenure.core.election;

import io.tenure.core.kernel.Result;

/** What an election command did. */
public sealed interface ElectionResult extends Result {

    /** The lease leads, with this fencing token; {@code again} when it already led. */
    record Elected(String key, long leaseId, long fencingToken, boolean again) implements ElectionResult {}

    /** The lease is a candidate; {@code ahead} candidates are before it, and {@code leader} (a client id) leads. */
    record Candidate(String key, long leaseId, long joinedAt, int ahead, String leader) implements ElectionResult {}

    /** A campaign that does not wait found a leader ({@code leader}, a client id) and {@code candidates} waiting. */
    record Led(String key, String leader, long leaderLeaseId, int candidates) implements ElectionResult {}

    /** The leader's value is now {@code value}, from {@code revision} on; its token is unchanged. */
    record Proclaimed(String key, long fencingToken, long revision) implements ElectionResult {}

    /** The leader stepped down; {@code nextFencingToken} is the next leader's token, 0 when none. */
    record Resigned(String key, long nextFencingToken) implements ElectionResult {}

    /** The candidacy was withdrawn (or there was none); {@code leader} and {@code candidates} as of then. */
    record Withdrawn(String key, long leaseId, String leader, int candidates) implements ElectionResult {}
}
