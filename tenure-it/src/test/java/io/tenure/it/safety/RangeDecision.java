package io.tenure.it.safety;

import java.util.ArrayList;
import java.util.List;

/**
 * One decision of the fenced resource about a write under a grant of byte ranges (lock scopes), as
 * it logs it to {@code ranges.jsonl} (one JSON object per line, in decision order); {@link
 * RangeHoldings} says what the decisions mean.
 *
 * @param inode    the inode written
 * @param start    WRITE: the first byte written; END, DISPLACE: the first byte of the grant's first held range
 * @param end      the byte after the last (half-open)
 * @param held     the grant's ranges of the inode, the scopes its token carries: {@code start-end[,start-end...]}
 * @param mode     how the grant holds them: {@code EXCLUSIVE} or {@code SHARED}
 * @param event    what was decided
 * @param token    the grant's fencing token
 * @param writer   the client process and the id of its operation ({@code c3/12345}); for
 *                 {@link Event#DISPLACE}, the writer whose write displaced the grant
 * @param atNanos  when the resource decided, on the shared monotonic clock
 * @param accepted WRITE: whether it was accepted; END: whether the grant was held until then; DISPLACE: always true
 * @param reason   why a WRITE was refused, an END found nothing held, or a grant was displaced; null for an accepted WRITE or END
 */
public record RangeDecision(long inode, long start, long end, String held, String mode, Event event, long token, String writer,
                            long atNanos, boolean accepted, String reason) {

    public enum Event {
        /** A write of {@code [start, end)} under the grant. */
        WRITE,
        /** The holder said its work under the grant is over (it releases next). */
        END,
        /** The grant stopped holding because a newer conflicting grant's write was accepted. */
        DISPLACE
    }

    public boolean exclusive() {
        return "EXCLUSIVE".equals(mode);
    }

    /** The held ranges, each {@code {start, end}}. */
    public List<long[]> heldRanges() {
        return parseRanges(held);
    }

    /** {@code 7:[0,4096)} for a finding. */
    public String region() {
        return inode + ":[" + start + "," + end + ")";
    }

    /** {@code start-end[,start-end...]} → ranges; empty for null or blank. */
    static List<long[]> parseRanges(String text) {
        List<long[]> ranges = new ArrayList<>();
        if (text == null || text.isBlank()) {
            return ranges;
        }
        for (String part : text.split(",")) {
            int dash = part.indexOf('-');
            ranges.add(new long[] {Long.parseLong(part.substring(0, dash).trim()), Long.parseLong(part.substring(dash + 1).trim())});
        }
        return ranges;
    }

    static String formatRanges(List<long[]> ranges) {
        StringBuilder s = new StringBuilder();
        for (long[] r : ranges) {
            if (s.length() > 0) {
                s.append(',');
            }
            s.append(r[0]).append('-').append(r[1]);
        }
        return s.toString();
    }

    /** Whether every byte of {@code [start, end)} lies in one of {@code ranges} (adjacent ranges together cover a write across them). */
    static boolean covered(List<long[]> ranges, long start, long end) {
        List<long[]> sorted = new ArrayList<>(ranges);
        sorted.sort(java.util.Comparator.comparingLong(r -> r[0]));
        long reached = start;
        for (long[] r : sorted) {
            if (r[0] > reached) {
                return false;
            }
            reached = Math.max(reached, r[1]);
            if (reached >= end) {
                return true;
            }
        }
        return false;
    }

    static boolean overlap(List<long[]> a, List<long[]> b) {
        for (long[] x : a) {
            for (long[] y : b) {
                if (x[0] < y[1] && y[0] < x[1]) {
                    return true;
                }
            }
        }
        return false;
    }
}
