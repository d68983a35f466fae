package io.tenure.server.raft;

import io.tenure.core.TenureState;
import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.Command;
import io.tenure.core.kernel.LeaderClockCommand;
import io.tenure.core.kernel.LeaseResult;
import io.tenure.core.kernel.LeaseView;
import io.tenure.core.kernel.Result;
import io.tenure.core.lease.LeaseDeadlines;
import io.tenure.core.lock.LockTable;
import io.tenure.core.member.MemberEndpoints;
import io.tenure.server.metrics.ServerMetrics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * Tenure's replicated state machine, whatever Raft library carries the log: applies committed
 * entries to the pure {@link TenureState}, writes and loads its snapshots, and tells the server
 * about leadership. The Raft adapter ({@link RatisStateMachine}) calls it on the library's apply
 * thread.
 *
 * <p>Apply is deterministic and never throws for a business error (those are {@link Result}s);
 * it throws only for an entry it cannot read, which stops the member rather than let it diverge.
 * Reads from other threads go through {@link #read(Function)}, guarded against apply.
 *
 * <p>Outside the replicated state, every member records in {@link LeaseDeadlines} the monotonic
 * time at which it applied each lease's grant or renewal; the leader's expiry loop reads it.
 */
public final class TenureStateMachine {
    private static final Logger LOG = LoggerFactory.getLogger(TenureStateMachine.class);

    /** What the server does with applied entries and leadership changes; called on the apply thread. */
    public interface Listener {
        void applied(Entry entry, long index, List<Applied> results);

        /** This member became a ready leader ({@code true}) or stopped leading ({@code false}). */
        void leadership(boolean ready);

        /** The Raft server shut down (closed by request, or on a fatal error such as a long pause). */
        void shutdown();

        /** The Raft log could not be written (a failed fsync, a full disk, a damaged log): the member must stop. */
        void logFailed(Throwable cause);

        /** The state was replaced by a snapshot installed from the leader, up to {@code index}. */
        void reloaded(long index);
    }

    /** A place in the Raft log: the term and index of an entry. */
    public record LogPosition(long term, long index) {
    }

    /** Set once at start-up, before the first apply. */
    private volatile ServerMetrics metrics;
    private final ReentrantReadWriteLock guard = new ReentrantReadWriteLock();
    private final LeaseDeadlines deadlines = new LeaseDeadlines();
    private final LongSupplier nanoClock;
    private final int eventLogCapacity;
    private volatile TenureState state;
    /** The last entry applied (or covered by the loaded snapshot); null before any. */
    private volatile LogPosition applied;
    /** The state's revision after the latest applied entry, for response headers without a lock. */
    private volatile long revision;
    /** The name of the leader the Raft library last named, or null. */
    private volatile String leader;
    /** That leader's client endpoint as announced in the state, or "": for response headers without a lock. */
    private volatile String leaderEndpoint = "";
    /** Whether authentication is on in the applied state: read on every call's permission check without the lock. */
    private volatile boolean accessEnabled;
    /** Counts the applied changes of users, roles, tokens and the switch (and snapshot loads): checks cache what they read until it moves. */
    private volatile long accessVersion;
    private volatile Listener listener;
    /** The safety suite's record of what this member applied; null (the default) when off. */
    private volatile AuditLog audit;
    /** Reads waiting for this member to apply an index ({@link #whenApplied}): index → waiters. Guarded by itself. */
    private final java.util.TreeMap<Long, List<java.util.concurrent.CompletableFuture<Void>>> appliedWaits = new java.util.TreeMap<>();
    /** Whether {@link #appliedWaits} may hold a waiter: read on every apply without the lock. */
    private volatile boolean anyAppliedWait;

    public TenureStateMachine(LongSupplier nanoClock, int eventLogCapacity) {
        this.nanoClock = nanoClock;
        this.eventLogCapacity = eventLogCapacity;
        this.state = new TenureState(eventLogCapacity);
    }

    public void setListener(Listener listener) {
        this.listener = listener;
    }

    /** Turns the audit log on (a test aid); set before the Raft server starts, so that it sees every apply. */
    public void setAuditLog(AuditLog audit) {
        this.audit = audit;
    }

    /** Where apply, snapshot and leader-change figures go; set once at start-up. */
    public void setMetrics(ServerMetrics metrics) {
        this.metrics = metrics;
    }

    ServerMetrics metrics() {
        return metrics;
    }

    AuditLog audit() {
        return audit;
    }

    /** Runs {@code reader} against the applied state, excluding apply while it runs. */
    public <T> T read(Function<TenureState, T> reader) {
        guard.readLock().lock();
        try {
            return reader.apply(state);
        } finally {
            guard.readLock().unlock();
        }
    }

    /**
     * A number that changes whenever users, roles, tokens or the switch change here (an access
     * command applied, a snapshot loaded): what a check read from them holds while it stays put.
     */
    public long accessVersion() {
        return accessVersion;
    }

    /** Whether authentication is on, as last applied here (without the lock: for the checks on every call). */
    public boolean accessEnabled() {
        return accessEnabled;
    }

    /** The store revision after the latest applied entry (or loaded snapshot). */
    public long revision() {
        return revision;
    }

    /** The last entry applied here, or covered by the snapshot loaded; null before any. */
    public LogPosition applied() {
        return applied;
    }

    /** The index of {@link #applied()}, or -1 before any. */
    public long appliedIndex() {
        LogPosition a = applied;
        return a == null ? -1 : a.index();
    }

    /**
     * Completes once this member has applied {@code index} (or loaded a snapshot covering it): at
     * once when it has, otherwise on the apply thread right after that entry's results were handed
     * out, so whatever completes it must be quick.
     */
    public java.util.concurrent.CompletableFuture<Void> whenApplied(long index) {
        if (appliedIndex() >= index) {
            return java.util.concurrent.CompletableFuture.completedFuture(null);
        }
        java.util.concurrent.CompletableFuture<Void> waiter = new java.util.concurrent.CompletableFuture<>();
        synchronized (appliedWaits) {
            appliedWaits.computeIfAbsent(index, i -> new ArrayList<>(2)).add(waiter);
            anyAppliedWait = true;
        }
        // Apply may have passed the index between the check above and the flag: look again.
        releaseAppliedWaits();
        return waiter;
    }

    /** Completes the waiters of every index applied so far. */
    private void releaseAppliedWaits() {
        if (!anyAppliedWait) {
            return;
        }
        long through = appliedIndex();
        List<java.util.concurrent.CompletableFuture<Void>> ready = new ArrayList<>();
        synchronized (appliedWaits) {
            java.util.SortedMap<Long, List<java.util.concurrent.CompletableFuture<Void>>> done = appliedWaits.headMap(through + 1);
            done.values().forEach(ready::addAll);
            done.clear();
            anyAppliedWait = !appliedWaits.isEmpty();
        }
        ready.forEach(waiter -> waiter.complete(null));
    }

    /**
     * The client endpoint of the leader this member knows, as the leader announced it in the
     * state; "" while there is no leader or it has not announced one. Kept current when the
     * leader changes and when an entry or a snapshot is applied, so answers read it without a lock.
     */
    public String leaderEndpoint() {
        return leaderEndpoint;
    }

    /** Caller holds the guard (either lock); the state's map is read, written only if it changed. */
    private void updateLeaderEndpoint() {
        String known = leader;
        TenureState current = state;
        String endpoint = known == null || current == null ? ""
                : current.primitive(MemberEndpoints.class).endpoints().getOrDefault(known, "");
        if (!endpoint.equals(leaderEndpoint)) {
            leaderEndpoint = endpoint;
        }
    }

    /** The lease deadlines of this member; callers synchronize on the returned object. */
    public LeaseDeadlines deadlines() {
        return deadlines;
    }

    /**
     * Applies the Tenure entry committed at {@code index} in {@code term}; an index at or below the
     * last applied one is skipped (a replay). Throws {@link IllegalStateException} for an entry it
     * cannot read: the Raft library then stops the member, which is what we want.
     */
    public void apply(long term, long index, byte[] data) {
        LogPosition last = applied;
        if (last != null && index <= last.index()) {
            return;
        }
        Entry entry;
        try {
            entry = EntryCodec.decode(data);
        } catch (IOException e) {
            LOG.error("event=apply_failed index={} reason=\"{}\": this member stops instead of diverging", index, e.getMessage());
            throw new IllegalStateException("cannot apply log entry " + index + ": " + e.getMessage(), e);
        }
        List<Command> commands = entry.commands();
        List<Applied> results = new ArrayList<>(commands.size());
        long applyStarted = System.nanoTime();
        guard.writeLock().lock();
        try {
            for (int slot = 0; slot < commands.size(); slot++) {
                Command command = commands.get(slot);
                if (skippedByTerm(command, entry, term)) {
                    // Proposed by a leader of an earlier term and carried into this one: its view of
                    // the lease's deadline is not this term's leader's.
                    results.add(new Applied(new Result.Skipped("expiry proposed in term " + entry.proposerTerm()
                            + " committed in term " + term), List.of()));
                    continue;
                }
                results.add(state.apply(Entry.position(index, slot), command));
                if (command instanceof io.tenure.core.access.AccessCommand) {
                    accessVersion++;
                    accessEnabled = state.primitive(io.tenure.core.access.AccessTable.class).enabled();
                }
            }
            applied = new LogPosition(term, index);
            revision = state.revision();
            updateLeaderEndpoint();
            recordLeaseTimes(index, results);
        } finally {
            guard.writeLock().unlock();
        }
        ServerMetrics m = metrics;
        if (m != null) {
            m.applied(System.nanoTime() - applyStarted);
        }
        AuditLog a = audit;
        if (a != null) {
            for (int slot = 0; slot < commands.size(); slot++) {
                a.applied(index, term, slot, commands.size(), commands.get(slot), results.get(slot),
                        skippedByTerm(commands.get(slot), entry, term));
            }
            auditDigest(a, index, term);
        }
        Listener l = listener;
        if (l != null) {
            l.applied(entry, index, results);
        }
        releaseAppliedWaits();
    }

    /** An entry of the Raft library's own (a configuration or a no-op): nothing of Tenure's, but the audit log covers every index. */
    public void indexApplied(long term, long index) {
        LogPosition last = applied;
        if (last == null || index > last.index()) {
            applied = new LogPosition(term, index);
        }
        AuditLog a = audit;
        if (a != null) {
            a.indexApplied(index, term);
            auditDigest(a, index, term);
        }
        releaseAppliedWaits();
    }

    /**
     * A command proposed from a leader's clock (an expiry) by a leader of an earlier term and
     * carried into this one: its view of the deadline is not this term's leader's, so it is not applied.
     */
    private static boolean skippedByTerm(Command command, Entry entry, long term) {
        return command instanceof LeaderClockCommand && entry.proposerTerm() != term;
    }

    /** Every {@link AuditLog#DIGEST_EVERY} indexes, the state's digest, so replicas can be compared at one index. */
    private void auditDigest(AuditLog a, long index, long term) {
        if (index % AuditLog.DIGEST_EVERY == 0) {
            guard.readLock().lock();
            try {
                a.digest(index, term, state);
            } finally {
                guard.readLock().unlock();
            }
        }
    }

    /** Called under the write lock: the time at which this member applied grants and renewals. */
    private void recordLeaseTimes(long index, List<Applied> results) {
        long now = nanoClock.getAsLong();
        synchronized (deadlines) {
            for (int slot = 0; slot < results.size(); slot++) {
                Result r = results.get(slot).result();
                if (r instanceof LeaseResult.LeasesRenewed renewed) {
                    long position = Entry.position(index, slot);
                    for (int i = 0; i < renewed.leaseIds().length; i++) {
                        if (renewed.ttlMillis()[i] > 0) {
                            deadlines.renewed(renewed.leaseIds()[i], renewed.ttlMillis()[i], position, now);
                        }
                    }
                } else if (r instanceof LeaseResult.LeaseGranted granted) {
                    deadlines.renewed(granted.leaseId(), granted.ttlMillis(), state.renewedAt(granted.leaseId()), now);
                } else if (r instanceof LeaseResult.LeaseEnded ended) {
                    deadlines.ended(ended.leaseId());
                }
            }
        }
    }

    /**
     * Writes the applied state to {@code out}, with no entry applied meanwhile, and returns the
     * position it covers (null when nothing was applied yet: the state is then the empty one).
     * Every index the snapshot covers is in the audit file first: a member killed later and
     * restarted from the snapshot cannot leave those indexes unlogged.
     */
    public LogPosition writeSnapshot(OutputStream out) throws IOException {
        AuditLog a = audit;
        if (a != null) {
            a.flush();
        }
        guard.readLock().lock();
        try {
            state.writeSnapshot(out);
            return applied;
        } finally {
            guard.readLock().unlock();
        }
    }

    /**
     * Replaces the state with the snapshot in {@code in}, which covers the log up to {@code term}
     * and {@code index}. {@code cause} says why (loaded at start, installed from the leader) in the
     * audit log. Leases restart their countdown now: no member knows when they were last renewed.
     */
    public void loadSnapshot(InputStream in, long term, long index, String cause) throws IOException {
        TenureState loaded = TenureState.readSnapshot(in, eventLogCapacity);
        long now = nanoClock.getAsLong();
        guard.writeLock().lock();
        try {
            state = loaded;
            revision = loaded.revision();
            applied = new LogPosition(term, index);
            updateLeaderEndpoint();
            accessEnabled = loaded.primitive(io.tenure.core.access.AccessTable.class).enabled();
            accessVersion++;
            synchronized (deadlines) {
                for (LeaseView lease : loaded.leases()) {
                    deadlines.renewed(lease.leaseId(), lease.ttlMillis(), lease.renewedAt(), now);
                }
            }
        } finally {
            guard.writeLock().unlock();
        }
        AuditLog a = audit;
        if (a != null) {
            a.snapshot(index, term, cause);
        }
        releaseAppliedWaits();
        LOG.info("event=snapshot_loaded index={} leases={} locks={}", index, loaded.leaseCount(),
                loaded.primitive(LockTable.class).lockCount());
    }

    /** The state was replaced by a snapshot installed from the leader: the server learns it. */
    public void reloaded() {
        Listener l = listener;
        LogPosition last = applied;
        if (l != null && last != null) {
            l.reloaded(last.index());
        }
    }

    /** Leases this member has no deadline for start counting now (a new leader's rule, RATIS.md). */
    private void countUnknownLeasesFromNow() {
        long now = nanoClock.getAsLong();
        List<LeaseView> leases = read(TenureState::leases);
        synchronized (deadlines) {
            for (LeaseView lease : leases) {
                if (!deadlines.knows(lease.leaseId())) {
                    deadlines.renewed(lease.leaseId(), lease.ttlMillis(), lease.renewedAt(), now);
                }
            }
        }
    }

    /** This member leads and has applied an entry of its term. */
    public void leaderReady() {
        countUnknownLeasesFromNow();
        Listener l = listener;
        if (l != null) {
            l.leadership(true);
        }
    }

    /** This member stopped leading. */
    public void notLeader() {
        Listener l = listener;
        if (l != null) {
            l.leadership(false);
        }
    }

    /** The Raft library names {@code newLeader} (null: none known) as leader; {@code self} when it is this member. */
    public void leaderChanged(String newLeader, boolean self) {
        leader = newLeader;
        guard.readLock().lock();
        try {
            updateLeaderEndpoint();
        } finally {
            guard.readLock().unlock();
        }
        ServerMetrics m = metrics;
        if (m != null) {
            m.leaderChanged();
        }
        if (!self) {
            notLeader();
        }
    }

    /** The log could not be written at {@code index} (-1 when unknown): the member must stop. */
    public void logFailed(Throwable cause, long index) {
        LOG.error("event=log_failed index={} reason=\"{}\"", index, String.valueOf(cause));
        Listener l = listener;
        if (l != null) {
            l.logFailed(cause);
        }
    }

    /** The Raft server shut down. */
    public void serverShutdown() {
        Listener l = listener;
        if (l != null) {
            l.shutdown();
        }
    }
}
