package io.tenure.client.fence;

import io.tenure.client.Scope;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The highest token accepted for each byte of one inode, as disjoint segments {@code [start, end)}
 * with their token; a byte in no segment was never written (token {@code 0}).
 *
 * <p>An accepted write's token is at least the token of every byte it overlaps, so accepting it
 * sets those bytes to exactly its token ({@link #assign}). A write is then stale precisely when a
 * byte of it holds a higher token, which is the same as "an accepted write overlapping it had a
 * higher token": the check is exact, and a newer writer of {@code [0,100)} makes an older token
 * stale only there. Adjacent segments of one token are kept as one, so the segments are the
 * canonical form of the function: at most one per run of bytes last written by one token, never
 * more than {@code 2w + 1} for {@code w} accepted writes, and one after the inode is written whole.
 *
 * <p>Checks and writes take {@code O(log n + k)} for {@code n} segments, {@code k} of them
 * overlapped. Not thread-safe: the guard orders calls.
 */
final class RangeFence {
    /** The whole of an inode, as bytes: it overlaps every range of it. */
    static final long INODE_END = Long.MAX_VALUE;

    private final TreeMap<Long, Segment> segments = new TreeMap<>();

    /** Bytes {@code [start, end)} last accepted with {@code token}. */
    record Segment(long start, long end, long token) {
    }

    /** The bytes of inode {@code inode} that a region touches: a byte range, or every byte of an inode. */
    record Span(long inode, long start, long end) {
        static Span of(Scope region) {
            if (region instanceof Scope.ByteRange range) {
                return new Span(range.inode(), range.start(), range.end());
            }
            return new Span(((Scope.Inode) region).inode(), 0, INODE_END);
        }
    }

    /** The highest token accepted for a byte of {@code [start, end)}, or {@code 0}. */
    long highest(long start, long end) {
        long highest = 0;
        Map.Entry<Long, Segment> before = segments.lowerEntry(start);
        if (before != null && before.getValue().end() > start) {
            highest = before.getValue().token();
        }
        for (Segment segment : segments.subMap(start, true, end, false).values()) {
            highest = Math.max(highest, segment.token());
        }
        return highest;
    }

    /**
     * Sets every byte of {@code [start, end)} to {@code token}, which the caller has checked is at
     * least {@link #highest} there, and merges it with neighbours of the same token.
     */
    void assign(long start, long end, long token) {
        Map.Entry<Long, Segment> before = segments.lowerEntry(start);
        if (before != null && before.getValue().end() > start) {
            cut(before.getValue(), start, end);
        }
        Map.Entry<Long, Segment> last = segments.lowerEntry(end);
        if (last != null && last.getKey() >= start && last.getValue().end() > end) {
            cut(last.getValue(), start, end);
        }
        segments.subMap(start, true, end, false).clear();

        long from = start;
        long to = end;
        Map.Entry<Long, Segment> left = segments.lowerEntry(start);
        if (left != null && left.getValue().end() == start && left.getValue().token() == token) {
            from = left.getKey();
        }
        Segment right = segments.get(end);
        if (right != null && right.token() == token) {
            segments.remove(end);
            to = right.end();
        }
        segments.put(from, new Segment(from, to, token));
    }

    /** Keeps the parts of {@code segment} outside {@code [start, end)}; the part inside is cleared by the caller. */
    private void cut(Segment segment, long start, long end) {
        if (segment.start() < start) {
            segments.put(segment.start(), new Segment(segment.start(), start, segment.token()));
        }
        if (segment.end() > end) {
            segments.put(end, new Segment(end, segment.end(), segment.token()));
        }
    }

    /** Adds a segment read back from storage; it must not overlap another. */
    void load(Segment segment) {
        segments.put(segment.start(), segment);
    }

    /** The segments in byte order. */
    List<Segment> segments() {
        return new ArrayList<>(segments.values());
    }

    int size() {
        return segments.size();
    }
}
