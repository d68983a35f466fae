package io.tenure.server;

import io.tenure.core.TenureState;
import io.tenure.core.lock.LockTable;
import io.tenure.server.raft.Entry;
import io.tenure.server.raft.JRaftRestoredStorage;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.server.storage.RaftStorageMetadata;
import org.apache.ratis.statemachine.impl.SimpleStateMachineStorage;
import org.apache.ratis.util.MD5FileUtil;

import java.io.BufferedInputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.stream.Stream;

/**
 * Disaster recovery: makes a data directory from a backup ({@code tenure snapshot save}), from
 * which {@code tenure server --data-dir DIR} starts with the backed-up state, as the first member
 * of a new cluster; the way back after losing a majority.
 *
 * <p>The directory is what a member on the chosen {@link RaftEngine} leaves after it took a
 * snapshot and purged its whole log, with the backup as that snapshot, which the state machine
 * loads on start; the engine then starts the log right after the snapshot's index.
 * <ul>
 *   <li>Ratis: formatted Raft storage ({@code raft/<group>/current/raft-meta}) and the backup as
 *       the only snapshot ({@code raft/<group>/sm/snapshot.<term>_<index>} with its MD5);</li>
 *   <li>JRaft: {@code jraft/meta/raft_meta} and the backup as the only snapshot
 *       ({@code jraft/snapshot/snapshot_<index>/}, with its SHA-256 and JRaft's own metadata),
 *       see {@link JRaftRestoredStorage}.</li>
 * </ul>
 * The identity ({@code member.properties}) records the engine, and is written last.
 *
 * <p><b>Fencing tokens stay above the backup's.</b> A token is a log position, {@code index * 2^16
 * + slot}. The snapshot's index is taken from the backup's own last applied position, so the first
 * entry of the new log has a position above every position (and so every token and revision)
 * in the backup, and the core stamps {@code max(position, last + 1)} in any case.
 *
 * <p>The Raft configuration comes from the member's flags when it starts, so it can seed a single
 * member or the first member of a new cluster. Ratis keeps none in the directory. JRaft's snapshot
 * must name one: it names a placeholder, which the member replaces with itself alone when it
 * starts without {@code --peers} or with {@code --peers} naming only itself (and refuses to start
 * otherwise).
 */
public final class SnapshotRestore {
    /** The term the restored snapshot and storage start at: a new Raft history begins. */
    static final long RESTORED_TERM = 1;

    private SnapshotRestore() {
    }

    /**
     * What a backup holds.
     *
     * @param revision the store revision it reflects: every token and revision in it is at most this
     * @param index    the Raft index a restored member's log continues after
     * @param leases   leases in the backup
     * @param locks    held locks in the backup
     * @param waiters  queued waiters, over all locks
     */
    public record Backup(long revision, long index, int leases, int locks, int waiters) {}

    /**
     * Reads {@code backup} whole and checks it as the core does when a member loads a snapshot:
     * magic number, format version, structure and CRC32C.
     *
     * @throws IOException naming the file and the problem when it cannot be read or is not a valid snapshot
     */
    public static Backup check(Path backup) throws IOException {
        TenureState state = read(backup);
        return new Backup(state.revision(), state.appliedPosition() >>> Entry.SLOT_BITS, state.leaseCount(),
                state.primitive(LockTable.class).lockCount(), state.primitive(LockTable.class).waiterCount());
    }

    private static TenureState read(Path backup) throws IOException {
        try (InputStream in = new BufferedInputStream(Files.newInputStream(backup))) {
            return TenureState.readSnapshot(in, TenureState.DEFAULT_EVENT_LOG_CAPACITY);
        } catch (java.nio.file.NoSuchFileException e) {
            throw new IOException("backup " + backup + " does not exist", e);
        } catch (IOException e) {
            throw new IOException("backup " + backup + " is not a usable Tenure snapshot: " + e.getMessage(), e);
        }
    }

    /**
     * The engine a backup is restored for when {@code --raft-engine} is not given ({@link RaftEngine#AUTO}):
     * SOFAJRaft, the engine of a new cluster of several members, since a restored directory seeds a
     * new cluster (its joining members learn the engine from it).
     */
    public static final RaftEngine DEFAULT_ENGINE = RaftEngine.JRAFT;

    /**
     * Checks {@code backup} ({@link #check}) and creates data directory {@code dataDir} of member
     * {@code memberName} of cluster {@code clusterName} on Raft engine {@code engine}, holding it.
     *
     * @return what the backup holds; its {@linkplain Backup#index index} is the one the restored
     *         log continues after (on JRaft at least 1: JRaft has no snapshot at index 0)
     * @throws IllegalArgumentException for an invalid member or cluster name
     * @throws IOException              when the backup cannot be read or is not a valid snapshot,
     *                                  when {@code dataDir} exists and is not an empty directory
     *                                  (it is never changed then), or when writing fails
     */
    public static Backup restore(Path backup, Path dataDir, String clusterName, String memberName, RaftEngine engine)
            throws IOException {
        java.util.Objects.requireNonNull(engine, "engine");
        RaftEngine made = engine == RaftEngine.AUTO ? DEFAULT_ENGINE : engine;
        ServerConfig.defaults().withMemberName(memberName).withClusterName(clusterName).validate();
        Backup contents = check(backup);
        checkEmpty(dataDir);
        Files.createDirectories(dataDir);
        Backup restored;
        try {
            // Exhaustive on purpose: an engine added to RaftEngine must say how a backup is restored into it.
            restored = switch (made) {
                case RATIS -> {
                    writeStorage(backup, contents,
                            dataDir.resolve("raft").resolve(io.tenure.server.raft.RatisRaft.groupUuid(clusterName).toString()));
                    yield contents;
                }
                case JRAFT -> writeJRaftStorage(backup, contents, dataDir.resolve("jraft"));
                case AUTO -> throw new IllegalStateException("auto was resolved to " + DEFAULT_ENGINE + " above");
            };
            // Last: until the identity exists, a member refuses the directory.
            DataDirectory.writeIdentity(dataDir, clusterName, memberName, made);
        } catch (IOException | RuntimeException e) {
            // The directory was empty: take back what was written, so that the restore can simply be run again.
            clear(dataDir);
            throw e;
        }
        return restored;
    }

    /**
     * JRaft storage at {@code storage} with the backup as its only snapshot, at
     * {@code contents.index()} (at least 1); returns what was restored, with that index.
     */
    private static Backup writeJRaftStorage(Path backup, Backup contents, Path storage) throws IOException {
        long index = Math.max(1, contents.index());
        JRaftRestoredStorage.write(storage, RESTORED_TERM, index, file -> {
            Files.copy(backup, file);
            // What is placed is what was checked, even should the file change meanwhile.
            if (!check(file).equals(contents)) {
                throw new IOException("backup " + backup + " changed while it was being restored");
            }
        });
        return new Backup(contents.revision(), index, contents.leases(), contents.locks(), contents.waiters());
    }

    /** Formatted Raft storage at {@code group} with the backup as its only snapshot, at {@code contents.index()}. */
    private static void writeStorage(Path backup, Backup contents, Path group) throws IOException {
        RaftStorage storage = RaftStorage.newBuilder()
                .setDirectory(group.toFile())
                .setOption(RaftStorage.StartupOption.FORMAT)
                .setStorageFreeSpaceMin(RaftServerConfigKeys.storageFreeSpaceMin(new RaftProperties()))
                .build();
        try {
            storage.initialize();
            storage.getMetadataFile().persist(RaftStorageMetadata.valueOf(RESTORED_TERM, RaftPeerId.valueOf("")));
            File snapshot = new File(storage.getStorageDir().getStateMachineDir(),
                    SimpleStateMachineStorage.getSnapshotFileName(RESTORED_TERM, contents.index()));
            Path tmp = snapshot.toPath().resolveSibling(snapshot.getName() + ".tmp");
            Files.copy(backup, tmp);
            force(tmp);
            // What is placed is what was checked, even should the file change meanwhile.
            if (!check(tmp).equals(contents)) {
                throw new IOException("backup " + backup + " changed while it was being restored");
            }
            Files.move(tmp, snapshot.toPath(), StandardCopyOption.ATOMIC_MOVE);
            MD5FileUtil.computeAndSaveMd5ForFile(snapshot);
            force(snapshot.getParentFile().toPath());
            force(storage.getStorageDir().getCurrentDir().toPath());
        } finally {
            storage.close();
        }
    }

    private static void clear(Path dir) {
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
                if (!p.equals(dir)) {
                    Files.deleteIfExists(p);
                }
            }
        } catch (IOException | RuntimeException e) {
            // Best effort: the error that stopped the restore is the one to report.
        }
    }

    private static void checkEmpty(Path dataDir) throws IOException {
        if (!Files.exists(dataDir)) {
            return;
        }
        if (!Files.isDirectory(dataDir)) {
            throw new IOException("data directory " + dataDir.toAbsolutePath() + " is a file, not a directory");
        }
        try (Stream<Path> entries = Files.list(dataDir)) {
            if (entries.findAny().isPresent()) {
                throw new IOException("data directory " + dataDir.toAbsolutePath()
                        + " is not empty; restore only into a new or empty directory (nothing was changed)");
            }
        }
    }

    private static void force(Path path) throws IOException {
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
            channel.force(true);
        }
    }
}
