package io.tenure.server;

import io.tenure.core.kernel.LeaseResult;
import io.tenure.core.member.MemberEndpoint;
import io.tenure.core.member.MemberEndpoints;
import io.tenure.core.kernel.Applied;
import io.tenure.proto.v1.ResponseHeader;
import io.tenure.proto.v1.StatusResponse;
import io.tenure.server.lease.LeaseKeeper;
import io.tenure.server.lock.Locks;
import io.tenure.server.barrier.Barriers;
import io.tenure.server.barrier.DoubleBarriers;
import io.tenure.server.latch.Latches;
import io.tenure.server.election.Elections;
import io.tenure.server.semaphore.Semaphores;
import io.tenure.server.raft.Entry;
import io.tenure.server.raft.Proposer;
import io.tenure.server.raft.TenureStateMachine;
import io.tenure.server.watch.WatchHub;
import io.tenure.core.kernel.Result;
import io.tenure.server.metrics.ServerMetrics;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

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
    private final Semaphores semaphores;
    private final Elections elections;
    private final Barriers barriers;
    private final DoubleBarriers doubleBarriers;
    private final Latches latches;
    private final Waits waits;
    private final Admission admission;
    private final WatchHub watches;
    private final long clusterId;
    private final long memberId;
    private final RaftClient admin;
    private final Runnable onRaftShutdown;
    private final java.util.function.Consumer<Throwable> onLogFailure;
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(Member.class);
    private volatile boolean announcing;
    private volatile int clientPort;
    private final ServerMetrics metrics;
    private volatile boolean draining;
    private final RequestRateGuard rateGuard;

    Member(ServerConfig config, RaftServer raft, RaftGroupId groupId, TenureStateMachine stateMachine,
           Proposer proposer, Admission admission, LeaseKeeper leases, Waits waits, Locks locks, Semaphores semaphores, Elections elections, Barriers barriers, DoubleBarriers doubleBarriers, Latches latches, WatchHub watches, ServerMetrics metrics, long clusterId,
           RaftClient admin, Runnable onRaftShutdown,
           java.util.function.Consumer<Throwable> onLogFailure) {
        this.config = config;
        this.raft = raft;
        this.groupId = groupId;
        this.stateMachine = stateMachine;
        this.proposer = proposer;
        this.leases = leases;
        this.locks = locks;
        this.semaphores = semaphores;
        this.elections = elections;
        this.barriers = barriers;
        this.doubleBarriers = doubleBarriers;
        this.latches = latches;
        this.waits = waits;
        this.admission = admission;
        this.watches = watches;
        this.metrics = metrics;
        this.rateGuard = new RequestRateGuard(config.limits().maxRequestsPerSecond(), System::nanoTime);
        this.clusterId = clusterId;
        this.memberId = MemberInfo.idOf(config.memberName());
        this.admin = admin;
        this.onRaftShutdown = onRaftShutdown;
        this.onLogFailure = onLogFailure;
    }

    /**
     * True once a graceful shutdown began: the member still answers what is in flight, but
     * {@code /readyz} reports 503 and new work should go to another member.
     */
    public boolean draining() {
        return draining;
    }

    public void startDraining() {
        draining = true;
    }

    /** The member-wide request-rate guard both front ends take from. */
    public RequestRateGuard rateGuard() {
        return rateGuard;
    }

    public ServerMetrics metrics() {
        return metrics;
    }

    public Locks locks() {
        return locks;
    }

    public Semaphores semaphores() {
        return semaphores;
    }

    public Elections elections() {
        return elections;
    }

    public Barriers barriers() {
        return barriers;
    }

    public DoubleBarriers doubleBarriers() {
        return doubleBarriers;
    }

    public Latches latches() {
        return latches;
    }

    /** Whether the member takes new work now (it sheds it with a retry hint while it is behind). */
    public Admission admission() {
        return admission;
    }

    /** The calls parked on this member until the log decides them (lock waits today). */
    public Waits waits() {
        return waits;
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

    /** The header of every gRPC answer: the cluster, this member, its revision and term, and its leader's client endpoint. */
    public ResponseHeader header() {
        return ResponseHeader.newBuilder()
                .setClusterId(clusterId)
                .setMemberId(memberId)
                .setRevision(revision())
                .setRaftTerm(term())
                .setLeaderEndpoint(stateMachine.leaderEndpoint())
                .build();
    }

    /** This member's name (its {@code --id}). */
    public String memberName() {
        return config.memberName();
    }

    public long memberId() {
        return memberId;
    }

    /** The store revision after the latest applied entry. */
    public long revision() {
        return stateMachine.revision();
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

    /** The commit index this member knows, or -1 when its division is not running. */
    public long commitIndex() {
        try {
            return division().getRaftLog().getLastCommittedIndex();
        } catch (UncheckedIOException e) {
            return -1;
        }
    }

    /** The first index still in this member's Raft log (earlier entries were purged after a snapshot). */
    long logStartIndex() {
        return division().getRaftLog().getStartIndex();
    }

    private RaftServer.Division division() {
        try {
            return raft.getDivision(groupId);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** This member's client endpoint, as it announces it to the others. */
    public String clientEndpoint() {
        return config.host() + ":" + clientPort;
    }

    /**
     * Completes once this member has applied everything committed before it was called: reads of
     * the applied state after it are linearizable ({@link Proposer#readBarrier()}).
     */
    public CompletableFuture<Void> readBarrier() {
        return proposer.readBarrier();
    }

    /** The current members, each with its client endpoint (when announced) and whether it leads. */
    public List<io.tenure.proto.v1.Member> members() {
        RaftServer.Division division = division();
        RaftPeerId leader = division.getInfo().getLeaderId();
        Map<String, String> endpoints = stateMachine.read(s -> new java.util.TreeMap<>(s.primitive(MemberEndpoints.class).endpoints()));
        List<io.tenure.proto.v1.Member> members = new ArrayList<>();
        for (RaftPeer peer : division.getGroup().getPeers()) {
            String name = peer.getId().toString();
            members.add(io.tenure.proto.v1.Member.newBuilder()
                    .setName(name)
                    .setId(MemberInfo.idOf(name))
                    .setPeerAddress(peer.getAddress() == null ? "" : peer.getAddress())
                    .setClientEndpoint(endpoints.getOrDefault(name, name.equals(config.memberName()) ? clientEndpoint() : ""))
                    .setLeader(peer.getId().equals(leader))
                    .build());
        }
        members.sort(java.util.Comparator.comparing(io.tenure.proto.v1.Member::getName));
        return members;
    }

    /** The Status answer: who leads (name and client endpoint), the term, and how far this member has applied. */
    public StatusResponse status(ResponseHeader header) {
        RaftServer.Division division = division();
        TermIndex applied = stateMachine.getLastAppliedTermIndex();
        long committed;
        try {
            committed = division.getRaftLog().getLastCommittedIndex();
        } catch (IllegalStateException stillOpening) {
            committed = 0; // the member is loading its snapshot and log (see logOpen)
        }
        List<io.tenure.proto.v1.Member> members = members();
        StatusResponse.Builder status = StatusResponse.newBuilder()
                .setHeader(header)
                .setClusterId(clusterId)
                .setMemberId(memberId)
                .setMemberName(config.memberName())
                .setRaftTerm(division.getInfo().getCurrentTerm())
                .setRevision(revision())
                .setAppliedIndex(applied == null ? 0 : applied.getIndex())
                .setCommitIndex(committed)
                .setVersion(VERSION)
                .addAllMembers(members);
        for (io.tenure.proto.v1.Member m : members) {
            if (m.getLeader()) {
                status.setLeader(m.getName()).setLeaderEndpoint(m.getClientEndpoint());
            }
        }
        return status.build();
    }

    /**
     * Whether the Raft log is open: false while a starting member loads its snapshot and reads
     * its log (seconds with a large state), when Ratis refuses to say anything about it.
     */
    public boolean logOpen() {
        try {
            division().getRaftLog();
            return true;
        } catch (IllegalStateException stillOpening) {
            return false;
        }
    }

    /**
     * Announces this member's client endpoint through the log until the replicated state shows it,
     * so every member can name it; re-checked every second, which also covers a changed endpoint.
     */
    void startAnnouncing(ScheduledExecutorService timer) {
        timer.scheduleWithFixedDelay(() -> {
            try {
                String mine = clientEndpoint();
                String known = stateMachine.read(s -> s.primitive(MemberEndpoints.class).endpoints().get(config.memberName()));
                if (!mine.equals(known) && division().getInfo().getLeaderId() != null && !announcing) {
                    announcing = true;
                    proposer.propose(new MemberEndpoint(config.memberName(), mine))
                            .whenComplete((applied, error) -> announcing = false);
                }
            } catch (RuntimeException e) {
                LOG.debug("event=announce_failed reason=\"{}\"", e.toString());
            }
        }, 0, 1, TimeUnit.SECONDS);
    }

    /**
     * Adds a voting member through a Raft configuration change; the leader brings it up to date
     * before it counts. Blocking: call it off the request threads.
     */
    public List<io.tenure.proto.v1.Member> addMember(String name, String peerAddress) throws IOException {
        if (name == null || !name.matches("[A-Za-z0-9][A-Za-z0-9_.-]{0,62}")) {
            throw RequestRejected.invalid("name", "name must be 1-63 letters, digits, '_', '.' or '-', starting with a letter or digit");
        }
        if (peerAddress == null || !peerAddress.matches("[^\\s:]+:\\d{1,5}")) {
            throw RequestRejected.invalid("peer_address", "peer_address must be host:port, got '" + peerAddress + "'");
        }
        List<RaftPeer> current = new ArrayList<>(division().getGroup().getPeers());
        for (RaftPeer peer : current) {
            if (peer.getId().toString().equals(name)) {
                throw new RequestRejected(Result.Code.ALREADY_EXISTS, "name", "member '" + name + "' already exists");
            }
            if (peerAddress.equals(peer.getAddress())) {
                throw new RequestRejected(Result.Code.ALREADY_EXISTS, "peer_address",
                        "peer address " + peerAddress + " is already member '" + peer.getId() + "''s");
            }
        }
        current.add(RaftPeer.newBuilder().setId(name).setAddress(peerAddress).build());
        changeConfiguration(current, "add member '" + name + "'");
        return members();
    }

    /** Removes a member through a Raft configuration change. Blocking: call it off the request threads. */
    public List<io.tenure.proto.v1.Member> removeMember(String name) throws IOException {
        List<RaftPeer> current = new ArrayList<>(division().getGroup().getPeers());
        boolean removed = current.removeIf(peer -> peer.getId().toString().equals(name));
        if (!removed) {
            throw new RequestRejected(Result.Code.NOT_FOUND, "name", "member '" + name + "' is not a member");
        }
        if (current.isEmpty()) {
            throw new RequestRejected(Result.Code.FAILED_PRECONDITION, "name",
                    "member '" + name + "' is the last voting member; a cluster cannot remove all its members");
        }
        RaftPeerId leader = division().getInfo().getLeaderId();
        if (leader != null && leader.toString().equals(name)) {
            handOverLeadership(name, current);
        }
        changeConfiguration(current, "remove member '" + name + "'");
        return members();
    }

    /**
     * Before the leader is removed, hands leadership to a member that stays. Removed while still
     * leading, the member went on leading, and its graceful shutdown then spent its whole timeout
     * on a leadership transfer it could not make, being out of the configuration; the others named
     * it leader until it was gone (the safety suite's F9 measured 10 s). If the hand-over fails,
     * the removal goes on anyway.
     */
    private void handOverLeadership(String leaving, List<RaftPeer> staying) {
        long timeoutMs = 2 * config.electionTimeout().toMillis();
        for (RaftPeer successor : staying) {
            try {
                RaftClientReply reply = admin.admin().transferLeadership(successor.getId(), timeoutMs);
                if (reply.isSuccess()) {
                    LOG.info("event=leadership_transferred from={} to={} reason=\"the leader is being removed\"", leaving, successor.getId());
                    return;
                }
            } catch (IOException | RuntimeException e) {
                LOG.debug("leadership to {} before removing {} failed: {}", successor.getId(), leaving, e.toString());
            }
        }
        LOG.warn("event=leadership_transfer_failed member={} reason=\"no remaining member took over; removing the leader anyway\"", leaving);
    }

    private void changeConfiguration(List<RaftPeer> peers, String what) throws IOException {
        RaftClientReply reply = admin.admin().setConfiguration(peers);
        if (!reply.isSuccess()) {
            throw new NotServingException("could not " + what + ": "
                    + (reply.getException() == null ? "the configuration change failed" : reply.getException().getMessage()));
        }
        LOG.info("event=membership_changed change=\"{}\" members={}", what,
                peers.stream().map(p -> p.getId().toString()).toList());
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

    /**
     * Hands out what an applied entry produced, slot by slot: the command's result to its caller
     * (when this member proposed it), then its effects to the parked calls they wake. So a call
     * that a command parks is parked before a later command of the entry can wake it.
     */
    @Override
    public void applied(Entry entry, long index, List<Applied> results) {
        AnswerBatch.run(() -> answer(entry, index, results));
        watches.applied(results);
    }

    /** Answers the callers of an entry's commands, slot by slot, and wakes the calls they decided. */
    private void answer(Entry entry, long index, List<Applied> results) {
        List<Proposer.Answer> callers = proposer.callersOf(entry, index);
        for (int slot = 0; slot < results.size(); slot++) {
            Applied applied = results.get(slot);
            if (applied.result() instanceof LeaseResult.LeaseEnded ended && ended.reason() == LeaseResult.EndReason.EXPIRED) {
                metrics.leaseExpired();
            }
            if (callers != null) {
                callers.get(slot).applied(applied);
            }
            if (!applied.effects().isEmpty()) {
                waits.applied(applied.effects());
            }
        }
    }

    @Override
    public void leadership(boolean ready) {
        leases.leadership(ready);
    }

    @Override
    public void reloaded(long index) {
        proposer.reloaded(index);
        // The installed snapshot's entries woke nobody here: the parked calls go back to their
        // clients, which re-send them and find their waits (or their grants) in the new state.
        waits.handBack("this member caught up by installing a snapshot; retry");
        watches.closeAll("this member caught up by installing a snapshot; resume the watch from the revision after the last one received");
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
