package io.tenure.it.safety;

import io.tenure.core.lock.LockRelease;
import com.fasterxml.jackson.databind.JsonNode;
import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.Command;
import io.tenure.core.kernel.Effect;
import io.tenure.core.lock.LockTable;
import io.tenure.core.lock.LockView;
import io.tenure.core.TenureState;
import io.tenure.server.raft.AuditLog;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Replays the merged applied log, in log order, through the pure core ({@link TenureState}) as the
 * model, from the empty state, and checks on the way:
 * <ul>
 *   <li>3: each result and effect the members logged equals the model's; at every index each key
 *       has at most one holder by the members' own results, and every holder's lease is alive, in
 *       the members' results and in the model;</li>
 *   <li>5: the members' state digests equal the model's at the same index;</li>
 *   <li>8: by the members' results, a waiter is granted only when every lease that joined the
 *       queue before it has left it (granted, cancelled, or its lease ended), and nobody takes a
 *       lock past its waiters.</li>
 * </ul>
 * It also collects the model's watch events, which check 9 compares the streams with. The replay
 * stops at the first index that no member logged completely: the model cannot skip a command.
 */
final class ModelReplay {
    /** A watch event as the model produced it. */
    record Event(long revision, String key, boolean put, long leaseId, long atNanos) {}

    /** The model's watch events by revision, over the replayed part of the log. */
    final TreeMap<Long, Event> events = new TreeMap<>();
    /** The last index replayed; -1 when the replay could not start. */
    long replayedUpTo = -1;
    /** Why the replay stopped before the end of the log, or did not start; null when it covered it all. */
    String stopped;
    int commands;
    int mismatches;
    int digestsCompared;
    int queueGrants;
    int holderChecks;

    private final AppliedLog log;
    private final Findings findings;
    private final TenureState state = new TenureState();
    /** The holders by the members' logged results: key → {lease, token}. */
    private final Map<String, long[]> claimed = new HashMap<>();
    private final Set<Long> liveLeases = new HashSet<>();
    /** The queues by the members' logged results: key → lease → joinedAt, in join order. */
    private final Map<String, LinkedHashMap<Long, Long>> queues = new HashMap<>();

    private ModelReplay(AppliedLog log, Findings findings) {
        this.log = log;
        this.findings = findings;
    }

    static ModelReplay run(AppliedLog log, Findings findings) {
        ModelReplay replay = new ModelReplay(log, findings);
        replay.run();
        return replay;
    }

    private void run() {
        if (log.indexes.isEmpty()) {
            stopped = "no member logged an applied index";
            return;
        }
        if (!log.anyBeganEmpty()) {
            stopped = "every member's log begins at a snapshot, so the model has no starting state";
            return;
        }
        long expected = log.firstIndex();
        for (AppliedLog.Index ix : log.indexes.values()) {
            if (ix.index != expected) {
                stopped = "no member logged indexes " + expected + " to " + (ix.index - 1);
                return;
            }
            if (!ix.complete()) {
                stopped = "no member logged every command of index " + ix.index;
                return;
            }
            for (AppliedLog.Command c : ix.commands) {
                Command command;
                try {
                    command = CommandDecoder.decode(c.command());
                } catch (RuntimeException e) {
                    stopped = "index " + ix.index + ": " + e.getMessage();
                    return;
                }
                apply(c, command, ix.firstAt);
            }
            compareDigests(ix);
            replayedUpTo = ix.index;
            expected++;
        }
    }

    private void apply(AppliedLog.Command c, Command command, long at) {
        commands++;
        if (c.skippedByTerm()) {
            if (!c.resultType().equals("Skipped") || !c.effects().isEmpty()) {
                mismatch(c, "the adapter skipped it (a carried-over expiry) yet logged " + c.result() + " " + c.effects(), at);
            }
            return;
        }
        Applied applied = state.apply(c.position(), command);
        JsonNode result = normal(AuditLog.result(applied.result()));
        JsonNode effects = normal(AuditLog.effects(applied.effects()));
        if (!result.equals(c.result()) || !effects.equals(c.effects())) {
            mismatch(c, "the member logged " + c.result() + " " + c.effects() + " but the model gives " + result + " " + effects, at);
        }
        for (Effect e : applied.effects()) {
            if (e instanceof Effect.Watched w) {
                var ev = w.event();
                events.put(ev.revision(), new Event(ev.revision(), ev.key(), ev.type() == io.tenure.core.watch.WatchEvent.Type.PUT,
                        ev.kv().leaseId(), at));
            }
        }
        followClaims(c, command, at);
        checkHolders(c, at);
    }

    private void mismatch(AppliedLog.Command c, String what, long at) {
        mismatches++;
        findings.add(3, "index " + c.index() + " slot " + c.slot() + " (" + c.loggedBy() + "), " + c.command() + ": " + what, at);
    }

    /** The members' results as claims about holders and queues (checks 3 and 8). */
    private void followClaims(AppliedLog.Command c, Command command, long at) {
        JsonNode r = c.result();
        String where = "index " + c.index() + " (" + c.loggedBy() + ")";
        switch (c.resultType()) {
            case "LeaseGranted" -> liveLeases.add(r.path("leaseId").asLong());
            case "Granted" -> {
                String key = r.path("key").asText();
                long lease = r.path("leaseId").asLong();
                long token = r.path("fencingToken").asLong();
                long[] held = claimed.get(key);
                if (r.path("again").asBoolean()) {
                    if (held == null || held[0] != lease || held[1] != token) {
                        findings.add(3, where + ": lock '" + key + "' granted again to lease " + lease + " with token " + token
                                + ", but by the log it is " + describe(held), at);
                    }
                } else {
                    grant(key, lease, token, where, at);
                    LinkedHashMap<Long, Long> queue = queues.get(key);
                    if (queue != null && !queue.isEmpty()) {
                        findings.add(8, where + ": lock '" + key + "' granted to newcomer lease " + lease + " past "
                                + queue.size() + " waiter(s), first lease " + queue.keySet().iterator().next(), at);
                    }
                }
            }
            case "Released" -> {
                if (command instanceof LockRelease rel) {
                    long[] held = claimed.get(rel.key());
                    if (held != null && held[0] == rel.leaseId() && held[1] == rel.fencingToken()) {
                        claimed.remove(rel.key());
                    }
                }
            }
            case "Queued" -> queues.computeIfAbsent(r.path("key").asText(), k -> new LinkedHashMap<>())
                    .putIfAbsent(r.path("leaseId").asLong(), r.path("joinedAt").asLong());
            case "Cancelled" -> leaveQueue(r.path("key").asText(), r.path("leaseId").asLong());
            case "LeaseEnded" -> {
                long lease = r.path("leaseId").asLong();
                liveLeases.remove(lease);
                for (JsonNode k : r.path("released")) {
                    long[] held = claimed.get(k.asText());
                    if (held != null && held[0] == lease) {
                        claimed.remove(k.asText());
                    }
                }
            }
            default -> {
            }
        }
        for (JsonNode e : c.effects()) {
            if (!e.path("type").asText().equals("Wake")) {
                continue;
            }
            String key = e.path("key").path("key").asText();
            long lease = e.path("key").path("leaseId").asLong();
            switch (e.path("result").path("type").asText()) {
                case "Granted" -> {
                    queueGrants++;
                    LinkedHashMap<Long, Long> queue = queues.get(key);
                    if (queue == null || !queue.containsKey(lease)) {
                        findings.add(8, where + ": lease " + lease + " was handed lock '" + key + "' as a waiter, but it was not waiting", at);
                    } else {
                        long first = queue.keySet().iterator().next();
                        if (first != lease) {
                            findings.add(8, where + ": lock '" + key + "' handed to lease " + lease + " (joined at "
                                    + queue.get(lease) + ") before lease " + first + " (joined earlier, at " + queue.get(first)
                                    + ", still waiting with a live lease)", at);
                        }
                    }
                    leaveQueue(key, lease);
                    grant(key, lease, e.path("result").path("fencingToken").asLong(), where, at);
                }
                // The lease ended while waiting (a refusal), or the wait was withdrawn.
                case "Rejected", "Cancelled" -> leaveQueue(key, lease);
                default -> {
                }
            }
        }
        if (c.resultType().equals("LeaseEnded")) {
            long lease = r.path("leaseId").asLong();
            claimed.forEach((key, held) -> {
                if (held[0] == lease) {
                    findings.add(3, where + ": lease " + lease + " ended but by the log still holds '" + key + "'", at);
                }
            });
        }
    }

    private void grant(String key, long lease, long token, String where, long at) {
        long[] held = claimed.get(key);
        if (held != null) {
            findings.add(3, where + ": two holders of lock '" + key + "': lease " + held[0] + " (token " + held[1]
                    + ") and lease " + lease + " (token " + token + ")", at);
        }
        if (!liveLeases.contains(lease)) {
            findings.add(3, where + ": lock '" + key + "' granted to lease " + lease + ", which is not alive", at);
        }
        claimed.put(key, new long[] {lease, token});
    }

    private void leaveQueue(String key, long lease) {
        LinkedHashMap<Long, Long> queue = queues.get(key);
        if (queue != null) {
            queue.remove(lease);
        }
    }

    /** After a command: the keys it touched have, in the model, a holder whose lease is alive, and the one the log says. */
    private void checkHolders(AppliedLog.Command c, long at) {
        Set<String> keys = new TreeSet<>();
        if (c.result().has("key")) {
            keys.add(c.result().path("key").asText());
        }
        c.result().path("released").forEach(k -> keys.add(k.asText()));
        c.effects().forEach(e -> {
            if (e.path("type").asText().equals("Wake")) {
                keys.add(e.path("key").path("key").asText());
            } else if (e.path("type").asText().equals("Watched")) {
                keys.add(e.path("event").path("kv").path("key").asText());
            }
        });
        for (String key : keys) {
            holderChecks++;
            LockView view = state.primitive(LockTable.class).lock(key);
            if (view != null && state.lease(view.leaseId()) == null) {
                findings.add(3, "index " + c.index() + ": in the model, lock '" + key + "' is held by lease " + view.leaseId()
                        + ", which is not alive", at);
            }
            long[] held = claimed.get(key);
            boolean same = view == null ? held == null : held != null && held[0] == view.leaseId() && held[1] == view.fencingToken();
            if (!same) {
                findings.add(3, "index " + c.index() + " (" + c.loggedBy() + "): by the log lock '" + key + "' is "
                        + describe(held) + ", by the model " + (view == null ? "free" : "held by lease " + view.leaseId()
                        + " with token " + view.fencingToken()), at);
            }
        }
    }

    private static String describe(long[] held) {
        return held == null ? "free" : "held by lease " + held[0] + " with token " + held[1];
    }

    private void compareDigests(AppliedLog.Index ix) {
        var digests = log.digests.get(ix.index);
        if (digests == null) {
            return;
        }
        long model = AuditLog.digest(state);
        for (AppliedLog.Digest d : digests) {
            digestsCompared++;
            if (d.digest() != model) {
                findings.add(5, "index " + ix.index + ": " + d.loggedBy() + "'s state digest " + d.digest()
                        + " differs from the model's " + model + " after replaying the same log", d.atNanos());
            }
        }
    }

    static JsonNode normal(JsonNode node) {
        try {
            return AppliedLog.JSON.readTree(AppliedLog.JSON.writeValueAsString(node));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
