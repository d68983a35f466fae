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
import io.tenure.server.counter.Counters;
import io.tenure.server.kv.KeyValues;
import io.tenure.server.latch.Latches;
import io.tenure.server.list.Lists;
import io.tenure.server.signal.Signals;
import io.tenure.server.election.Elections;
import io.tenure.server.semaphore.Semaphores;
import io.tenure.server.raft.Entry;
import io.tenure.server.raft.Proposer;
import io.tenure.server.raft.Raft;
import io.tenure.server.raft.TenureStateMachine;
import io.tenure.server.watch.WatchHub;
import io.tenure.core.kernel.Result;
import io.tenure.server.metrics.ServerMetrics;

import java.io.IOException;
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
    private final Raft raft;
    private final TenureStateMachine stateMachine;
    private final Proposer proposer;
    private final LeaseKeeper leases;
    private final Locks locks;
    private final Semaphores semaphores;
    private final io.tenure.server.scope.Scopes scopes;
    private final Elections elections;
    private final Barriers barriers;
    private final DoubleBarriers doubleBarriers;
    private final Latches latches;
    private final Counters counters;
    private final Lists lists;
    private final Signals signals;
    private final KeyValues keyValues;
    private final Waits waits;
    private final Admission admission;
    private final WatchHub watches;
    private final long clusterId;
    private final long memberId;
    private final Runnable onRaftShutdown;
    private final java.util.function.Consumer<Throwable> onLogFailure;
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(Member.class);
    private volatile boolean announcing;
    /** How long an announcement of this member's endpoint may go unanswered before it is made again. */
    private static final long ANNOUNCE_TIMEOUT_MS = 5_000;
    private volatile int clientPort;
    private final ServerMetrics metrics;
    private final io.tenure.server.security.Permissions permissions;
    private volatile boolean draining;
    private final RequestRateGuard rateGuard;
    private final io.tenure.server.security.UserRates userRates;

    Member(ServerConfig config, Raft raft, TenureStateMachine stateMachine,
           Proposer proposer, Admission admission, LeaseKeeper leases, Waits waits, Locks locks, Semaphores semaphores, io.tenure.server.scope.Scopes scopes, Elections elections, Barriers barriers, DoubleBarriers doubleBarriers, Latches latches, Counters counters, Lists lists, KeyValues keyValues, Signals signals, WatchHub watches, ServerMetrics metrics, io.tenure.server.security.Permissions permissions, long clusterId,
           Runnable onRaftShutdown,
           java.util.function.Consumer<Throwable> onLogFailure) {
        this.config = config;
        this.raft = raft;
        this.stateMachine = stateMachine;
        this.proposer = proposer;
        this.leases = leases;
        this.locks = locks;
        this.semaphores = semaphores;
        this.scopes = scopes;
        this.elections = elections;
        this.barriers = barriers;
        this.doubleBarriers = doubleBarriers;
        this.latches = latches;
        this.counters = counters;
        this.lists = lists;
        this.keyValues = keyValues;
        this.signals = signals;
        this.waits = waits;
        this.admission = admission;
        this.watches = watches;
        this.metrics = metrics;
        this.permissions = permissions;
        this.rateGuard = new RequestRateGuard(config.limits().maxRequestsPerSecond(), System::nanoTime);
        this.userRates = new io.tenure.server.security.UserRates(config.limits().maxRequestsPerUser(), stateMachine, System::nanoTime);
        this.clusterId = clusterId;
        this.memberId = MemberInfo.idOf(config.memberName());
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

    /** The per-user request quota, checked where each front end knows a request's principal. */
    public io.tenure.server.security.UserRates userRates() {
        return userRates;
    }

    /** What each principal may do: the services' checks, and views that leave out what may not be read. */
    public io.tenure.server.security.Permissions permissions() {
        return permissions;
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

    /** Lock scopes: sets of inodes, paths and byte ranges. */
    public io.tenure.server.scope.Scopes scopes() {
        return scopes;
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

    public Counters counters() {
        return counters;
    }

    public Lists lists() {
        return lists;
    }

    public Signals signals() {
        return signals;
    }

    /** The key-value store's operations. */
    public KeyValues keyValues() {
        return keyValues;
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
        return raft.term();
    }

    /** The commit index this member knows, or -1 when its Raft server is not running or its log not open. */
    public long commitIndex() {
        return raft.commitIndex();
    }

    /** The first index still in this member's Raft log (earlier entries were purged after a snapshot). */
    long logStartIndex() {
        return raft.logStartIndex();
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
        String leader = raft.leaderName();
        Map<String, String> endpoints = stateMachine.read(s -> new java.util.TreeMap<>(s.primitive(MemberEndpoints.class).endpoints()));
        List<io.tenure.proto.v1.Member> members = new ArrayList<>();
        for (Raft.Peer peer : raft.peers()) {
            String name = peer.name();
            members.add(io.tenure.proto.v1.Member.newBuilder()
                    .setName(name)
                    .setId(MemberInfo.idOf(name))
                    .setPeerAddress(peer.address())
                    .setClientEndpoint(endpoints.getOrDefault(name, name.equals(config.memberName()) ? clientEndpoint() : ""))
                    .setLeader(name.equals(leader))
                    .build());
        }
        members.sort(java.util.Comparator.comparing(io.tenure.proto.v1.Member::getName));
        return members;
    }

    /** The Status answer: who leads (name and client endpoint), the term, and how far this member has applied. */
    public StatusResponse status(ResponseHeader header) {
        // 0 while the member loads its snapshot and log (see logOpen)
        long committed = Math.max(0, raft.commitIndex());
        List<io.tenure.proto.v1.Member> members = members();
        StatusResponse.Builder status = StatusResponse.newBuilder()
                .setHeader(header)
                .setClusterId(clusterId)
                .setMemberId(memberId)
                .setMemberName(config.memberName())
                .setRaftTerm(raft.term())
                .setRevision(revision())
                .setAppliedIndex(Math.max(0, stateMachine.appliedIndex()))
                .setCommitIndex(committed)
                .setVersion(VERSION)
                .setRaftEngine(config.raftEngine().flag())
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
     * its log (seconds with a large state), when the Raft library refuses to say anything about it.
     */
    public boolean logOpen() {
        return raft.logOpen();
    }

    /**
     * Announces this member's client endpoint through the log until the replicated state shows it,
     * so every member can name it (in answer headers too, once it leads); re-checked every 200 ms,
     * which also covers a changed endpoint. A check is a read of the applied state; a member
     * proposes only while the state does not show its endpoint, once a leader is known.
     */
    void startAnnouncing(ScheduledExecutorService timer) {
        timer.scheduleWithFixedDelay(() -> {
            try {
                String mine = clientEndpoint();
                String known = stateMachine.read(s -> s.primitive(MemberEndpoints.class).endpoints().get(config.memberName()));
                if (!mine.equals(known) && raft.leaderName() != null && !announcing) {
                    announcing = true;
                    // An answer that never comes (a proposal lost with a leader) must not end the
                    // announcing: after ANNOUNCE_TIMEOUT it is tried again, and it is idempotent.
                    proposer.propose(new MemberEndpoint(config.memberName(), mine))
                            .orTimeout(ANNOUNCE_TIMEOUT_MS, TimeUnit.MILLISECONDS)
                            .whenComplete((applied, error) -> announcing = false);
                }
            } catch (RuntimeException e) {
                announcing = false;
                LOG.debug("event=announce_failed reason=\"{}\"", e.toString());
            }
        }, 0, 200, TimeUnit.MILLISECONDS);
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
        List<Raft.Peer> current = new ArrayList<>(raft.peers());
        for (Raft.Peer peer : current) {
            if (peer.name().equals(name)) {
                throw new RequestRejected(Result.Code.ALREADY_EXISTS, "name", "member '" + name + "' already exists");
            }
            if (peerAddress.equals(peer.address())) {
                throw new RequestRejected(Result.Code.ALREADY_EXISTS, "peer_address",
                        "peer address " + peerAddress + " is already member '" + peer.name() + "''s");
            }
        }
        current.add(new Raft.Peer(name, peerAddress));
        changeConfiguration(current, "add member '" + name + "'");
        return members();
    }

    /** Removes a member through a Raft configuration change. Blocking: call it off the request threads. */
    public List<io.tenure.proto.v1.Member> removeMember(String name) throws IOException {
        List<Raft.Peer> current = new ArrayList<>(raft.peers());
        boolean removed = current.removeIf(peer -> peer.name().equals(name));
        if (!removed) {
            throw new RequestRejected(Result.Code.NOT_FOUND, "name", "member '" + name + "' is not a member");
        }
        if (current.isEmpty()) {
            throw new RequestRejected(Result.Code.FAILED_PRECONDITION, "name",
                    "member '" + name + "' is the last voting member; a cluster cannot remove all its members");
        }
        if (name.equals(raft.leaderName())) {
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
    private void handOverLeadership(String leaving, List<Raft.Peer> staying) {
        long timeoutMs = 2 * config.electionTimeout().toMillis();
        for (Raft.Peer successor : staying) {
            try {
                if (raft.transferLeadership(successor.name(), timeoutMs)) {
                    LOG.info("event=leadership_transferred from={} to={} reason=\"the leader is being removed\"", leaving, successor.name());
                    return;
                }
            } catch (IOException | RuntimeException e) {
                LOG.debug("leadership to {} before removing {} failed: {}", successor.name(), leaving, e.toString());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        LOG.warn("event=leadership_transfer_failed member={} reason=\"no remaining member took over; removing the leader anyway\"", leaving);
    }

    private void changeConfiguration(List<Raft.Peer> peers, String what) throws IOException {
        try {
            raft.changePeers(peers);
        } catch (NotServingException e) {
            throw new NotServingException("could not " + what + ": " + e.getMessage(), e);
        }
        LOG.info("event=membership_changed change=\"{}\" members={}", what, peers.stream().map(Raft.Peer::name).toList());
    }

    /** Whether the Raft server runs (not failed, not closed). */
    public boolean alive() {
        return raft.alive();
    }

    /** Whether this member is the leader and has applied an entry of its term. */
    public boolean leaderReady() {
        return raft.leaderReady();
    }

    /**
     * Hands out what an applied entry produced, slot by slot: the command's result to its caller
     * (when this member proposed it), then its effects to the parked calls they wake. So a call
     * that a command parks is parked before a later command of the entry can wake it.
     */
    @Override
    public void applied(Entry entry, long index, List<Applied> results) {
        keyValues.expiry().applied(entry, results);
        AnswerBatch.run(() -> answer(entry, index, results));
        watches.applied(results);
        signals.applied(results);
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
        keyValues.expiry().leadership(ready);
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
