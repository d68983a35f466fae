package io.tenure.server;

/**
 * The Raft library that runs a member's group. A data directory keeps the engine it was created
 * with: its log and snapshots are in that library's format.
 */
public enum RaftEngine {
    /** Apache Ratis 3.2.2, the log in segment files (the data directory's {@code raft/}). */
    RATIS,
    /** SOFAJRaft 1.3.14, the log in RocksDB (the data directory's {@code jraft/}). */
    JRAFT
}
