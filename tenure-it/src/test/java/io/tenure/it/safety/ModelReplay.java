package io.tenure.it.safety;

import io.tenure.core.election.ElectionCampaign;
import io.tenure.core.election.ElectionCancel;
import io.tenure.core.election.ElectionCommand;
import io.tenure.core.election.ElectionProclaim;
import io.tenure.core.election.ElectionResign;
import io.tenure.core.election.ElectionTable;
import io.tenure.core.election.ElectionView;
import io.tenure.core.lock.LockRelease;
import io.tenure.core.scope.LockScope;
import io.tenure.core.scope.ScopeCommand;
import io.tenure.core.scope.ScopeRelease;
import io.tenure.core.scope.ScopeRequest;
import io.tenure.core.scope.ScopeTable;
import io.tenure.core.scope.ScopeView;
import io.tenure.core.semaphore.SemaphoreAcquire;
import io.tenure.core.semaphore.SemaphoreCancel;
import io.tenure.core.semaphore.SemaphoreCommand;
import io.tenure.core.semaphore.SemaphoreRelease;
import io.tenure.core.semaphore.SemaphoreTable;
import io.tenure.core.semaphore.SemaphoreView;
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
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
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
 * Semaphores (commands with log tags 12-14, read by the same codec) are followed apart from the
 * locks, by their results and wake-ups, and checked after every command that touches one:
 * <ul>
 *   <li>3: the permits of the holders add up to at most the limit; every holder's lease is alive;
 *       a lease holds at most one grant of a semaphore, and a repeated grant is the one it holds;
 *       the limit does not change while the semaphore exists; the holders and waiters by the
 *       members' results are the model's ({@link SemaphoreView}), in order, with their permits and
 *       tokens;</li>
 *   <li>8: strict FIFO: a newcomer is granted only when nobody waits, and the waiters are handed
 *       permits in the order they joined, the head first (a head that needs more permits than
 *       are free holds back the ones behind it).</li>
 * </ul>
 * Elections (tags 17-20) are followed the same way, by their results (Elected, Candidate,
 * Withdrawn, Resigned, Proclaimed) and wake-ups, and checked after every command that touches one:
 * <ul>
 *   <li>3: one leader at a time: a lease is elected only when nobody leads by the log; the
 *       leader's lease is alive; a repeated election is the leadership held; a proclaim is
 *       accepted only from the leader with its token; the leader and the candidates by the log
 *       are the model's ({@link ElectionView}), in order;</li>
 *   <li>8: candidates lead in the order they stood: a campaign is elected at once only when nobody
 *       stands in line, and each hand-off goes to the first candidate.</li>
 * </ul>
 * That each grant's token is larger than every earlier grant's of its name is check 1's, over the
 * same log ({@code SafetyChecker#tokens}). The lock checks leave the names used by semaphores and
 * elections alone.
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
    /** Semaphore commands replayed, checks of a semaphore after one, and permits handed to its waiters. */
    int semaphoreCommands;
    int semaphoreChecks;
    int semaphoreHandOffs;
    /** The most permits held at once of any semaphore, by the members' results. */
    int mostPermitsHeld;
    /** Election commands replayed, checks of an election after one, and leaderships handed to candidates. */
    int electionCommands;
    int electionChecks;
    int electionHandOffs;

    private final AppliedLog log;
    private final Findings findings;
    private final TenureState state = new TenureState();
    /** The holders by the members' logged results: key → {lease, token}. */
    private final Map<String, long[]> claimed = new HashMap<>();
    private final Set<Long> liveLeases = new HashSet<>();
    /** The queues by the members' logged results: key → lease → joinedAt, in join order. */
    private final Map<String, LinkedHashMap<Long, Long>> queues = new HashMap<>();
    /** The semaphores by the members' logged results, by name. */
    private final Map<String, Permits> semaphores = new HashMap<>();
    /** The elections by the members' logged results, by name. */
    private final Map<String, Leaders> elections = new HashMap<>();
    /** The held sets of lock scopes by the members' logged results, by token. */
    private final Map<Long, ScopeHold> scopeHolders = new HashMap<>();
    /** The scope sets let go by an explicit release, by token: their lease, so that a retried release is told apart. */
    private final java.util.Map<Long, Long> scopeReleased = new java.util.HashMap<>();
    /** Scope commands replayed, checks after a change of the held sets, sets handed to waiters, most sets held at once. */
    int scopeCommands;
    int scopeChecks;
    int scopeHandOffs;
    int mostScopesHeld;

    /** An election by the log: its leader ({lease, token}, null when nobody leads) and its candidates (lease → joinedAt) in order. */
    private static final class Leaders {
        long[] leader;
        final LinkedHashMap<Long, Long> candidates = new LinkedHashMap<>();
    }

    /** A semaphore by the log: its limit, holders (lease → {permits, token}) in grant order, waiters (lease → {permits, joinedAt}) in join order. */
    private static final class Permits {
        int limit;
        final LinkedHashMap<Long, long[]> holders = new LinkedHashMap<>();
        final LinkedHashMap<Long, long[]> waiters = new LinkedHashMap<>();

        boolean idle() {
            return holders.isEmpty() && waiters.isEmpty();
        }

        int held() {
            return holders.values().stream().mapToInt(h -> (int) h[0]).sum();
        }
    }

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
        Set<String> touched = followSemaphores(c, command, at);
        Set<String> led = followElections(c, command, at);
        checkHolders(c, at);
        if (followScopes(c, command, at)) {
            checkScopes(c, at);
        }
        checkSemaphores(c, touched, at);
        checkElections(c, led, at);
    }

    private void mismatch(AppliedLog.Command c, String what, long at) {
        mismatches++;
        findings.add(3, "index " + c.index() + " slot " + c.slot() + " (" + c.loggedBy() + "), " + c.command() + ": " + what, at);
    }

    /** The members' results as claims about holders and queues (checks 3 and 8). */
    private void followClaims(AppliedLog.Command c, Command command, long at) {
        JsonNode r = c.result();
        String where = "index " + c.index() + " (" + c.loggedBy() + ")";
        // A semaphore's results share their names with a lock's; followSemaphores and followElections read theirs.
        switch (command instanceof SemaphoreCommand || command instanceof ElectionCommand || command instanceof ScopeCommand ? ""
                : c.resultType()) {
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
            if (!e.path("type").asText().equals("Wake") || isWakeOf(e, SemaphoreTable.NAME) || isWakeOf(e, ElectionTable.NAME)
                    || isWakeOf(e, ScopeTable.NAME)) {
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

    /** Whether {@code effect} wakes a waiter of the primitive named {@code kind}. */
    private static boolean isWakeOf(JsonNode effect, String kind) {
        return effect.path("type").asText().equals("Wake") && effect.path("key").path("kind").asText().equals(kind);
    }

    /**
     * The members' results as claims about the held sets of lock scopes (check 3, issue 21):
     * Granted results of scope acquires (a repeat must be the set held), hand-offs to waiting sets,
     * releases (by token) and lease ends. A fresh grant goes to a live lease and conflicts with no
     * set held by the log. Returns whether anything about scopes changed (then {@link #checkScopes}).
     */
    private boolean followScopes(AppliedLog.Command c, Command command, long at) {
        boolean touched = false;
        JsonNode r = c.result();
        String where = "index " + c.index() + " (" + c.loggedBy() + ")";
        if (command instanceof ScopeCommand) {
            scopeCommands++;
            touched = true;
            if (c.resultType().equals("Granted")) {
                if (r.path("again").asBoolean()) {
                    ScopeHold held = scopeHolders.get(r.path("fencingToken").asLong());
                    if (held == null || held.leaseId() != r.path("leaseId").asLong()) {
                        findings.add(3, where + ": lock scopes granted again to lease " + r.path("leaseId").asLong() + " with token "
                                + r.path("fencingToken").asLong() + ", but by the log that token holds " + (held == null ? "nothing" : held), at);
                    }
                } else {
                    scopeGrant(r, where, at);
                }
            } else if (c.resultType().equals("Released") && command instanceof ScopeRelease rel) {
                ScopeHold held = scopeHolders.remove(rel.fencingToken());
                if (held == null && Long.valueOf(rel.leaseId()).equals(scopeReleased.get(rel.fencingToken()))) {
                    // A retried release of a set this lease let go before: answered again from the member's memo.
                } else if (held != null && held.leaseId() == rel.leaseId()) {
                    scopeReleased.put(rel.fencingToken(), rel.leaseId());
                } else {
                    findings.add(3, where + ": lease " + rel.leaseId() + " released lock scopes with token " + rel.fencingToken()
                            + ", but by the log that token holds " + (held == null ? "nothing" : held), at);
                    if (held != null) {
                        scopeHolders.put(held.token(), held);
                    }
                }
            }
        }
        if (c.resultType().equals("LeaseEnded")) {
            long lease = r.path("leaseId").asLong();
            touched |= scopeHolders.values().removeIf(h -> h.leaseId() == lease);
        }
        for (JsonNode e : c.effects()) {
            if (isWakeOf(e, ScopeTable.NAME)) {
                touched = true;
                if (e.path("result").path("type").asText().equals("Granted")) {
                    scopeHandOffs++;
                    scopeGrant(e.path("result"), where, at);
                }
            }
        }
        return touched;
    }

    /** A set held by the log: lease, token, and its parts. */
    private record ScopeHold(long leaseId, long token, List<ScopeRequest> parts) {
        @Override
        public String toString() {
            return "lease " + leaseId + " token " + token + " " + parts;
        }
    }

    private void scopeGrant(JsonNode granted, String where, long at) {
        long lease = granted.path("leaseId").asLong();
        long token = granted.path("fencingToken").asLong();
        List<ScopeRequest> parts = new ArrayList<>();
        for (JsonNode part : granted.path("scopes")) {
            LockScope scope = scopeOf(part.path("scope"));
            if (scope == null) {
                findings.add(3, where + ": a grant of lock scopes to lease " + lease + " names a scope this check cannot read: " + part, at);
                return;
            }
            parts.add(new ScopeRequest(scope, part.path("exclusive").asBoolean()));
        }
        ScopeHold grant = new ScopeHold(lease, token, List.copyOf(parts));
        if (!liveLeases.contains(lease)) {
            findings.add(3, where + ": lock scopes granted to lease " + lease + " (token " + token + "), which is not alive", at);
        }
        for (ScopeHold other : scopeHolders.values()) {
            String conflict = conflict(other.parts(), grant.parts());
            if (conflict != null) {
                findings.add(3, where + ": conflicting lock scopes held at once by the log: " + other + " and " + grant + " (" + conflict
                        + ")", at);
            }
        }
        ScopeHold before = scopeHolders.put(token, grant);
        if (before != null) {
            findings.add(3, where + ": token " + token + " granted for lock scopes twice: " + before + " and " + grant, at);
        }
        mostScopesHeld = Math.max(mostScopesHeld, scopeHolders.size());
    }

    /** The first pair of parts of two sets that conflict (overlap, one exclusive), described; null when none. */
    static String conflict(List<ScopeRequest> a, List<ScopeRequest> b) {
        for (ScopeRequest x : a) {
            for (ScopeRequest y : b) {
                if (LockScope.conflicts(x.scope(), x.exclusive(), y.scope(), y.exclusive())) {
                    return x + " against " + y;
                }
            }
        }
        return null;
    }

    /** A scope from the audit log's JSON of a {@link LockScope} (its record fields); null when unknown. */
    static LockScope scopeOf(JsonNode n) {
        if (n.has("start") && n.has("end") && n.has("inode")) {
            return new LockScope.ByteRange(n.path("inode").asLong(), n.path("start").asLong(), n.path("end").asLong());
        }
        if (n.has("inode")) {
            return new LockScope.Inode(n.path("inode").asLong());
        }
        if (n.has("path")) {
            return new LockScope.Path(n.path("path").asText());
        }
        if (n.has("name")) {
            return new LockScope.Named(n.path("name").asText());
        }
        return null;
    }

    /**
     * After a command that touched lock scopes: the sets held by the log have live leases and are
     * the model's ({@link ScopeTable#holders}: the same tokens, leases and parts), and no two of the
     * model's held sets conflict.
     */
    private void checkScopes(AppliedLog.Command c, long at) {
        scopeChecks++;
        String where = "index " + c.index() + " (" + c.loggedBy() + ")";
        for (ScopeHold h : scopeHolders.values()) {
            if (!liveLeases.contains(h.leaseId())) {
                findings.add(3, where + ": lock scopes are held by lease " + h.leaseId() + " (token " + h.token() + "), which is not alive", at);
            }
        }
        List<ScopeView.Holder> model = state.primitive(ScopeTable.class).holders();
        Map<Long, ScopeHold> byModel = new TreeMap<>();
        for (ScopeView.Holder h : model) {
            byModel.put(h.fencingToken(), new ScopeHold(h.leaseId(), h.fencingToken(), List.copyOf(h.scopes())));
        }
        if (!byModel.equals(new TreeMap<>(scopeHolders))) {
            findings.add(3, where + ": by the log the held sets of lock scopes are " + scopeHolders.values() + ", by the model "
                    + byModel.values(), at);
        }
        for (int i = 0; i < model.size(); i++) {
            for (int j = i + 1; j < model.size(); j++) {
                String conflict = conflict(model.get(i).scopes(), model.get(j).scopes());
                if (conflict != null) {
                    findings.add(3, where + ": the model holds conflicting lock scopes at once: lease " + model.get(i).leaseId() + " token "
                            + model.get(i).fencingToken() + " and lease " + model.get(j).leaseId() + " token " + model.get(j).fencingToken()
                            + " (" + conflict + ")", at);
                }
            }
        }
    }

    /** The members' results as claims about each semaphore's holders and waiters (checks 3 and 8); returns the names touched. */
    private Set<String> followSemaphores(AppliedLog.Command c, Command command, long at) {
        Set<String> touched = new TreeSet<>();
        JsonNode r = c.result();
        String where = "index " + c.index() + " (" + c.loggedBy() + ")";
        if (command instanceof SemaphoreCommand sc) {
            semaphoreCommands++;
            String key = sc instanceof SemaphoreAcquire a ? a.key() : sc instanceof SemaphoreRelease rel ? rel.key()
                    : ((SemaphoreCancel) sc).key();
            touched.add(key);
            Permits s = semaphores.computeIfAbsent(key, k -> new Permits());
            if (command instanceof SemaphoreAcquire a && !c.resultType().equals("Rejected")) {
                if (s.idle()) {
                    s.limit = a.limit();
                } else if (s.limit != a.limit()) {
                    findings.add(3, where + ": semaphore '" + key + "' of limit " + s.limit + " answered a request with limit "
                            + a.limit() + " (" + c.resultType() + ") while it exists", at);
                }
            }
            switch (c.resultType()) {
                case "Granted" -> {
                    boolean newcomer = command instanceof SemaphoreAcquire && !r.path("again").asBoolean();
                    if (newcomer && !s.waiters.isEmpty()) {
                        long first = s.waiters.keySet().iterator().next();
                        findings.add(8, where + ": semaphore '" + key + "' granted " + r.path("permits").asLong() + " permits to newcomer lease "
                                + r.path("leaseId").asLong() + " past " + s.waiters.size() + " waiter(s), first lease " + first
                                + " (waiting for " + s.waiters.get(first)[0] + ")", at);
                    }
                    semaphoreGrant(s, key, r, newcomer, where, at);
                }
                case "Queued" -> s.waiters.putIfAbsent(r.path("leaseId").asLong(),
                        new long[] {((SemaphoreAcquire) command).permits(), r.path("joinedAt").asLong()});
                case "Cancelled" -> s.waiters.remove(r.path("leaseId").asLong());
                case "Released" -> {
                    SemaphoreRelease rel = (SemaphoreRelease) command;
                    long[] held = s.holders.get(rel.leaseId());
                    if (held != null && held[1] == rel.fencingToken()) {
                        s.holders.remove(rel.leaseId());
                    }
                }
                default -> {
                }
            }
        }
        if (c.resultType().equals("LeaseEnded")) {
            long lease = r.path("leaseId").asLong();
            for (JsonNode k : r.path("released")) {
                Permits s = semaphores.get(k.asText());
                if (s != null && s.holders.remove(lease) != null) {
                    touched.add(k.asText());
                }
            }
        }
        for (JsonNode e : c.effects()) {
            if (!isWakeOf(e, SemaphoreTable.NAME)) {
                continue;
            }
            String key = e.path("key").path("key").asText();
            long lease = e.path("key").path("leaseId").asLong();
            Permits s = semaphores.computeIfAbsent(key, k -> new Permits());
            touched.add(key);
            if (e.path("result").path("type").asText().equals("Granted")) {
                semaphoreHandOffs++;
                if (!s.waiters.containsKey(lease)) {
                    findings.add(8, where + ": lease " + lease + " was handed permits of semaphore '" + key + "' as a waiter, but it "
                            + "was not waiting", at);
                } else if (s.waiters.keySet().iterator().next() != lease) {
                    long first = s.waiters.keySet().iterator().next();
                    findings.add(8, where + ": semaphore '" + key + "' handed " + s.waiters.get(lease)[0] + " permits to lease " + lease
                            + " (joined at " + s.waiters.get(lease)[1] + ") before lease " + first + " (joined earlier, at "
                            + s.waiters.get(first)[1] + ", still waiting for " + s.waiters.get(first)[0] + ")", at);
                }
                s.waiters.remove(lease);
                semaphoreGrant(s, key, e.path("result"), true, where, at);
            } else {
                s.waiters.remove(lease); // the lease ended while waiting (a refusal), or the wait was withdrawn
            }
        }
        if (c.resultType().equals("LeaseEnded")) {
            long lease = r.path("leaseId").asLong();
            semaphores.forEach((key, s) -> {
                if (s.holders.containsKey(lease) || s.waiters.containsKey(lease)) {
                    findings.add(3, where + ": lease " + lease + " ended but by the log still " + (s.holders.containsKey(lease)
                            ? "holds permits of" : "waits for") + " semaphore '" + key + "'", at);
                }
            });
        }
        return touched;
    }

    /**
     * A Granted result of a semaphore: a repeat ({@code fresh} false) must be the grant held; a
     * fresh one (a newcomer's, or a waiter's hand-off) is no second grant of the lease, and goes
     * to a live lease.
     */
    private void semaphoreGrant(Permits s, String key, JsonNode granted, boolean fresh, String where, long at) {
        long lease = granted.path("leaseId").asLong();
        long permits = granted.path("permits").asLong();
        long token = granted.path("fencingToken").asLong();
        long[] held = s.holders.get(lease);
        if (!fresh) {
            if (held == null || held[0] != permits || held[1] != token) {
                findings.add(3, where + ": semaphore '" + key + "' granted again to lease " + lease + " (" + permits + " permits, token "
                        + token + "), but by the log it holds " + (held == null ? "none" : held[0] + " with token " + held[1]), at);
            }
            return;
        }
        if (held != null) {
            findings.add(3, where + ": semaphore '" + key + "' granted " + permits + " permits to lease " + lease + " (token " + token
                    + "), which already holds " + held[0] + " with token " + held[1], at);
        }
        if (!liveLeases.contains(lease)) {
            findings.add(3, where + ": semaphore '" + key + "' granted to lease " + lease + ", which is not alive", at);
        }
        s.holders.put(lease, new long[] {permits, token});
        mostPermitsHeld = Math.max(mostPermitsHeld, s.held());
    }

    /**
     * After a command: each semaphore it touched holds at most its limit by the log, its holders'
     * leases are alive, and its holders and waiters by the log are the model's.
     */
    private void checkSemaphores(AppliedLog.Command c, Set<String> touched, long at) {
        SemaphoreTable table = state.primitive(SemaphoreTable.class);
        for (String key : touched) {
            semaphoreChecks++;
            Permits s = semaphores.get(key);
            String where = "index " + c.index() + " (" + c.loggedBy() + ")";
            if (s.held() > s.limit) {
                findings.add(3, where + ": semaphore '" + key + "' (limit " + s.limit + ") has " + s.held() + " permits held by the log: "
                        + describe(s.holders), at);
            }
            for (Long lease : s.holders.keySet()) {
                if (!liveLeases.contains(lease)) {
                    findings.add(3, where + ": semaphore '" + key + "' is held by lease " + lease + ", which is not alive", at);
                }
            }
            SemaphoreView view = table.semaphore(key);
            List<String> modelHolders = new ArrayList<>();
            List<String> modelWaiters = new ArrayList<>();
            if (view != null) {
                view.holders().forEach(h -> modelHolders.add(h.leaseId() + ":" + h.permits() + "@" + h.fencingToken()));
                view.waiters().forEach(w -> modelWaiters.add(w.leaseId() + ":" + w.permits() + "@" + w.joinedAt()));
            }
            List<String> logHolders = new ArrayList<>();
            List<String> logWaiters = new ArrayList<>();
            s.holders.forEach((lease, h) -> logHolders.add(lease + ":" + h[0] + "@" + h[1]));
            s.waiters.forEach((lease, w) -> logWaiters.add(lease + ":" + w[0] + "@" + w[1]));
            boolean sameLimit = view == null ? s.idle() : view.limit() == s.limit;
            if (!modelHolders.equals(logHolders) || !modelWaiters.equals(logWaiters) || !sameLimit) {
                findings.add(3, where + ": by the log semaphore '" + key + "' (limit " + s.limit + ") has holders " + logHolders
                        + " and waiters " + logWaiters + ", by the model " + (view == null ? "it does not exist"
                        : "(limit " + view.limit() + ") holders " + modelHolders + " and waiters " + modelWaiters)
                        + " (lease:permits@token, lease:permits@joinedAt)", at);
            }
        }
    }

    /** The members' results as claims about each election's leader and candidates (checks 3 and 8); returns the names touched. */
    private Set<String> followElections(AppliedLog.Command c, Command command, long at) {
        Set<String> touched = new TreeSet<>();
        JsonNode r = c.result();
        String where = "index " + c.index() + " (" + c.loggedBy() + ")";
        if (command instanceof ElectionCommand ec) {
            electionCommands++;
            String key = ec instanceof ElectionCampaign x ? x.key() : ec instanceof ElectionProclaim x ? x.key()
                    : ec instanceof ElectionResign x ? x.key() : ((ElectionCancel) ec).key();
            touched.add(key);
            Leaders e = elections.computeIfAbsent(key, k -> new Leaders());
            long lease = r.path("leaseId").asLong();
            switch (c.resultType()) {
                case "Elected" -> {
                    long token = r.path("fencingToken").asLong();
                    if (r.path("again").asBoolean()) {
                        if (e.leader == null || e.leader[0] != lease || e.leader[1] != token) {
                            findings.add(3, where + ": election '" + key + "' elected lease " + lease + " again with token " + token
                                    + ", but by the log " + describeLeader(e.leader), at);
                        }
                    } else {
                        if (!e.candidates.isEmpty()) {
                            findings.add(8, where + ": election '" + key + "' elected newcomer lease " + lease + " past "
                                    + e.candidates.size() + " candidate(s), first lease " + e.candidates.keySet().iterator().next(), at);
                        }
                        elect(e, key, lease, token, where, at);
                    }
                }
                case "Candidate" -> e.candidates.putIfAbsent(lease, r.path("joinedAt").asLong());
                case "Withdrawn" -> e.candidates.remove(lease);
                case "Resigned" -> {
                    ElectionResign resign = (ElectionResign) command;
                    if (e.leader != null && e.leader[0] == resign.leaseId() && e.leader[1] == resign.fencingToken()) {
                        e.leader = null; // the next candidate's election, if any, is among the effects
                    }
                }
                case "Proclaimed" -> {
                    ElectionProclaim proclaim = (ElectionProclaim) command;
                    if (e.leader == null || e.leader[0] != proclaim.leaseId() || e.leader[1] != proclaim.fencingToken()) {
                        findings.add(3, where + ": election '" + key + "' accepted a proclaim of lease " + proclaim.leaseId()
                                + " with token " + proclaim.fencingToken() + ", but by the log " + describeLeader(e.leader), at);
                    }
                }
                default -> {
                }
            }
        }
        if (c.resultType().equals("LeaseEnded")) {
            long lease = r.path("leaseId").asLong();
            for (JsonNode k : r.path("released")) {
                Leaders e = elections.get(k.asText());
                if (e != null && e.leader != null && e.leader[0] == lease) {
                    e.leader = null;
                    touched.add(k.asText());
                }
            }
        }
        for (JsonNode e : c.effects()) {
            if (!isWakeOf(e, ElectionTable.NAME)) {
                continue;
            }
            String key = e.path("key").path("key").asText();
            long lease = e.path("key").path("leaseId").asLong();
            Leaders election = elections.computeIfAbsent(key, k -> new Leaders());
            touched.add(key);
            if (e.path("result").path("type").asText().equals("Elected")) {
                electionHandOffs++;
                if (!election.candidates.containsKey(lease)) {
                    findings.add(8, where + ": lease " + lease + " was handed election '" + key + "' as a candidate, but it was not"
                            + " standing", at);
                } else if (election.candidates.keySet().iterator().next() != lease) {
                    long first = election.candidates.keySet().iterator().next();
                    findings.add(8, where + ": election '" + key + "' handed to lease " + lease + " (stood at "
                            + election.candidates.get(lease) + ") before lease " + first + " (stood earlier, at "
                            + election.candidates.get(first) + ", still a candidate)", at);
                }
                election.candidates.remove(lease);
                elect(election, key, lease, e.path("result").path("fencingToken").asLong(), where, at);
            } else {
                election.candidates.remove(lease); // the lease ended while standing (a refusal), or the candidacy was withdrawn
            }
        }
        if (c.resultType().equals("LeaseEnded")) {
            long lease = r.path("leaseId").asLong();
            elections.forEach((key, e) -> {
                if (e.leader != null && e.leader[0] == lease || e.candidates.containsKey(lease)) {
                    findings.add(3, where + ": lease " + lease + " ended but by the log still " + (e.candidates.containsKey(lease)
                            ? "stands in" : "leads") + " election '" + key + "'", at);
                }
            });
        }
        return touched;
    }

    /** A fresh leadership: nobody else leads by the log, and the lease is alive. */
    private void elect(Leaders e, String key, long lease, long token, String where, long at) {
        if (e.leader != null) {
            findings.add(3, where + ": two leaders of election '" + key + "': lease " + e.leader[0] + " (token " + e.leader[1]
                    + ") and lease " + lease + " (token " + token + ")", at);
        }
        if (!liveLeases.contains(lease)) {
            findings.add(3, where + ": election '" + key + "' elected lease " + lease + ", which is not alive", at);
        }
        e.leader = new long[] {lease, token};
    }

    /** After a command: each election it touched has, by the log, the model's leader and candidates, and a live leader. */
    private void checkElections(AppliedLog.Command c, Set<String> touched, long at) {
        ElectionTable table = state.primitive(ElectionTable.class);
        for (String key : touched) {
            electionChecks++;
            Leaders e = elections.get(key);
            String where = "index " + c.index() + " (" + c.loggedBy() + ")";
            if (e.leader != null && !liveLeases.contains(e.leader[0])) {
                findings.add(3, where + ": election '" + key + "' is led by lease " + e.leader[0] + ", which is not alive", at);
            }
            ElectionView view = table.election(key);
            String modelLeader = view == null ? "nobody" : view.leaderLeaseId() + "@" + view.fencingToken();
            List<String> modelCandidates = new ArrayList<>();
            if (view != null) {
                view.candidates().forEach(w -> modelCandidates.add(w.leaseId() + "@" + w.joinedAt()));
            }
            String logLeader = e.leader == null ? "nobody" : e.leader[0] + "@" + e.leader[1];
            List<String> logCandidates = new ArrayList<>();
            e.candidates.forEach((lease, joined) -> logCandidates.add(lease + "@" + joined));
            if (!modelLeader.equals(logLeader) || !modelCandidates.equals(logCandidates)) {
                findings.add(3, where + ": by the log election '" + key + "' is led by " + logLeader + " with candidates "
                        + logCandidates + ", by the model by " + modelLeader + " with candidates " + modelCandidates
                        + " (lease@token, lease@joinedAt)", at);
            }
        }
    }

    private static String describeLeader(long[] leader) {
        return leader == null ? "nobody leads" : "lease " + leader[0] + " leads with token " + leader[1];
    }

    private static String describe(LinkedHashMap<Long, long[]> holders) {
        List<String> text = new ArrayList<>();
        holders.forEach((lease, h) -> text.add("lease " + lease + " " + h[0] + " with token " + h[1]));
        return String.join(", ", text);
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
        keys.removeAll(semaphores.keySet());
        keys.removeAll(elections.keySet());
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
