package io.tenure.server.raft;

import com.alipay.sofa.jraft.Closure;
import com.alipay.sofa.jraft.Iterator;
import com.alipay.sofa.jraft.Status;
import com.alipay.sofa.jraft.core.StateMachineAdapter;
import com.alipay.sofa.jraft.entity.LeaderChangeContext;
import com.alipay.sofa.jraft.entity.PeerId;
import com.alipay.sofa.jraft.error.RaftError;
import com.alipay.sofa.jraft.error.RaftException;
import com.alipay.sofa.jraft.storage.snapshot.SnapshotReader;
import com.alipay.sofa.jraft.storage.snapshot.SnapshotWriter;
import io.tenure.server.metrics.ServerMetrics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.DigestInputStream;
import java.security.DigestOutputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The SOFAJRaft adapter of {@link TenureStateMachine}: hands it committed entries on JRaft's apply
 * thread, keeps its snapshots as a file in JRaft's snapshot directory (with a SHA-256 beside it,
 * checked on load), and passes on leadership changes and failures.
 *
 * <p>JRaft tells a leader {@link #onLeaderStart} once the first entry of its term (a configuration
 * entry JRaft appends) is committed and applied: the moment Ratis calls "leader ready".
 */
final class JRaftStateMachine extends StateMachineAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(JRaftStateMachine.class);
    static final String SNAPSHOT_FILE = "tenure.snapshot";
    static final String DIGEST_FILE = "tenure.snapshot.sha256";

    /** A closure told the log index of its entry before it runs, so an append can answer with it. */
    abstract static class Appended implements Closure {
        volatile long index = -1;
    }

    private final TenureStateMachine tenure;
    private final Function<PeerId, String> names;
    private final String self;
    /** The latest term this member saw: its own as leader, its leader's, or an applied entry's. */
    private volatile long term;
    /** Whether this member leads and has applied the first entry of its term. */
    private volatile boolean leaderReady;
    /** Set once the node finished starting: a snapshot loaded after it was installed from the leader. */
    private volatile boolean started;
    /** Set when JRaft reported an error it does not recover from (a failed apply, a failed log write). */
    private volatile boolean failed;
    /** The leader's name as JRaft last told this member, or null; guarded by {@code this} for {@link #awaitLeader}. */
    private String leader;

    JRaftStateMachine(TenureStateMachine tenure, String self, Function<PeerId, String> names) {
        this.tenure = tenure;
        this.self = self;
        this.names = names;
    }

    long term() {
        return term;
    }

    /** The last index Tenure's state machine applied (JRaft's own entries after its last one are not counted yet). */
    long tenureAppliedIndex() {
        return tenure.appliedIndex();
    }

    boolean leaderReady() {
        return leaderReady;
    }

    boolean failed() {
        return failed;
    }

    void started() {
        started = true;
    }

    /** Waits until JRaft names {@code name} leader here, up to {@code deadline} (System.nanoTime); true if it did. */
    synchronized boolean awaitLeader(String name, long deadline) throws InterruptedException {
        while (!name.equals(leader)) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            TimeUnit.NANOSECONDS.timedWait(this, left);
        }
        return true;
    }

    private synchronized void leaderIs(String name) {
        leader = name;
        notifyAll();
    }

    @Override
    public void onApply(Iterator entries) {
        while (entries.hasNext()) {
            long index = entries.getIndex();
            long entryTerm = entries.getTerm();
            if (entryTerm > term) {
                term = entryTerm;
            }
            // JRaft applies its own entries (a new leader's configuration entry, membership
            // changes) without showing them here: they are the indexes skipped since the last
            // one. Recorded with this entry's term, which every member computes alike, so the
            // audit log covers every index.
            for (long skipped = Math.max(1, tenure.appliedIndex() + 1); skipped < index; skipped++) {
                tenure.indexApplied(entryTerm, skipped);
            }
            // A view, never the buffer itself: on the leader it is the one JRaft's replicators send
            // later to a lagging follower, which then got an empty entry when it was read here.
            ByteBuffer data = entries.getData();
            if (data == null || !data.hasRemaining()) {
                tenure.indexApplied(entryTerm, index);
            } else {
                ByteBuffer view = data.duplicate();
                byte[] bytes = new byte[view.remaining()];
                view.get(bytes);
                try {
                    tenure.apply(entryTerm, index, bytes);
                } catch (IllegalStateException unreadable) {
                    // JRaft stops applying and puts the node in its error state: the member stops
                    // rather than diverge (TenureServer sees it no longer alive).
                    entries.setErrorAndRollback(1, new Status(RaftError.ESTATEMACHINE, unreadable.getMessage()));
                    return;
                }
            }
            Closure done = entries.done();
            if (done != null) {
                if (done instanceof Appended appended) {
                    appended.index = index;
                }
                done.run(Status.OK());
            }
            entries.next();
        }
    }

    @Override
    public void onSnapshotSave(SnapshotWriter writer, Closure done) {
        long started = System.nanoTime();
        Path dir = Path.of(writer.getPath());
        Path file = dir.resolve(SNAPSHOT_FILE);
        try {
            MessageDigest sha256 = MessageDigest.getInstance("SHA-256");
            TenureStateMachine.LogPosition written;
            try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                    StandardOpenOption.WRITE);
                 OutputStream out = new DigestOutputStream(new BufferedOutputStream(java.nio.channels.Channels.newOutputStream(channel), 1 << 16), sha256)) {
                written = tenure.writeSnapshot(out);
                out.flush();
                channel.force(true);
            }
            Path digest = dir.resolve(DIGEST_FILE);
            Files.writeString(digest, HexFormat.of().formatHex(sha256.digest()), StandardCharsets.US_ASCII);
            try (FileChannel channel = FileChannel.open(digest, StandardOpenOption.WRITE)) {
                channel.force(true);
            }
            if (!writer.addFile(SNAPSHOT_FILE) || !writer.addFile(DIGEST_FILE)) {
                done.run(new Status(RaftError.EIO, "cannot add the snapshot files to JRaft's snapshot"));
                return;
            }
            ServerMetrics m = tenure.metrics();
            if (m != null) {
                m.snapshotTaken(System.nanoTime() - started);
            }
            LOG.info("event=snapshot index={} dir={} took_ms={}", written == null ? -1 : written.index(), dir.getFileName(),
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
            done.run(Status.OK());
        } catch (IOException | NoSuchAlgorithmException | RuntimeException e) {
            LOG.error("event=snapshot_failed dir={} reason=\"{}\"", dir, e.toString());
            done.run(new Status(RaftError.EIO, "cannot write the snapshot: %s", e.toString()));
        }
    }

    /**
     * Loads a snapshot: at start-up the newest one in the data directory, later one installed from
     * the leader. Refuses (and JRaft then refuses to start, or stops) on one whose checksum does
     * not match: a corrupt or truncated snapshot is reported, never replaced by an empty state.
     */
    @Override
    public boolean onSnapshotLoad(SnapshotReader reader) {
        var meta = reader.load();
        if (meta == null) {
            LOG.error("event=snapshot_load_failed dir={} reason=\"its metadata cannot be read\"", reader.getPath());
            return false;
        }
        Path dir = Path.of(reader.getPath());
        Path file = dir.resolve(SNAPSHOT_FILE);
        try {
            String expected = Files.readString(dir.resolve(DIGEST_FILE), StandardCharsets.US_ASCII).trim();
            MessageDigest sha256 = MessageDigest.getInstance("SHA-256");
            try (InputStream in = new DigestInputStream(new BufferedInputStream(Files.newInputStream(file), 1 << 16), sha256)) {
                // Read whole, so that the digest is checked before the state is replaced.
                byte[] bytes = in.readAllBytes();
                String actual = HexFormat.of().formatHex(sha256.digest());
                if (!actual.equals(expected)) {
                    throw new IOException("snapshot " + file + " is corrupt (checksum mismatch); the data directory is damaged");
                }
                tenure.loadSnapshot(new java.io.ByteArrayInputStream(bytes), meta.getLastIncludedTerm(), meta.getLastIncludedIndex(),
                        started ? "installed" : "loaded");
            }
        } catch (IOException | NoSuchAlgorithmException | RuntimeException e) {
            LOG.error("event=snapshot_load_failed file={} reason=\"{}\"", file, e.toString());
            return false;
        }
        if (meta.getLastIncludedTerm() > term) {
            term = meta.getLastIncludedTerm();
        }
        if (started) {
            tenure.reloaded();
        }
        return true;
    }

    @Override
    public void onLeaderStart(long leaderTerm) {
        term = leaderTerm;
        leaderIs(self);
        tenure.leaderChanged(self, true);
        leaderReady = true;
        tenure.leaderReady();
    }

    @Override
    public void onLeaderStop(Status status) {
        leaderReady = false;
        leaderIs(null);
        tenure.notLeader();
    }

    @Override
    public void onStartFollowing(LeaderChangeContext ctx) {
        if (ctx.getTerm() > term) {
            term = ctx.getTerm();
        }
        String name = names.apply(ctx.getLeaderId());
        leaderIs(name);
        tenure.leaderChanged(name, false);
    }

    @Override
    public void onStopFollowing(LeaderChangeContext ctx) {
        leaderIs(null);
        tenure.leaderChanged(null, false);
    }

    @Override
    public void onError(RaftException e) {
        failed = true;
        leaderReady = false;
        tenure.logFailed(e, -1);
    }

    @Override
    public void onShutdown() {
        leaderReady = false;
        tenure.serverShutdown();
    }
}
