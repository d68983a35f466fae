package io.tenure.server.raft;

import io.tenure.core.kernel.LeaseExpire;
import io.tenure.core.kernel.LeaseResult;
import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.Command;
import io.tenure.core.kernel.LeaseView;
import io.tenure.core.kernel.Result;
import io.tenure.core.TenureState;
import io.tenure.core.lock.LockTable;
import io.tenure.core.member.MemberEndpoints;
import io.tenure.server.metrics.ServerMetrics;
import io.tenure.core.lease.LeaseDeadlines;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.RoleInfoProto;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.FileInfo;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.statemachine.impl.SimpleStateMachineStorage;
import org.apache.ratis.statemachine.impl.SingleFileSnapshotInfo;
import org.apache.ratis.util.LifeCycle;
import org.apache.ratis.util.MD5FileUtil;
import org.apache.ratis.io.MD5Hash;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.BufferedInputStream;
import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.regex.Pattern;

/**
 * The Ratis adapter: applies committed entries to the pure {@link TenureState}, writes and loads
 * snapshots, and tells the server about leadership.
 *
 * <p>Apply is deterministic and never throws for a business error (those are {@link Result}s);
 * it throws only for an entry it cannot read, which stops the member rather than let it diverge.
 * Reads from other threads go through {@link #read(Function)}, guarded against apply.
 *
 * <p>Outside the replicated state, every member records in {@link LeaseDeadlines} the monotonic
 * time at which it applied each lease's grant or renewal; the leader's expiry loop reads it.
 */
public final class TenureStateMachine extends BaseStateMachine {
    private static final Logger LOG = LoggerFactory.getLogger(TenureStateMachine.class);
    private static final Pattern SNAPSHOT_FILE = Pattern.compile("snapshot\\.\\d+_\\d+");

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

    private final SimpleStateMachineStorage storage = new SimpleStateMachineStorage();
    /** Set once at start-up, before the first apply. */
    private volatile ServerMetrics metrics;
    private final ReentrantReadWriteLock guard = new ReentrantReadWriteLock();
    private final LeaseDeadlines deadlines = new LeaseDeadlines();
    private final LongSupplier nanoClock;
    private final int eventLogCapacity;
    private volatile TenureState state;
    /** The state's revision after the latest applied entry, for response headers without a lock. */
    private volatile long revision;
    /** The leader Ratis last named, or null. */
    private volatile RaftPeerId leader;
    /** That leader's client endpoint as announced in the state, or "": for response headers without a lock. */
    private volatile String leaderEndpoint = "";
    private volatile Listener listener;
    /** The safety suite's record of what this member applied; null (the default) when off. */
    private volatile AuditLog audit;

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

    /** Runs {@code reader} against the applied state, excluding apply while it runs. */
    public <T> T read(Function<TenureState, T> reader) {
        guard.readLock().lock();
        try {
            return reader.apply(state);
        } finally {
            guard.readLock().unlock();
        }
    }

    /** The store revision after the latest applied entry (or loaded snapshot). */
    public long revision() {
        return revision;
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
        RaftPeerId known = leader;
        TenureState current = state;
        String endpoint = known == null || current == null ? ""
                : current.primitive(MemberEndpoints.class).endpoints().getOrDefault(known.toString(), "");
        if (!endpoint.equals(leaderEndpoint)) {
            leaderEndpoint = endpoint;
        }
    }

    /** The lease deadlines of this member; callers synchronize on the returned object. */
    public LeaseDeadlines deadlines() {
        return deadlines;
    }

    @Override
    public void initialize(RaftServer server, RaftGroupId groupId, RaftStorage raftStorage) throws IOException {
        super.initialize(server, groupId, raftStorage);
        getLifeCycle().startAndTransition(() -> {
            storage.init(raftStorage);
            loadLatestSnapshot("loaded");
        }, IOException.class);
    }

    /**
     * Ratis pauses the state machine before it installs a snapshot from the leader and checks
     * that it did ({@code BaseStateMachine.pause()} does nothing, which stops the member).
     */
    @Override
    public synchronized void pause() {
        getLifeCycle().transition(LifeCycle.State.PAUSING);
        getLifeCycle().transition(LifeCycle.State.PAUSED);
    }

    @Override
    public synchronized void reinitialize() throws IOException {
        // After a snapshot was installed from the leader.
        loadLatestSnapshot("installed");
        if (getLifeCycleState() == LifeCycle.State.PAUSED) {
            getLifeCycle().transition(LifeCycle.State.STARTING);
            getLifeCycle().transition(LifeCycle.State.RUNNING);
        }
        Listener l = listener;
        TermIndex last = getLastAppliedTermIndex();
        if (l != null && last != null) {
            l.reloaded(last.getIndex());
        }
    }

    /**
     * Ratis's read path, which Tenure does not use: its reads pass a barrier through the log
     * ({@code Member.readBarrier}), because Ratis 3.2.2's ReadIndex can be answered by a leader
     * cut off from the majority. Answers nothing.
     */
    @Override
    public CompletableFuture<Message> query(Message request) {
        return CompletableFuture.completedFuture(Message.EMPTY);
    }

    /** Where apply, snapshot and leader-change figures go; set once at start-up. */
    public void setMetrics(ServerMetrics metrics) {
        this.metrics = metrics;
    }

    @Override
    public SimpleStateMachineStorage getStateMachineStorage() {
        return storage;
    }

    @Override
    public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
        LogEntryProto log = trx.getLogEntry();
        long index = log.getIndex();
        TermIndex last = getLastAppliedTermIndex();
        if (last != null && index <= last.getIndex()) {
            return CompletableFuture.completedFuture(Message.EMPTY);
        }
        Entry entry;
        try {
            entry = EntryCodec.decode(log.getStateMachineLogEntry().getLogData().toByteArray());
        } catch (IOException e) {
            LOG.error("event=apply_failed index={} reason=\"{}\": this member stops instead of diverging", index, e.getMessage());
            // Thrown, not returned: Ratis stops a member whose apply throws, which is what we want.
            throw new IllegalStateException("cannot apply log entry " + index + ": " + e.getMessage(), e);
        }
        List<Command> commands = entry.commands();
        List<Applied> results = new ArrayList<>(commands.size());
        long applyStarted = System.nanoTime();
        guard.writeLock().lock();
        try {
            for (int slot = 0; slot < commands.size(); slot++) {
                Command command = commands.get(slot);
                if (skippedByTerm(command, entry, log.getTerm())) {
                    // Proposed by a leader of an earlier term and carried into this one: its view of
                    // the lease's deadline is not this term's leader's.
                    results.add(new Applied(new Result.Skipped("expiry proposed in term " + entry.proposerTerm()
                            + " committed in term " + log.getTerm()), List.of()));
                    continue;
                }
                results.add(state.apply(Entry.position(index, slot), command));
            }
            updateLastAppliedTermIndex(log.getTerm(), index);
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
                a.applied(index, log.getTerm(), slot, commands.size(), commands.get(slot), results.get(slot),
                        skippedByTerm(commands.get(slot), entry, log.getTerm()));
            }
            auditDigest(a, index, log.getTerm());
        }
        Listener l = listener;
        if (l != null) {
            l.applied(entry, index, results);
        }
        return CompletableFuture.completedFuture(Message.EMPTY);
    }

    /**
     * A lease expiry proposed by a leader of an earlier term and carried into this one: its view of
     * the lease's deadline is not this term's leader's, so it is not applied.
     */
    private static boolean skippedByTerm(Command command, Entry entry, long term) {
        return command instanceof LeaseExpire && entry.proposerTerm() != term;
    }

    /** A Raft configuration or metadata entry: nothing of Tenure's to apply, but the audit log covers every index. */
    @Override
    public void notifyTermIndexUpdated(long term, long index) {
        super.notifyTermIndexUpdated(term, index);
        AuditLog a = audit;
        if (a != null) {
            a.indexApplied(index, term);
            auditDigest(a, index, term);
        }
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

    @Override
    public long takeSnapshot() throws IOException {
        long started = System.nanoTime();
        AuditLog a = audit;
        if (a != null) {
            // Every index this snapshot covers is in the audit file before the snapshot exists: a
            // member killed later and restarted from it cannot leave those indexes unlogged.
            a.flush();
        }
        TermIndex last;
        File file;
        File tmp;
        guard.readLock().lock();
        try {
            last = getLastAppliedTermIndex();
            if (last == null || last.getIndex() < 0) {
                return -1;
            }
            file = storage.getSnapshotFile(last.getTerm(), last.getIndex());
            tmp = new File(file.getParentFile(), file.getName() + ".tmp");
            try (FileOutputStream out = new FileOutputStream(tmp)) {
                state.writeSnapshot(out);
                out.getChannel().force(true);
            }
        } finally {
            guard.readLock().unlock();
        }
        Files.move(tmp.toPath(), file.toPath(), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        MD5Hash md5 = MD5FileUtil.computeAndSaveMd5ForFile(file);
        syncDirectory(file.getParentFile().toPath());
        storage.updateLatestSnapshot(new SingleFileSnapshotInfo(new FileInfo(file.toPath(), md5), last));
        ServerMetrics m = metrics;
        if (m != null) {
            m.snapshotTaken(System.nanoTime() - started);
        }
        LOG.info("event=snapshot index={} file={} took_ms={}", last.getIndex(), file.getName(),
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
        return last.getIndex();
    }

    private static void syncDirectory(Path dir) throws IOException {
        try (FileChannel channel = FileChannel.open(dir, StandardOpenOption.READ)) {
            channel.force(true);
        }
    }

    /**
     * Loads the newest snapshot, refusing to start on one that is unreadable: a corrupt or
     * truncated snapshot is reported, never silently replaced by an empty state.
     */
    private void loadLatestSnapshot(String cause) throws IOException {
        File dir = storage.getSnapshotFile(0, 0).getParentFile();
        boolean anySnapshot = false;
        File[] files = dir.listFiles();
        if (files != null) {
            for (File f : files) {
                anySnapshot |= SNAPSHOT_FILE.matcher(f.getName()).matches();
            }
        }
        SingleFileSnapshotInfo snapshot = storage.loadLatestSnapshot();
        if (snapshot == null) {
            if (anySnapshot) {
                throw new IOException("the snapshot in " + dir + " cannot be read (missing or unreadable .md5 file);"
                        + " the data directory is damaged");
            }
            return;
        }
        Path path = snapshot.getFile().getPath();
        MD5Hash md5 = snapshot.getFile().getFileDigest();
        if (md5 == null) {
            throw new IOException("snapshot " + path + " has no checksum file; the data directory is damaged");
        }
        try {
            MD5FileUtil.verifySavedMD5(path.toFile(), md5);
        } catch (IOException e) {
            throw new IOException("snapshot " + path + " is corrupt (checksum mismatch); the data directory is damaged", e);
        }
        TenureState loaded;
        try (InputStream in = new BufferedInputStream(Files.newInputStream(path))) {
            loaded = TenureState.readSnapshot(in, eventLogCapacity);
        } catch (IOException e) {
            throw new IOException("snapshot " + path + " cannot be read: " + e.getMessage(), e);
        }
        long now = nanoClock.getAsLong();
        guard.writeLock().lock();
        try {
            state = loaded;
            revision = loaded.revision();
            updateLeaderEndpoint();
            setLastAppliedTermIndex(snapshot.getTermIndex());
            synchronized (deadlines) {
                // Restarted: no member knows when these leases were last renewed; count from now.
                for (LeaseView lease : loaded.leases()) {
                    deadlines.renewed(lease.leaseId(), lease.ttlMillis(), lease.renewedAt(), now);
                }
            }
        } finally {
            guard.writeLock().unlock();
        }
        AuditLog a = audit;
        if (a != null) {
            a.snapshot(snapshot.getIndex(), snapshot.getTerm(), cause);
        }
        LOG.info("event=snapshot_loaded index={} leases={} locks={}", snapshot.getIndex(), loaded.leaseCount(),
                loaded.primitive(LockTable.class).lockCount());
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

    @Override
    public void notifyLeaderReady() {
        countUnknownLeasesFromNow();
        Listener l = listener;
        if (l != null) {
            l.leadership(true);
        }
    }

    @Override
    public void notifyNotLeader(Collection<TransactionContext> pendingEntries) {
        Listener l = listener;
        if (l != null) {
            l.leadership(false);
        }
    }

    @Override
    public void notifyLeaderChanged(RaftGroupMemberId groupMemberId, RaftPeerId newLeaderId) {
        leader = newLeaderId;
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
        Listener l = listener;
        if (l != null && !groupMemberId.getPeerId().equals(newLeaderId)) {
            l.leadership(false);
        }
    }

    @Override
    public void notifyLogFailed(Throwable cause, LogEntryProto failedEntry) {
        LOG.error("event=log_failed index={} reason=\"{}\"", failedEntry == null ? -1 : failedEntry.getIndex(), String.valueOf(cause));
        Listener l = listener;
        if (l != null) {
            l.logFailed(cause);
        }
    }

    @Override
    public void notifyServerShutdown(RoleInfoProto roleInfo, boolean allServer) {
        Listener l = listener;
        if (l != null) {
            l.shutdown();
        }
    }
}
