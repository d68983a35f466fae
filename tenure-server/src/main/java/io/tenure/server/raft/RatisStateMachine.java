package io.tenure.server.raft;

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
import io.tenure.server.metrics.ServerMetrics;
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
import java.util.Collection;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * The Ratis adapter of {@link TenureStateMachine}: hands it committed entries, keeps its snapshots
 * in Ratis's snapshot storage (a file per snapshot with an MD5 beside it), and passes on Ratis's
 * leadership and failure notifications.
 */
public final class RatisStateMachine extends BaseStateMachine {
    private static final Logger LOG = LoggerFactory.getLogger(RatisStateMachine.class);
    private static final Pattern SNAPSHOT_FILE = Pattern.compile("snapshot\\.\\d+_\\d+");

    private final SimpleStateMachineStorage storage = new SimpleStateMachineStorage();
    private final TenureStateMachine tenure;

    public RatisStateMachine(TenureStateMachine tenure) {
        this.tenure = tenure;
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
        tenure.reloaded();
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
        tenure.apply(log.getTerm(), index, log.getStateMachineLogEntry().getLogData().toByteArray());
        updateLastAppliedTermIndex(log.getTerm(), index);
        return CompletableFuture.completedFuture(Message.EMPTY);
    }

    /** A Raft configuration or metadata entry: nothing of Tenure's to apply, but the audit log covers every index. */
    @Override
    public void notifyTermIndexUpdated(long term, long index) {
        super.notifyTermIndexUpdated(term, index);
        tenure.indexApplied(term, index);
    }

    @Override
    public long takeSnapshot() throws IOException {
        long started = System.nanoTime();
        TermIndex last = getLastAppliedTermIndex();
        if (last == null || last.getIndex() < 0) {
            return -1;
        }
        // Named after the position the state covers, which the write reports (apply may have moved on since the read above).
        File dir = storage.getSnapshotFile(0, 0).getParentFile();
        File tmp = new File(dir, "snapshot.writing.tmp");
        TenureStateMachine.LogPosition written;
        try (FileOutputStream out = new FileOutputStream(tmp)) {
            written = tenure.writeSnapshot(out);
            out.getChannel().force(true);
        }
        if (written == null || written.index() < 0) {
            Files.deleteIfExists(tmp.toPath());
            return -1;
        }
        File file = storage.getSnapshotFile(written.term(), written.index());
        Files.move(tmp.toPath(), file.toPath(), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        MD5Hash md5 = MD5FileUtil.computeAndSaveMd5ForFile(file);
        syncDirectory(dir.toPath());
        storage.updateLatestSnapshot(new SingleFileSnapshotInfo(new FileInfo(file.toPath(), md5),
                TermIndex.valueOf(written.term(), written.index())));
        ServerMetrics m = tenure.metrics();
        if (m != null) {
            m.snapshotTaken(System.nanoTime() - started);
        }
        LOG.info("event=snapshot index={} file={} took_ms={}", written.index(), file.getName(),
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
        return written.index();
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
        try (InputStream in = new BufferedInputStream(Files.newInputStream(path))) {
            tenure.loadSnapshot(in, snapshot.getTerm(), snapshot.getIndex(), cause);
        } catch (IOException e) {
            throw new IOException("snapshot " + path + " cannot be read: " + e.getMessage(), e);
        }
        setLastAppliedTermIndex(snapshot.getTermIndex());
    }

    @Override
    public void notifyLeaderReady() {
        tenure.leaderReady();
    }

    @Override
    public void notifyNotLeader(Collection<TransactionContext> pendingEntries) {
        tenure.notLeader();
    }

    @Override
    public void notifyLeaderChanged(RaftGroupMemberId groupMemberId, RaftPeerId newLeaderId) {
        tenure.leaderChanged(newLeaderId == null ? null : newLeaderId.toString(), groupMemberId.getPeerId().equals(newLeaderId));
    }

    @Override
    public void notifyLogFailed(Throwable cause, LogEntryProto failedEntry) {
        tenure.logFailed(cause, failedEntry == null ? -1 : failedEntry.getIndex());
    }

    @Override
    public void notifyServerShutdown(RoleInfoProto roleInfo, boolean allServer) {
        tenure.serverShutdown();
    }
}
