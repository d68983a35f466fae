package io.tenure.server;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Comparator;
import java.util.Properties;
import java.util.stream.Stream;

/**
 * A member's data directory: {@code member.properties} (whose cluster and member it is, the
 * layout version, whether it finished initialising) and {@code raft/} (Ratis's log, metadata and
 * the snapshots). Opening checks that the directory belongs to this member before Ratis touches
 * it; a damaged one is reported, never reset.
 */
final class DataDirectory {
    static final int LAYOUT_VERSION = 1;
    private static final String IDENTITY = "member.properties";

    private final Path dir;
    private final boolean formatted;
    private final Properties identity;
    private final RaftEngine engine;

    private DataDirectory(Path dir, boolean formatted, Properties identity, RaftEngine engine) {
        this.dir = dir;
        this.formatted = formatted;
        this.identity = identity;
        this.engine = engine;
    }

    /** The property naming the Raft engine; absent in directories made before there was a choice (Ratis). */
    private static final String ENGINE = "engine";

    private static Path storageOf(Path dir, RaftEngine engine) {
        return dir.resolve(engine == RaftEngine.JRAFT ? "jraft" : "raft");
    }

    /**
     * The Raft engine the data directory at {@code dir} was made with; {@code null} when it has no
     * identity yet (a new directory).
     */
    static RaftEngine recordedEngine(Path dir) throws IOException {
        Path file = dir.resolve(IDENTITY);
        if (!Files.isRegularFile(file)) {
            return null;
        }
        return engineOf(readIdentity(file));
    }

    private static Properties readIdentity(Path file) throws IOException {
        Properties p = new Properties();
        try (InputStream in = Files.newInputStream(file)) {
            p.load(in);
        }
        return p;
    }

    /** The engine an identity records: Ratis when it records none (directories made before there was a choice). */
    private static RaftEngine engineOf(Properties identity) {
        return RaftEngine.parse(identity.getProperty(ENGINE, RaftEngine.RATIS.flag()));
    }

    /**
     * Opens (creating when new) the data directory of {@code member} of {@code cluster}, whose
     * Raft group has id {@code groupUuid}, run by {@code engine}.
     *
     * @throws IOException naming the problem when the directory is another member's or cluster's, or
     *                     damaged, or was made with another Raft engine
     */
    static DataDirectory open(Path dir, String cluster, String member, String groupUuid, RaftEngine engine) throws IOException {
        Path file = dir.resolve(IDENTITY);
        Path raft = storageOf(dir, engine);
        if (Files.exists(dir) && !Files.isDirectory(dir)) {
            throw new IOException("data directory " + dir.toAbsolutePath() + " is a file, not a directory");
        }
        if (!Files.exists(file)) {
            if (Files.exists(raft)) {
                throw new IOException("data directory " + dir.toAbsolutePath() + " has a " + raft.getFileName() + "/ directory but no "
                        + IDENTITY + ": it is damaged or not Tenure's; refusing to start");
            }
            Files.createDirectories(dir);
            Properties p = new Properties();
            p.setProperty("cluster", cluster);
            p.setProperty("member", member);
            p.setProperty("layout", Integer.toString(LAYOUT_VERSION));
            p.setProperty("initialized", "false");
            p.setProperty(ENGINE, engine.flag());
            write(file, p);
            return new DataDirectory(dir, false, p, engine);
        }
        Properties p = readIdentity(file);
        String layout = p.getProperty("layout", "");
        if (!layout.equals(Integer.toString(LAYOUT_VERSION))) {
            throw new IOException("data directory " + dir.toAbsolutePath() + " has layout version '" + layout
                    + "'; this build reads version " + LAYOUT_VERSION);
        }
        if (!cluster.equals(p.getProperty("cluster"))) {
            throw new IOException("data directory " + dir.toAbsolutePath() + " belongs to cluster '" + p.getProperty("cluster")
                    + "', not '" + cluster + "'");
        }
        if (!member.equals(p.getProperty("member"))) {
            throw new IOException("data directory " + dir.toAbsolutePath() + " belongs to member '" + p.getProperty("member")
                    + "', not '" + member + "'");
        }
        RaftEngine made = engineOf(p);
        if (made != engine) {
            throw new IOException("data directory " + dir.toAbsolutePath() + " was made with the " + made.flag()
                    + " Raft engine, and this member is set to " + engine.flag()
                    + " (--raft-engine); start it with --raft-engine " + made.flag() + ", or give it a new data directory");
        }
        boolean formatted = engine == RaftEngine.JRAFT
                ? Files.exists(raft.resolve("meta").resolve("raft_meta"))
                : Files.exists(raft.resolve(groupUuid).resolve("current").resolve("raft-meta"));
        if ("true".equals(p.getProperty("initialized"))) {
            if (!formatted) {
                throw new IOException("data directory " + dir.toAbsolutePath() + " is damaged: its Raft storage ("
                        + (engine == RaftEngine.JRAFT ? raft.resolve("meta") : raft.resolve(groupUuid)) + ") is missing");
            }
        } else if (!formatted) {
            // The first start stopped before the engine had formatted its storage: nothing was written yet.
            deleteTree(raft);
        }
        return new DataDirectory(dir, formatted, p, engine);
    }

    /**
     * Writes the identity of a data directory whose Raft storage was created outside a running
     * member ({@link SnapshotRestore}) for {@code engine}, already marked initialized. Written
     * last: until it exists, {@link #open} refuses the directory (Raft storage without an
     * identity), so a restore cut short is never mistaken for a member's data.
     */
    static void writeIdentity(Path dir, String cluster, String member, RaftEngine engine) throws IOException {
        Properties p = new Properties();
        p.setProperty("cluster", cluster);
        p.setProperty("member", member);
        p.setProperty("layout", Integer.toString(LAYOUT_VERSION));
        p.setProperty("initialized", "true");
        p.setProperty(ENGINE, engine.flag());
        write(dir.resolve(IDENTITY), p);
    }

    /** Whether Ratis storage exists here (recover it) or must be created (format). */
    boolean formatted() {
        return formatted;
    }

    /** Where the Raft engine keeps its log, metadata and snapshots. */
    Path raftDir() {
        return storageOf(dir, engine);
    }

    /** Records that Ratis storage was created: from now on the directory is recovered, never re-created. */
    void markInitialized() throws IOException {
        if (!"true".equals(identity.getProperty("initialized"))) {
            identity.setProperty("initialized", "true");
            write(dir.resolve(IDENTITY), identity);
        }
    }

    private static void write(Path file, Properties p) throws IOException {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        try (OutputStream out = Files.newOutputStream(tmp)) {
            p.store(out, "Tenure member identity; do not edit");
        }
        try (FileChannel c = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
            c.force(true);
        }
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        try (FileChannel d = FileChannel.open(file.getParent(), StandardOpenOption.READ)) {
            d.force(true);
        }
    }

    private static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
