package io.tenure.it.safety;

import io.tenure.client.Scope;
import io.tenure.client.fence.InMemoryScopeFenceGuard;
import io.tenure.client.fence.LockScopeMismatchException;
import io.tenure.client.fence.ScopedToken;
import io.tenure.client.fence.StaleTokenException;
import io.tenure.it.safety.RangeDecision.Event;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The fence of the {@link FencedResource} for byte-range writers (issue 21): writes of byte ranges
 * of one inode under grants of lock scopes, each grant with one fencing token and the ranges it
 * holds ({@link RangeWorker}). The bytes are fenced by an {@link InMemoryScopeFenceGuard} in
 * {@code AT_LEAST} mode, the SDK's own scope-aware fence: a write is refused when its region is not
 * covered by the token's scopes, or overlaps bytes already written under a larger token.
 *
 * <p>On top of the guard the resource keeps its own view of who <em>holds</em> what, as {@link
 * PermitFence} does for semaphores. <strong>Holding, from the resource's view</strong>, begins with
 * a grant's first accepted WRITE and ends with the first of: the holder's END (sent before it
 * releases on the server), or its DISPLACE by an accepted write of a newer grant whose ranges
 * conflict with its own (they overlap and one of the two is exclusive). A grant whose holding ended
 * never holds again. A WRITE of grant {@code t} is decided in this order:
 * <ol>
 *   <li>refused when the grant's holding ended here before (END, displaced, or refused once while not held);</li>
 *   <li>refused when the grant is held with other ranges or another mode than the write names;</li>
 *   <li>refused when a write of a newer grant that conflicts with this one was accepted: the two
 *       cannot both have been held at any log position, so this one is stale (even where the newer
 *       one did not write the same bytes);</li>
 *   <li>refused when the guard refuses it: the region is not covered by the grant's ranges, or
 *       overlaps bytes accepted under a larger token (two shared grants of overlapping ranges
 *       are both legal, but the older one's later writes are refused there: safe, not live);</li>
 *   <li>otherwise accepted, the grant held; the held grants with smaller tokens that conflict with
 *       it are displaced, each logged as a DISPLACE before the WRITE.</li>
 * </ol>
 *
 * <p>{@link #breaches} replays a decision log independently (without the guard) and states what
 * the checkers assert of the resource's view. Not thread-safe: the resource calls it under its own lock.
 */
final class RangeHoldings {
    /** One violation of the resource's view found by {@link #breaches}. */
    record Breach(String description, long atNanos, List<String> writers) {}

    /** A grant by the resource's view: its ranges of the inode, mode, and the writer of its first accepted write. */
    private record Grant(long token, long inode, List<long[]> held, boolean exclusive, String writer) {
        boolean conflicts(Grant other) {
            return inode == other.inode && (exclusive || other.exclusive) && RangeDecision.overlap(held, other.held);
        }

        boolean sameAs(long inode, String held, boolean exclusive) {
            return this.inode == inode && this.exclusive == exclusive && RangeDecision.formatRanges(this.held).equals(held);
        }

        String describe() {
            return "grant " + token + " (" + (exclusive ? "exclusive" : "shared") + " " + inode + ":" + RangeDecision.formatRanges(held)
                    + ", " + writer + ")";
        }
    }

    private final InMemoryScopeFenceGuard guard = InMemoryScopeFenceGuard.lenient();
    private final long inode;
    private final TreeMap<Long, Grant> open = new TreeMap<>();
    private final Set<Long> ended = new HashSet<>();
    /** Every grant that had a write accepted, for rule 3. */
    private final List<Grant> everAccepted = new ArrayList<>();

    /** @param inode the inode of the run's range writers; writes of other inodes are refused */
    RangeHoldings(long inode) {
        this.inode = inode;
    }

    /** Decides a WRITE of {@code [start, end)} under grant {@code token} holding {@code held} in {@code mode}: the DISPLACEs it caused, then the WRITE. */
    List<RangeDecision> write(long inode, long start, long end, String held, String mode, long token, String writer, long now) {
        boolean exclusive = mode.equals("EXCLUSIVE");
        List<long[]> ranges;
        try {
            ranges = RangeDecision.parseRanges(held);
        } catch (RuntimeException e) {
            return List.of(refused(inode, start, end, held, mode, Event.WRITE, token, writer, now, "bad ranges " + held));
        }
        if (inode != this.inode || !exclusive && !mode.equals("SHARED") || start < 0 || end <= start || token <= 0) {
            return List.of(refused(inode, start, end, held, mode, Event.WRITE, token, writer, now, "not a write of inode " + this.inode
                    + " with a mode and a range"));
        }
        Grant mine = open.get(token);
        if (mine == null && ended.contains(token)) {
            return List.of(refused(inode, start, end, held, mode, Event.WRITE, token, writer, now, "the holding of grant " + token + " ended"));
        }
        if (mine != null && !mine.sameAs(inode, RangeDecision.formatRanges(ranges), exclusive)) {
            return List.of(refused(inode, start, end, held, mode, Event.WRITE, token, writer, now, mine.describe() + " is held with "
                    + "other ranges or another mode"));
        }
        Grant grant = mine != null ? mine : new Grant(token, inode, ranges, exclusive, FencedResource.processOf(writer));
        if (mine == null) {
            for (Grant newer : everAccepted) {
                if (newer.token() > token && newer.conflicts(grant)) {
                    ended.add(token);
                    return List.of(refused(inode, start, end, held, mode, Event.WRITE, token, writer, now, "stale: a write of "
                            + newer.describe() + " was accepted, and the two cannot have been held together"));
                }
            }
        }
        List<Scope> scopes = new ArrayList<>();
        ranges.forEach(r -> scopes.add(Scope.byteRange(inode, r[0], r[1])));
        try {
            guard.write(new ScopedToken(token, scopes), Scope.byteRange(inode, start, end), () -> { });
        } catch (LockScopeMismatchException | StaleTokenException e) {
            if (mine == null) {
                ended.add(token);
            }
            return List.of(refused(inode, start, end, held, mode, Event.WRITE, token, writer, now,
                    (e instanceof StaleTokenException ? "stale: " : "mismatch: ") + e.getMessage()));
        }
        List<RangeDecision> decisions = new ArrayList<>();
        if (mine == null) {
            for (Grant older : List.copyOf(open.headMap(token, false).values())) {
                if (older.conflicts(grant)) {
                    open.remove(older.token());
                    ended.add(older.token());
                    long[] first = older.held().get(0);
                    decisions.add(new RangeDecision(inode, first[0], first[1], RangeDecision.formatRanges(older.held()),
                            older.exclusive() ? "EXCLUSIVE" : "SHARED", Event.DISPLACE, older.token(), writer, now, true,
                            "grant " + token + " (" + mode + " " + held + ") conflicts with it"));
                }
            }
            open.put(token, grant);
            everAccepted.add(grant);
        }
        decisions.add(new RangeDecision(inode, start, end, held, mode, Event.WRITE, token, writer, now, true, null));
        return decisions;
    }

    /** The holder of grant {@code token} ends its holding (before releasing on the server). */
    RangeDecision end(long inode, long start, long end, String held, String mode, long token, String writer, long now) {
        boolean wasHeld = open.remove(token) != null;
        ended.add(token);
        return wasHeld ? new RangeDecision(inode, start, end, held, mode, Event.END, token, writer, now, true, null)
                : refused(inode, start, end, held, mode, Event.END, token, writer, now, "grant " + token
                + " was not held (displaced, refused or never written)");
    }

    /** What {@code process} holds by the resource's view ({@code exclusive 7:0-4096 (grant 123)}), or null. */
    String heldBy(String process) {
        for (Grant g : open.values()) {
            if (g.writer().equals(process)) {
                return (g.exclusive() ? "exclusive " : "shared ") + g.inode() + ":" + RangeDecision.formatRanges(g.held()) + " (grant "
                        + g.token() + ")";
            }
        }
        return null;
    }

    private static RangeDecision refused(long inode, long start, long end, String held, String mode, Event event, long token,
                                         String writer, long now, String why) {
        return new RangeDecision(inode, start, end, held, mode, event, token, writer, now, false, why);
    }

    /**
     * What the checkers assert of the resource's view ("no overlapping writes accepted"),
     * replaying its decisions in order with holding as defined above, without the guard:
     * (a) no write accepted outside its grant's ranges; (b) no write accepted under a grant whose
     * holding had ended; (c) no write accepted of bytes that an earlier accepted write under a
     * larger token overlapped (a stale write); (d) no write accepted while another grant whose
     * ranges conflict with its own holds (the older of the two must have been displaced first,
     * and its later writes refused); (e) a held grant's writes name its ranges and mode.
     */
    static List<Breach> breaches(List<RangeDecision> decisions) {
        record Written(long inode, long start, long end, long token, String writer) {}
        List<Breach> found = new ArrayList<>();
        Map<Long, Grant> holding = new HashMap<>();
        Set<Long> over = new HashSet<>();
        List<Written> written = new ArrayList<>();
        for (RangeDecision d : decisions) {
            switch (d.event()) {
                case DISPLACE, END -> {
                    holding.remove(d.token());
                    over.add(d.token());
                }
                case WRITE -> {
                    Grant mine = holding.get(d.token());
                    if (!d.accepted()) {
                        if (mine == null) {
                            over.add(d.token());
                        }
                        continue;
                    }
                    List<long[]> ranges = d.heldRanges();
                    Grant grant = new Grant(d.token(), d.inode(), ranges, d.exclusive(), d.writer());
                    String what = "grant " + d.token() + " (" + d.mode().toLowerCase(java.util.Locale.ROOT) + " " + d.inode() + ":" + d.held()
                            + ", " + d.writer() + ") wrote " + d.region();
                    if (!RangeDecision.covered(ranges, d.start(), d.end())) {
                        found.add(new Breach("write outside its scopes accepted: " + what + ", which its ranges do not cover",
                                d.atNanos(), List.of(d.writer())));
                    }
                    if (mine != null && !mine.sameAs(d.inode(), d.held(), d.exclusive())) {
                        found.add(new Breach(mine.describe() + " is held, yet a write of it naming " + d.mode() + " " + d.held()
                                + " was accepted (" + d.writer() + ")", d.atNanos(), List.of(mine.writer(), d.writer())));
                    }
                    if (mine == null && over.contains(d.token())) {
                        found.add(new Breach("write accepted after its holding had ended: " + what, d.atNanos(), List.of(d.writer())));
                    }
                    for (Written w : written) {
                        if (w.inode() == d.inode() && w.token() > d.token() && w.start() < d.end() && d.start() < w.end()) {
                            found.add(new Breach("overlapping stale write accepted: " + what + " after grant " + w.token() + " had written "
                                    + w.inode() + ":[" + w.start() + "," + w.end() + ") (" + w.writer() + ")", d.atNanos(),
                                    List.of(w.writer(), d.writer())));
                            break;
                        }
                    }
                    for (Grant other : holding.values()) {
                        if (other.token() != d.token() && other.conflicts(grant)) {
                            found.add(new Breach("conflicting holdings open at once by the resource's view: " + other.describe()
                                    + " and " + grant.describe() + ", whose write of " + d.region() + " was accepted while the other still held",
                                    d.atNanos(), List.of(other.writer(), d.writer())));
                        }
                    }
                    if (mine == null) {
                        holding.put(d.token(), grant);
                    }
                    written.add(new Written(d.inode(), d.start(), d.end(), d.token(), d.writer()));
                }
            }
        }
        return found;
    }
}
