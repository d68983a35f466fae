package io.tenure.it;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.function.BooleanSupplier;

/**
 * The storage an election's leader protects, in the test: one value, read and written by the
 * leader with its leadership's fencing token, fenced the way a real store behind an election
 * would be. Every leadership has its own token, larger than every earlier leadership's, so the
 * fence is one number, the highest token seen: a read or write is accepted only with a token at
 * least that (its own earlier read's, or a newer leader's would be above it). A lower token
 * belongs to a leader that a newer one has already deposed.
 *
 * <p>A refusal is a violation when the refused leader still trusts its leadership afterwards (its
 * lease is valid, and a client gives up a lease before the server can expire it); with a lost
 * lease it is the fence doing its job, and only counted.
 *
 * <p>It also counts who is inside, as each leader declares it: a leader enters after its
 * campaign returned and leaves before it resigns. Two leaders inside at once are an overlap; it
 * is a violation when both still trust their leaderships at that moment. When one of them had
 * lost its lease by then, the server may legitimately have elected the other, and the overlap is
 * counted as excused. Leaders do a read-modify-write, so an overlap also shows as a lost update.
 */
final class FencedLeaderRegister {
    /** An accepted write, in acceptance order. */
    record Write(long token, long value, String writer) {
    }

    /** A leader inside: its token, and whether its leadership is still trusted. */
    private record Leader(String who, long token, BooleanSupplier valid) {
        @Override
        public String toString() {
            return who + " (token " + token + ", " + (valid.getAsBoolean() ? "valid" : "lease lost") + ")";
        }
    }

    // Everything below is guarded by this.
    private final Map<String, Leader> inside = new LinkedHashMap<>();
    private long highestSeen = Long.MIN_VALUE;
    private long value;
    private final List<Write> accepted = new ArrayList<>();
    private final List<String> violations = new ArrayList<>();
    private final List<String> excused = new ArrayList<>();
    private long entries;

    /** {@code who} enters with its leadership's token; {@code valid} tells later whether it is still trusted. */
    synchronized void enter(String who, long token, BooleanSupplier valid) {
        if (inside.containsKey(who)) {
            violations.add(who + " entered twice (token " + token + ", inside " + inside.get(who) + ")");
        }
        Leader me = new Leader(who, token, valid);
        for (Leader other : inside.values()) {
            String overlap = me + " entered beside " + other;
            if (valid.getAsBoolean() && other.valid().getAsBoolean()) {
                violations.add("two leaders: " + overlap + ", both leaderships valid");
            } else {
                excused.add("overlap: " + overlap);
            }
        }
        inside.put(who, me);
        entries++;
    }

    /** {@code who} leaves (before it resigns on the server). */
    synchronized void exit(String who) {
        if (inside.remove(who) == null) {
            violations.add(who + " left without having entered");
        }
    }

    /** A fenced read with the leader's token: the value, or empty when refused. */
    synchronized OptionalLong read(String who) {
        Leader leader = leader(who, "read");
        if (leader == null || !fenced(leader, "read")) {
            return OptionalLong.empty();
        }
        highestSeen = leader.token();
        return OptionalLong.of(value);
    }

    /** A fenced write of {@code newValue} with the leader's token; whether it was accepted. */
    synchronized boolean write(String who, long newValue) {
        Leader leader = leader(who, "write");
        if (leader == null || !fenced(leader, "write")) {
            return false;
        }
        if (newValue != value + 1) {
            violations.add("lost update: " + leader + " wrote " + newValue + " over " + value);
        }
        highestSeen = leader.token();
        value = newValue;
        accepted.add(new Write(leader.token(), newValue, who));
        return true;
    }

    /** Whether the leader's token passes the fence; a refusal is recorded as a violation or excused. */
    private boolean fenced(Leader leader, String what) {
        if (leader.token() >= highestSeen) {
            return true;
        }
        String refusal = "stale " + what + " refused: " + leader + ": token " + highestSeen + " was seen";
        if (leader.valid().getAsBoolean()) {
            violations.add(refusal + ", while the leadership was valid");
        } else {
            excused.add(refusal);
        }
        return false;
    }

    private Leader leader(String who, String what) {
        Leader leader = inside.get(who);
        if (leader == null) {
            violations.add(who + " tried to " + what + " without being inside");
        }
        return leader;
    }

    /** Broken promises: overlaps of valid leaderships, refusals of valid leaderships, lost updates, misuse. */
    synchronized List<String> violations() {
        return List.copyOf(violations);
    }

    /** Overlaps and refusals explained by a lost lease. */
    synchronized List<String> excused() {
        return List.copyOf(excused);
    }

    synchronized List<Write> accepted() {
        return List.copyOf(accepted);
    }

    synchronized long value() {
        return value;
    }

    /** The highest token any accepted read or write carried. */
    synchronized long highestSeen() {
        return highestSeen;
    }

    /** How many times a leader entered. */
    synchronized long entries() {
        return entries;
    }

    /** Who is inside now, for the report of a moment (a kill). */
    synchronized List<String> insideNow() {
        return inside.values().stream().map(Leader::toString).toList();
    }
}
