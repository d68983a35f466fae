package io.tenure.server.raft;

import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.raftlog.segmented.LogSegment;
import org.apache.ratis.server.raftlog.segmented.LogSegmentPath;
import org.apache.ratis.util.SizeInBytes;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Repairs, before Ratis opens it, a member's log that ends before its latest snapshot.
 *
 * <p>A follower that is sent a snapshot writes it into its snapshot folder first and resets its
 * log after. Killed in between, it restarts with a snapshot at index S and a log that ends at
 * some E &lt; S. Ratis 3.2.2 then loads the snapshot and keeps the log: its next append (S + 1)
 * fails with "gap between entries S+1 and E", for good, and the member never catches up.
 *
 * <p>Every entry of such a log is at or below S, so the snapshot covers it: it is committed and
 * already in the snapshot's state (a snapshot holds only applied, hence committed, entries).
 * Removing those segments is what Ratis's own purge does to entries a snapshot covers, and the
 * member then starts from the snapshot with an empty log at S + 1. Nothing is touched when any
 * entry lies beyond S (a member's own snapshot is always behind or at its log's end), nor when a
 * segment cannot be read to its end (damage could hide entries beyond S; Ratis then refuses the
 * log as it is), and the term, vote and configuration files are never touched.
 */
public final class LogBehindSnapshot {
    private static final Logger LOG = LoggerFactory.getLogger(LogBehindSnapshot.class);
    /** The names SimpleStateMachineStorage gives snapshots: {@code snapshot.TERM_INDEX}. */
    private static final Pattern SNAPSHOT = Pattern.compile("snapshot\\.(\\d+)_(\\d+)");
    /** Ratis's segment names: {@code log_START-END} (closed) and {@code log_inprogress_START} (open). */
    private static final Pattern CLOSED_SEGMENT = Pattern.compile("log_(\\d+)-(\\d+)");
    private static final Pattern OPEN_SEGMENT = Pattern.compile("log_inprogress_(\\d+)");

    private LogBehindSnapshot() {
    }

    /**
     * Repairs each Raft group folder under {@code raftDir} (see the class comment).
     *
     * @return the segment files removed (empty when nothing needed repair)
     */
    public static List<Path> repair(Path raftDir) throws IOException {
        List<Path> removed = new ArrayList<>();
        if (!Files.isDirectory(raftDir)) {
            return removed;
        }
        try (DirectoryStream<Path> groups = Files.newDirectoryStream(raftDir, Files::isDirectory)) {
            for (Path group : groups) {
                removed.addAll(repairGroup(group));
            }
        }
        return removed;
    }

    private static List<Path> repairGroup(Path group) throws IOException {
        Path current = group.resolve("current");
        OptionalLong snapshot = latestSnapshotIndex(group.resolve("sm"));
        if (snapshot.isEmpty() || !Files.isDirectory(current)) {
            return List.of();
        }
        List<LogSegmentPath> segments = new ArrayList<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(current)) {
            for (Path file : files) {
                LogSegmentPath segment = LogSegmentPath.matchLogSegment(file);
                if (segment != null) {
                    segments.add(segment);
                }
            }
        }
        if (segments.isEmpty()) {
            return List.of();
        }
        long snapshotIndex = snapshot.getAsLong();
        long logEnd = -1;
        for (LogSegmentPath segment : segments) {
            try {
                logEnd = Math.max(logEnd, lastIndex(segment));
            } catch (IOException | RuntimeException unreadable) {
                // A damaged segment may hide entries beyond the snapshot: never drop it; Ratis
                // opens the log as it is and refuses it (CorruptionPolicy.EXCEPTION).
                LOG.warn("event=log_unreadable segment={} reason=\"{}\": not checked against the snapshot",
                        segment.getPath().getFileName(), unreadable.getMessage());
                return List.of();
            }
        }
        if (logEnd < 0 || logEnd >= snapshotIndex) {
            return List.of();
        }
        List<Path> removed = new ArrayList<>();
        for (LogSegmentPath segment : segments) {
            Files.delete(segment.getPath());
            removed.add(segment.getPath());
        }
        LOG.warn("event=log_behind_snapshot log_end={} snapshot_index={} removed={}: the log ends before the snapshot"
                        + " (a snapshot install was interrupted); every entry in it is covered by the snapshot, so it"
                        + " starts again from the snapshot", logEnd, snapshotIndex, removed.size());
        return removed;
    }

    /** The index of the last entry a segment holds; an open segment is read to find it. */
    private static long lastIndex(LogSegmentPath segment) throws IOException {
        String name = segment.getPath().getFileName().toString();
        Matcher closed = CLOSED_SEGMENT.matcher(name);
        if (closed.matches()) {
            return Long.parseLong(closed.group(2));
        }
        Matcher open = OPEN_SEGMENT.matcher(name);
        if (!open.matches()) {
            throw new IOException("unexpected Raft log segment name " + segment.getPath());
        }
        AtomicLong last = new AtomicLong(Long.parseLong(open.group(1)) - 1);
        // EXCEPTION, as the member opens its log: any damage stops the check (see repairGroup).
        LogSegment.readSegmentFile(segment.getPath().toFile(), segment.getStartEnd(), SizeInBytes.valueOf("64MB"),
                RaftServerConfigKeys.Log.CorruptionPolicy.EXCEPTION, null, entry -> last.set(entry.getIndex()));
        return last.get();
    }

    static OptionalLong latestSnapshotIndex(Path snapshotDir) throws IOException {
        if (!Files.isDirectory(snapshotDir)) {
            return OptionalLong.empty();
        }
        long latest = -1;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(snapshotDir)) {
            for (Path file : files) {
                Matcher m = SNAPSHOT.matcher(file.getFileName().toString());
                if (m.matches()) {
                    latest = Math.max(latest, Long.parseLong(m.group(2)));
                }
            }
        }
        return latest < 0 ? OptionalLong.empty() : OptionalLong.of(latest);
    }
}
