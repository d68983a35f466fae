package io.tenure.server;

/**
 * The Raft library that runs a member's group. A data directory keeps the engine it was created
 * with: its log and snapshots are in that library's format.
 */
public enum RaftEngine {
    /** Apache Ratis 3.2.2, the log in segment files (the data directory's {@code raft/}). */
    RATIS,
    /** SOFAJRaft 1.3.14, the log in RocksDB (the data directory's {@code jraft/}). */
    JRAFT,
    /**
     * The default: chosen when the member starts ({@link TenureServer#engineFor}). A data directory
     * that exists keeps its own; a new one gets SOFAJRaft when the member starts a cluster of
     * several members or has peer TLS, the engine the running members speak when it joins, and
     * Ratis when it runs alone.
     */
    AUTO;

    /**
     * The engine {@code --raft-engine} names: jraft, ratis or auto, in any case.
     *
     * @throws IllegalArgumentException for any other name
     */
    public static RaftEngine parse(String name) {
        return switch (name.toLowerCase(java.util.Locale.ROOT)) {
            case "jraft" -> JRAFT;
            case "ratis" -> RATIS;
            case "auto" -> AUTO;
            default -> throw new IllegalArgumentException("raft engine must be jraft, ratis or auto, got '" + name + "'");
        };
    }

    /** The name as {@code --raft-engine} takes it. */
    public String flag() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
