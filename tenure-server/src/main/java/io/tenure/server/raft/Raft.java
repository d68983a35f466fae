package io.tenure.server.raft;

import io.tenure.server.NotServingException;

import java.io.Closeable;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * This member's side of the Raft group, whichever library runs it: the log that entries are
 * appended to, and what the member needs to know about the group (term, leader, members) and do
 * to it (change its members, hand leadership over). The library calls {@link TenureStateMachine}
 * with what it commits.
 */
public interface Raft extends Closeable {
    /** A voting member: its name (its {@code --id}) and its peer address, host:port. */
    record Peer(String name, String address) {
    }

    /** Starts the member's Raft server: loads the snapshot, replays the log, joins the group. */
    void start() throws IOException;

    /**
     * Appends {@code entry} to the log: in-process on the leader, forwarded to it from a follower.
     * Completes with the entry's log index once it is committed (on a majority's disks); fails
     * with {@link NotServingException} when it was not (no leader, shutting down). A failure is
     * ambiguous: the entry may still be committed.
     */
    CompletableFuture<Long> append(byte[] entry);

    /**
     * Confirms, without writing to the log, an index at which a linearizable read may be served:
     * completes with a commit index that covers every entry committed before the call, once the
     * leader has confirmed that it still leads (Raft's ReadIndex: a round of heartbeats a majority
     * of the current configuration answers in the leader's term, after the leader committed an
     * entry of that term). A read is linearizable once this member has applied that index.
     * Fails with {@link NotServingException} when it cannot be confirmed now (no leader, a new
     * leader with nothing of its term committed yet).
     *
     * <p>Null when this engine cannot confirm it safely without the log: the caller then commits
     * a barrier entry instead. Safe only because Tenure changes the voters one at a time
     * ({@code Member.addMember}, {@code Member.removeMember}): the majorities of two
     * configurations one voter apart always meet, so no leader elected meanwhile can be missed.
     */
    CompletableFuture<Long> readIndex();

    /** The current term, 0 when unknown. */
    long term();

    /** Whether this member leads now. */
    boolean leader();

    /** Whether this member leads and has applied an entry of its term. */
    boolean leaderReady();

    /** The leader's name as this member knows it, or null. */
    String leaderName();

    /** The commit index this member knows, or -1 while the log is not open or the server not running. */
    long commitIndex();

    /** The first index still in this member's log (earlier entries were purged after a snapshot). */
    long logStartIndex();

    /** Whether the log is open: false while a starting member loads its snapshot and reads its log. */
    boolean logOpen();

    /** Whether the Raft server runs (not failed, not closed). */
    boolean alive();

    /** The voting members in the current configuration. */
    List<Peer> peers();

    /** Replaces the voting members through a configuration change; blocks until it is committed. */
    void changePeers(List<Peer> peers) throws IOException;

    /**
     * Asks the leader to hand leadership to {@code target} and waits up to {@code timeoutMillis} for
     * it to lead; true when it does.
     */
    boolean transferLeadership(String target, long timeoutMillis) throws IOException, InterruptedException;

    /**
     * On the leader, the followers fit to take over, best first: those heard from within
     * {@code silentLimitMillis}, the one with the most of the log first. Empty on a follower.
     */
    List<String> successors(long silentLimitMillis);
}
