package io.tenure.server.raft;

import org.apache.ratis.conf.Parameters;
import org.apache.ratis.grpc.GrpcFactory;
import org.apache.ratis.grpc.server.GrpcLogAppender;
import org.apache.ratis.rpc.RpcFactory;
import org.apache.ratis.rpc.RpcType;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.leader.FollowerInfo;
import org.apache.ratis.server.leader.LeaderState;
import org.apache.ratis.server.leader.LogAppender;
import org.apache.ratis.server.raftlog.RaftLog;
import org.apache.ratis.statemachine.SnapshotInfo;

/**
 * The members' peer transport: Ratis's gRPC transport, with one change to how a leader catches a
 * follower up.
 *
 * <p>Ratis 3.2.2 sends a follower a snapshot only when the follower's next index is below the
 * leader's log start. A leader that was killed and comes back after the new leader purged its log
 * can have a next index exactly <em>equal</em> to that log start (a leader starts a new log
 * segment when elected, at the old leader's last index + 1). The entry before it is then purged
 * and is not the snapshot's last entry, so Ratis can neither send entries (it must name the
 * previous entry's term) nor decides to send the snapshot: its log appender fails ("Previous
 * TermIndex not found") and restarts in a loop, and the member never catches up until a later
 * purge moves the log start past it (docs/safety.md, "A follower that never caught up"). Here the
 * leader also sends its snapshot in that case.
 *
 * <p>Selected by class name through {@code raft.rpc.type}; Ratis creates it reflectively, hence
 * the public no-argument constructor.
 */
public final class PeerTransport implements RpcType {
    public PeerTransport() {
    }

    @Override
    public String name() {
        return PeerTransport.class.getName();
    }

    @Override
    public RpcFactory newFactory(Parameters parameters) {
        return new Factory(parameters);
    }

    /**
     * Whether a leader must send its snapshot because it cannot send entries from the follower's
     * next index: the entry before that index is gone from its log, is not the snapshot's last
     * entry, and the snapshot is ahead of everything the follower has.
     *
     * @param followerNext    the index the leader would send the follower next
     * @param leaderNext      the index of the leader's next entry (its last + 1)
     * @param previousInLog   whether the leader's log still holds entry {@code followerNext - 1}
     * @param snapshotIndex   the last index in the leader's latest snapshot, or -1 without one
     */
    static boolean previousEntryPurged(long followerNext, long leaderNext, boolean previousInLog, long snapshotIndex) {
        if (snapshotIndex < 0 || followerNext >= leaderNext || followerNext <= RaftLog.LEAST_VALID_LOG_INDEX) {
            return false;
        }
        return !previousInLog && snapshotIndex != followerNext - 1 && snapshotIndex >= followerNext;
    }

    private static final class Factory extends GrpcFactory {
        Factory(Parameters parameters) {
            super(parameters);
        }

        @Override
        public LogAppender newLogAppender(RaftServer.Division server, LeaderState state, FollowerInfo follower) {
            return new Appender(server, state, follower);
        }
    }

    private static final class Appender extends GrpcLogAppender {
        Appender(RaftServer.Division server, LeaderState state, FollowerInfo follower) {
            super(server, state, follower);
        }

        @Override
        public SnapshotInfo shouldInstallSnapshot() {
            SnapshotInfo ratisChoice = super.shouldInstallSnapshot();
            if (ratisChoice != null) {
                return ratisChoice;
            }
            // Asked on every turn of the appender's loop: the cheap test first. The latest snapshot
            // is read from disk (a directory listing) on each call while there is none yet, which
            // cost the leader of a busy fresh cluster 9 % of its CPU when it was asked first.
            long next = getFollower().getNextIndex();
            boolean previousInLog = getRaftLog().getTermIndex(next - 1) != null;
            if (previousInLog) {
                return null;
            }
            SnapshotInfo snapshot = getServer().getStateMachine().getLatestSnapshot();
            if (snapshot == null) {
                return null;
            }
            if (previousEntryPurged(next, getRaftLog().getNextIndex(), previousInLog, snapshot.getIndex())) {
                LOG.info("{}: entry {} before follower {}'s next index is purged and not in snapshot {}: sending the snapshot",
                        this, next - 1, getFollowerId(), snapshot.getTermIndex());
                return snapshot;
            }
            return null;
        }
    }
}
