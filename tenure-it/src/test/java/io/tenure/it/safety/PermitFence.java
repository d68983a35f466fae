package io.tenure.it.safety;

import io.tenure.it.safety.PermitDecision.Event;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The fence of the {@link FencedResource} for counting semaphores: which writes under a
 * semaphore's grants it accepts, so that the permits it sees held never exceed the limit.
 *
 * <p>A lock's fence keeps one number per key, the highest token accepted, because a lock has one
 * holder and a newer grant means the older one ended. A semaphore of limit N has up to N holders
 * at once, each grant with its own token, so a lower token is no sign of staleness by itself:
 * the fence works per grant. It keeps, per semaphore, the grants it considers <em>held</em>.
 * <strong>Holding, from the resource's view</strong>, begins with a grant's first accepted WRITE
 * and ends with the first of: the holder's END (sent before it releases the permits on the
 * server), or the grant's DISPLACE by a newer grant. A grant whose holding ended never holds
 * again. A WRITE of grant (token t, permits p) is decided in this order:
 * <ol>
 *   <li>refused when the grant's holding ended here before (END, displaced, or refused once);</li>
 *   <li>accepted when the grant is held;</li>
 *   <li>refused when a write of a grant with a larger token and q permits, p + q &gt; N, was
 *       accepted: the two cannot both have been held at any log position, so this one had ended
 *       when that one was granted (it is stale: the semaphore form of a lock's lower token);</li>
 *   <li>refused when the held grants with larger tokens leave fewer than p permits (newer grants
 *       win, as under a lock's fence);</li>
 *   <li>otherwise accepted, the grant held; the held grants with smaller tokens that no longer
 *       fit are displaced, smallest token first, each logged as a DISPLACE before the WRITE.</li>
 * </ol>
 * For N = 1 this is the lock's {@code AT_LEAST} fence. Rule 3 never refuses a live holder when
 * the server keeps its limit; rules 4 and 5 may (a paused holder that the resource still counts
 * can push a live one out), which costs that holder its later writes but never lets the resource
 * see more than N permits held.
 *
 * <p>The resource fences each election with a fence of its own, as a semaphore of limit 1 whose
 * grants are leaderships: one leadership holds at a time, and a leader's write is refused once a
 * newer leader's was accepted.
 *
 * <p>{@link #breaches} replays a decision log independently and states what the checkers assert
 * of the resource's view. Not thread-safe: the resource calls it under its own lock.
 */
final class PermitFence {
    /** One violation of the resource's view found by {@link #breaches}. */
    record Breach(String description, long atNanos, List<String> writers) {}

    private static final class Semaphore {
        final int limit;
        /** Held grants: token → permits; and the process that wrote under each. */
        final TreeMap<Long, Integer> held = new TreeMap<>();
        final Map<Long, String> heldBy = new HashMap<>();
        /** Grants whose holding ended (or that were refused): never held again. */
        final Set<Long> ended = new HashSet<>();
        /** Per permits q (1..limit), the largest token of a grant with q permits that had a write accepted. */
        final long[] largestWith;

        Semaphore(int limit) {
            this.limit = limit;
            this.largestWith = new long[limit + 1];
        }

        int heldPermits() {
            return held.values().stream().mapToInt(Integer::intValue).sum();
        }

        /** A grant with a larger token whose accepted write rules out that (token, permits) still holds; 0 when none. */
        long excluding(long token, int permits) {
            for (int q = Math.max(1, limit - permits + 1); q <= limit; q++) {
                if (largestWith[q] > token) {
                    return largestWith[q];
                }
            }
            return 0;
        }
    }

    private final Map<String, Integer> limits;
    private final Map<String, Semaphore> semaphores = new HashMap<>();

    /** @param limits each semaphore's limit, by name */
    PermitFence(Map<String, Integer> limits) {
        this.limits = Map.copyOf(limits);
    }

    /** Decides a WRITE of {@code key} under grant {@code token} of {@code permits}: the DISPLACE decisions it caused, then the WRITE's. */
    List<PermitDecision> write(String key, long token, int permits, String writer, long now) {
        Semaphore s = semaphore(key);
        if (s == null || permits < 1 || permits > s.limit) {
            return List.of(refused(key, Event.WRITE, token, permits, writer, now, s == null ? "'" + key + "' is no semaphore of this run"
                    : permits + " permits of a limit of " + s.limit));
        }
        Integer held = s.held.get(token);
        if (held != null) {
            return List.of(held == permits ? new PermitDecision(key, Event.WRITE, token, permits, writer, now, true, null)
                    : refused(key, Event.WRITE, token, permits, writer, now, "grant " + token + " holds " + held + " permits"));
        }
        if (s.ended.contains(token)) {
            return List.of(refused(key, Event.WRITE, token, permits, writer, now, "the holding of grant " + token + " ended"));
        }
        long excluding = s.excluding(token, permits);
        if (excluding != 0) {
            s.ended.add(token);
            return List.of(refused(key, Event.WRITE, token, permits, writer, now, "stale: a write of grant " + excluding
                    + " was accepted, and the two cannot have been held together"));
        }
        int newer = s.held.tailMap(token, false).values().stream().mapToInt(Integer::intValue).sum();
        if (newer + permits > s.limit) {
            s.ended.add(token);
            return List.of(refused(key, Event.WRITE, token, permits, writer, now, "newer grants hold " + newer + " of "
                    + s.limit + " permits"));
        }
        List<PermitDecision> decisions = new ArrayList<>();
        s.held.put(token, permits);
        s.heldBy.put(token, FencedResource.processOf(writer));
        s.largestWith[permits] = Math.max(s.largestWith[permits], token);
        while (s.heldPermits() > s.limit) {
            Map.Entry<Long, Integer> oldest = s.held.pollFirstEntry();
            s.heldBy.remove(oldest.getKey());
            s.ended.add(oldest.getKey());
            decisions.add(new PermitDecision(key, Event.DISPLACE, oldest.getKey(), oldest.getValue(), writer, now, true,
                    "grant " + token + " needed its permits"));
        }
        decisions.add(new PermitDecision(key, Event.WRITE, token, permits, writer, now, true, null));
        return decisions;
    }

    /** The holder of grant {@code token} ends its holding (before releasing on the server). */
    PermitDecision end(String key, long token, int permits, String writer, long now) {
        Semaphore s = semaphore(key);
        if (s == null) {
            return refused(key, Event.END, token, permits, writer, now, "'" + key + "' is no semaphore of this run");
        }
        boolean wasHeld = s.held.remove(token) != null;
        s.heldBy.remove(token);
        s.ended.add(token);
        return wasHeld ? new PermitDecision(key, Event.END, token, permits, writer, now, true, null)
                : refused(key, Event.END, token, permits, writer, now, "grant " + token + " was not held (displaced, refused or never written)");
    }

    /** What {@code process} holds by the resource's view ({@code 2 permits of safety/s0 (grant 123)}), or null. */
    String heldBy(String process) {
        for (Map.Entry<String, Semaphore> s : semaphores.entrySet()) {
            for (Map.Entry<Long, String> grant : s.getValue().heldBy.entrySet()) {
                if (grant.getValue().equals(process)) {
                    return s.getValue().held.get(grant.getKey()) + " permits of " + s.getKey() + " (grant " + grant.getKey() + ")";
                }
            }
        }
        return null;
    }

    private Semaphore semaphore(String key) {
        Integer limit = limits.get(key);
        return limit == null ? null : semaphores.computeIfAbsent(key, k -> new Semaphore(limit));
    }

    private static PermitDecision refused(String key, Event event, long token, int permits, String writer, long now, String why) {
        return new PermitDecision(key, event, token, permits, writer, now, false, why);
    }

    /**
     * What the checkers assert of the resource's view, replaying its decisions in order with
     * holding as defined above: (a) the permits held never exceed the semaphore's limit; (b) no
     * write is accepted under a grant whose holding had ended; (c) no grant's first accepted write
     * comes after an accepted write of a grant with a larger token that it cannot have been held
     * beside (rule 3); (d) a held grant's writes carry its permits. Decisions of a semaphore
     * whose limit is unknown are a breach too.
     */
    static List<Breach> breaches(List<PermitDecision> decisions, Map<String, Integer> limits) {
        return breaches(decisions, limits, false);
    }

    /** {@link #breaches} of elections' leaders, fenced as semaphores of limit 1 and described as leaderships. */
    static List<Breach> leaderBreaches(List<PermitDecision> decisions, List<String> elections) {
        return breaches(decisions, RunInfo.leaderLimits(elections), true);
    }

    private static List<Breach> breaches(List<PermitDecision> decisions, Map<String, Integer> limits, boolean leaders) {
        String kind = leaders ? "election '" : "semaphore '";
        record Grant(long token, int permits, String writer) {}
        List<Breach> found = new ArrayList<>();
        Map<String, TreeMap<Long, Grant>> held = new HashMap<>();
        Map<String, Set<Long>> ended = new HashMap<>();
        Map<String, List<Grant>> everAccepted = new HashMap<>();
        for (PermitDecision d : decisions) {
            Integer limit = limits.get(d.key());
            if (limit == null) {
                if (d.accepted()) {
                    found.add(new Breach("'" + d.key() + "' is no " + (leaders ? "election" : "semaphore") + " of the run, yet the resource accepted " + d.event()
                            + " of grant " + d.token() + " (" + d.writer() + ")", d.atNanos(), List.of(d.writer())));
                }
                continue;
            }
            TreeMap<Long, Grant> holding = held.computeIfAbsent(d.key(), k -> new TreeMap<>());
            Set<Long> over = ended.computeIfAbsent(d.key(), k -> new HashSet<>());
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
                    Grant grant = new Grant(d.token(), d.permits(), d.writer());
                    if (mine != null) {
                        if (mine.permits() != d.permits()) {
                            found.add(new Breach(kind + d.key() + "': grant " + d.token() + " held with " + mine.permits()
                                    + " permits, yet a write of it with " + d.permits() + " was accepted (" + d.writer() + ")",
                                    d.atNanos(), List.of(mine.writer(), d.writer())));
                        }
                        continue;
                    }
                    if (over.contains(d.token())) {
                        found.add(new Breach(kind + d.key() + "': a write under grant " + d.token() + " was accepted ("
                                + d.writer() + ") after its holding had ended", d.atNanos(), List.of(d.writer())));
                    }
                    for (Grant newer : everAccepted.getOrDefault(d.key(), List.of())) {
                        if (newer.token() > d.token() && newer.permits() + d.permits() > limit) {
                            found.add(new Breach(leaders
                                    ? "stale write accepted: election '" + d.key() + "' accepted leadership " + d.token() + " (" + d.writer()
                                    + ") after a newer leader's, leadership " + newer.token() + " (" + newer.writer() + ")"
                                    : "stale write accepted: semaphore '" + d.key() + "' (limit " + limit + ") accepted grant "
                                    + d.token() + " with " + d.permits() + " permits (" + d.writer() + ") after grant " + newer.token()
                                    + " with " + newer.permits() + " (" + newer.writer() + "), which it cannot have been held beside",
                                    d.atNanos(), List.of(newer.writer(), d.writer())));
                            break;
                        }
                    }
                    everAccepted.computeIfAbsent(d.key(), k -> new ArrayList<>()).add(grant);
                    holding.put(d.token(), grant);
                    int permits = holding.values().stream().mapToInt(Grant::permits).sum();
                    if (permits > limit) {
                        found.add(new Breach((leaders ? "two leaders: election '" + d.key() + "' has " + permits + " leaderships held"
                                : "semaphore '" + d.key() + "' (limit " + limit + "): " + permits + " permits held") + " by the "
                                + "resource's view when it accepted " + d.writer() + ": " + describe(holding.values().stream()
                                .map(g -> g.token() + "x" + g.permits() + " (" + g.writer() + ")").toList()), d.atNanos(),
                                holding.values().stream().map(Grant::writer).toList()));
                    }
                }
            }
        }
        return found;
    }

    private static String describe(List<String> grants) {
        return "grants " + String.join(", ", grants);
    }
}
