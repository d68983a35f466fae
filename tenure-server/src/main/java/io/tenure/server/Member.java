package io.tenure.server;

import io.tenure.core.Applied;
import io.tenure.proto.v1.ResponseHeader;
import io.tenure.proto.v1.StatusResponse;
import io.tenure.server.lease.LeaseKeeper;
import io.tenure.server.lock.Locks;
import io.tenure.server.raft.Entry;
import io.tenure.server.raft.Proposer;
import io.tenure.server.raft.TenureStateMachine;
import io.tenure.server.watch.WatchHub;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;

/**
 * One member's running parts, wired together: the Raft server and state machine, the proposer,
 * and the lock, lease and watch services the front ends call. Routes what apply produces to the
 * parts that wait for it.
 */
public final class Member implements TenureStateMachine.Listener {
    public static final String VERSION = "0.1.0";

    private final ServerConfig config;
    private final RaftServer raft;
    private final RaftGroupId groupId;
    private final TenureStateMachine stateMachine;
    private final Proposer proposer;
    private final LeaseKeeper leases;
    private final Locks locks;
    private final WatchHub watches;
    private final long clusterId;
    private final long memberId;
    private final Runnable onRaftShutdown;
    private final java.util.function.Consumer<Throwable> onLogFailure;
    private volatile long revision;
    private volatile int clientPort;

    Member(ServerConfig config, RaftServer raft, RaftGroupId groupId, TenureStateMachine stateMachine,
           Proposer proposer, LeaseKeeper leases, Locks locks, WatchHub watches, long clusterId, Runnable onRaftShutdown,
           java.util.function.Consumer<Throwable> onLogFailure) {
        this.config = config;
        this.raft = raft;
        this.groupId = groupId;
        this.stateMachine = stateMachine;
        this.proposer = proposer;
        this.leases = leases;
        this.locks = locks;
        this.watches = watches;
        this.clusterId = clusterId;
        this.memberId = MemberInfo.idOf(config.memberName());
        this.onRaftShutdown = onRaftShutdown;
        this.onLogFailure = onLogFailure;
        this.revision = stateMachine.read(s -> s.revision());
    }

    public Locks locks() {
        return locks;
    }

    public LeaseKeeper leases() {
        return leases;
    }

    public WatchHub watches() {
        return watches;
    }

    public TenureStateMachine stateMachine() {
        return stateMachine;
    }

    public long clusterId() {
        return clusterId;
    }

    public long memberId() {
        return memberId;
    }

    /** The store revision after the latest applied entry. */
    public long revision() {
        return revision;
    }

    void setClientPort(int port) {
        this.clientPort = port;
    }

    public long term() {
        try {
            return division().getInfo().getCurrentTerm();
        } catch (UncheckedIOException e) {
            return 0;
        }
    }

    private RaftServer.Division division() {
        try {
            return raft.getDivision(groupId);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The Status answer: who leads, the term, and how far this member has applied. */
    public StatusResponse status(ResponseHeader header) {
        RaftServer.Division division = division();
        RaftPeerId leader = division.getInfo().getLeaderId();
        TermIndex applied = stateMachine.getLastAppliedTermIndex();
        StatusResponse.Builder status = StatusResponse.newBuilder()
                .setHeader(header)
                .setClusterId(clusterId)
                .setMemberId(memberId)
                .setMemberName(config.memberName())
                .setRaftTerm(division.getInfo().getCurrentTerm())
                .setRevision(revision)
                .setAppliedIndex(applied == null ? 0 : applied.getIndex())
                .setCommitIndex(division.getRaftLog().getLastCommittedIndex())
                .setVersion(VERSION);
        if (leader != null) {
            status.setLeader(leader.toString());
            if (leader.toString().equals(config.memberName())) {
                status.setLeaderEndpoint(config.host() + ":" + clientPort);
            }
        }
        for (RaftPeer peer : division.getGroup().getPeers()) {
            io.tenure.proto.v1.Member.Builder m = io.tenure.proto.v1.Member.newBuilder()
                    .setName(peer.getId().toString())
                    .setId(MemberInfo.idOf(peer.getId().toString()))
                    .setPeerAddress(peer.getAddress() == null ? "" : peer.getAddress());
            if (peer.getId().toString().equals(config.memberName())) {
                m.setClientEndpoint(config.host() + ":" + clientPort);
            }
            status.addMembers(m);
        }
        return status.build();
    }

    /** Whether the Raft server and this member's division are running (not failed, not closed). */
    public boolean alive() {
        if (raft.getLifeCycleState().isClosingOrClosed() || raft.getLifeCycleState() == org.apache.ratis.util.LifeCycle.State.EXCEPTION) {
            return false;
        }
        try {
            return division().getInfo().isAlive();
        } catch (UncheckedIOException e) {
            return false;
        }
    }

    /** Whether this member is the leader and has applied an entry of its term. */
    public boolean leaderReady() {
        return division().getInfo().isLeaderReady();
    }

    @Override
    public void applied(Entry entry, long index, List<Applied> results) {
        revision = stateMachine.read(s -> s.revision());
        proposer.applied(entry, results);
        locks.applied(results);
        watches.applied(results);
    }

    @Override
    public void leadership(boolean ready) {
        leases.leadership(ready);
    }

    @Override
    public void logFailed(Throwable cause) {
        onLogFailure.accept(cause);
    }

    @Override
    public void shutdown() {
        onRaftShutdown.run();
    }
}
