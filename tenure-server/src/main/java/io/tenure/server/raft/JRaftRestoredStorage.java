package io.tenure.server.raft;

import com.alipay.sofa.jraft.entity.LocalStorageOutter.StablePBMeta;
import com.alipay.sofa.jraft.entity.PeerId;
import com.alipay.sofa.jraft.entity.RaftOutter.SnapshotMeta;
import com.alipay.sofa.jraft.option.RaftOptions;
import com.alipay.sofa.jraft.storage.io.ProtoBufFile;
import com.alipay.sofa.jraft.storage.snapshot.SnapshotWriter;
import com.alipay.sofa.jraft.storage.snapshot.local.LocalSnapshotStorage;

import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * JRaft storage made outside a running member ({@code tenure snapshot restore}): what
 * {@link JRaftRaft} keeps under {@code <data-dir>/jraft/} after it took a snapshot and cut its whole
 * log, with a backup as that snapshot.
 *
 * <ul>
 *   <li>{@code snapshot/snapshot_<index>/}: the backup as {@code tenure.snapshot} with its SHA-256
 *       beside it, as {@link JRaftStateMachine} writes and checks them, and JRaft's own
 *       {@code __raft_snapshot_meta}, all written by JRaft's {@link LocalSnapshotStorage};</li>
 *   <li>{@code meta/raft_meta}: the term, and no vote;</li>
 *   <li>no {@code log/}: JRaft creates it on start, empty, and continues the log right after the
 *       snapshot's index.</li>
 * </ul>
 *
 * <p>The snapshot's Raft configuration is {@link #PLACEHOLDER}, since the member's peer address is
 * known only when it starts (from its flags); {@link JRaftRaft#start} replaces it with the member
 * alone.
 */
public final class JRaftRestoredStorage {
    /**
     * The one peer of a restored snapshot's configuration: an address no member can have (JRaft
     * does not start a node on {@code 0.0.0.0}; port 0, index 1), so that it names no member.
     */
    static final PeerId PLACEHOLDER = new PeerId("0.0.0.0", 0, 1);

    private JRaftRestoredStorage() {
    }

    /** Writes the snapshot's state into a file. */
    @FunctionalInterface
    public interface SnapshotContent {
        /** Writes the state into {@code file} (new) and checks it there; throws if it cannot. */
        void writeTo(Path file) throws IOException;
    }

    /**
     * Makes JRaft storage at {@code storage} (absent or empty) whose only snapshot is at
     * {@code index} of {@code term}, holding what {@code content} writes.
     *
     * @throws IOException when writing fails; what was written is left for the caller to remove
     */
    public static void write(Path storage, long term, long index, SnapshotContent content) throws IOException {
        if (index < 1) {
            throw new IllegalArgumentException("a JRaft snapshot's index is at least 1, got " + index);
        }
        RaftOptions options = new RaftOptions();
        options.setSync(true);
        options.setSyncMeta(true);
        Path snapshots = storage.resolve("snapshot");
        LocalSnapshotStorage snapshotStorage = new LocalSnapshotStorage(snapshots.toString(), null, options);
        if (!snapshotStorage.init(null)) {
            throw new IOException("cannot create JRaft's snapshot directory " + snapshots);
        }
        SnapshotWriter writer = snapshotStorage.create();
        if (writer == null) {
            throw new IOException("cannot create a JRaft snapshot in " + snapshots);
        }
        try {
            Path dir = Path.of(writer.getPath());
            Path file = dir.resolve(JRaftStateMachine.SNAPSHOT_FILE);
            content.writeTo(file);
            force(file);
            Path digest = dir.resolve(JRaftStateMachine.DIGEST_FILE);
            Files.writeString(digest, sha256(file), StandardCharsets.US_ASCII);
            force(digest);
            if (!writer.addFile(JRaftStateMachine.SNAPSHOT_FILE) || !writer.addFile(JRaftStateMachine.DIGEST_FILE)) {
                throw new IOException("cannot add the snapshot files to JRaft's snapshot in " + dir);
            }
            writer.saveMeta(SnapshotMeta.newBuilder().setLastIncludedIndex(index).setLastIncludedTerm(term)
                    .addPeers(PLACEHOLDER.toString()).build());
        } catch (IOException | RuntimeException e) {
            writer.setError(com.alipay.sofa.jraft.error.RaftError.EIO, "restore failed: %s", e.toString());
            closeQuietly(writer);
            throw e;
        }
        // Writes (and syncs) JRaft's meta file, then renames the snapshot into place.
        writer.close();
        if (snapshotStorage.getLastSnapshotIndex() != index) {
            throw new IOException("JRaft did not keep the snapshot at index " + index + " in " + snapshots
                    + " (see the errors logged above)");
        }
        force(snapshots);
        // The term and vote, as JRaft's LocalRaftMetaStorage keeps them: a new Raft history, no vote yet.
        Path meta = Files.createDirectories(storage.resolve("meta"));
        if (!new ProtoBufFile(meta.resolve("raft_meta").toString())
                .save(StablePBMeta.newBuilder().setTerm(term).setVotedfor(PeerId.emptyPeer().toString()).build(), true)) {
            throw new IOException("cannot write JRaft's term and vote in " + meta);
        }
        force(meta);
        force(storage);
    }

    private static String sha256(Path file) throws IOException {
        try {
            MessageDigest sha256 = MessageDigest.getInstance("SHA-256");
            try (InputStream in = new DigestInputStream(Files.newInputStream(file), sha256)) {
                in.transferTo(java.io.OutputStream.nullOutputStream());
            }
            return HexFormat.of().formatHex(sha256.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IOException("SHA-256 is not available", e);
        }
    }

    private static void closeQuietly(SnapshotWriter writer) {
        try {
            writer.close();
        } catch (IOException | RuntimeException e) {
            // The error that stopped the restore is the one to report.
        }
    }

    private static void force(Path path) throws IOException {
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
            channel.force(true);
        }
    }
}
