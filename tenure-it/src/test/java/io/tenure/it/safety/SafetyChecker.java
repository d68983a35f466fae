package io.tenure.it.safety;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tenure.it.safety.CheckOutcome.Status;
import io.tenure.it.safety.Op.Kind;
import io.tenure.it.safety.Op.Outcome;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

/**
 * The safety suite's checker (issue 6): reads a run directory (the clients' histories, the fenced
 * resource's log, the nemesis's timeline and the members' audit logs) and decides the ten checks.
 * Where a run's data cannot decide a check, its outcome says "not exercised" and why, rather than
 * passing silently.
 *
 * <p>The members' audit logs are merged into one applied log ({@link AppliedLog}) and replayed
 * through the pure core as the model ({@link ModelReplay}). Times are compared on the machine's
 * monotonic clock, which the members, the clients and the nemesis share; "applied at" means when
 * the first member applied an index.
 */
public final class SafetyChecker {
    static final String[] TITLES = {
        null,
        "tokens strictly increase per key, never issued twice",
        "no stale write accepted, no acknowledged update lost",
        "one holder per lock, at most the limit's permits per semaphore, one leader per election, at every index, with a live lease",
        "real-time order; the model reproduces every result",
        "replicas at the same index have the same state",
        "no acknowledged operation lost after recovery",
        "no lease expired sooner than its TTL after its last keep-alive",
        "FIFO: waiters with live leases granted in join order",
        "watch streams ordered, gapless, never back in time",
        "liveness after heal",
    };
    /** The operations that go through the log and name a log position in their answer. */
    private static final Set<Kind> LOG_KINDS = EnumSet.of(Kind.ACQUIRE, Kind.RELEASE, Kind.GRANT, Kind.KEEPALIVE, Kind.REVOKE);
    /** The acquires whose answer is a grant with its fencing token: a lock's, a semaphore's, an election's leadership. */
    private static final Set<Kind> GRANT_KINDS = EnumSet.of(Kind.ACQUIRE, Kind.SEM_ACQUIRE, Kind.CAMPAIGN);
    /** The results that grant: a lock's or a semaphore's Granted, an election's Elected. */
    private static final Set<String> GRANTED = Set.of("Granted", "Elected");
    /** The key check 1 files grants of lock scopes under (their tokens increase over all of them, as over every grant). */
    static final String SCOPES = "(lock scopes)";
    private static final ObjectMapper JSON = new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);
    private static final long NEARBY_NANOS = TimeUnit.SECONDS.toNanos(2);
    private static final int AROUND = 20;

    private final Path runDir;
    private final RunInfo run;
    private final List<Op> ops = new ArrayList<>();
    private final List<ResourceWrite> resource;
    /** The fenced resource's decisions about semaphores' grants ({@code permits.jsonl}; absent before semaphores). */
    private final List<PermitDecision> permits;
    /** The same for elections' leaderships ({@code leaders.jsonl}; absent before elections). */
    private final List<PermitDecision> leaders;
    /** The same for the byte-range writers' grants of lock scopes ({@code ranges.jsonl}; absent before them, issue 21). */
    private final List<RangeDecision> ranges;
    private final List<FaultEvent> faults;
    private final AppliedLog log;
    private final Set<String> clients = new TreeSet<>();
    private final Findings findings = new Findings();
    private final String[] evidence = new String[11];
    private final boolean[] exercised = new boolean[11];
    private final List<Verdict.Recovery> recoveries = new ArrayList<>();
    private final List<String> notes = new ArrayList<>();
    private ModelReplay replay;

    private SafetyChecker(Path runDir) {
        this.runDir = runDir;
        try {
            this.run = RunInfo.read(runDir);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException("cannot read " + runDir.resolve(RunInfo.FILE), e);
        }
        Path history = runDir.resolve("history");
        if (Files.isDirectory(history)) {
            try (var files = Files.list(history)) {
                for (Path file : files.filter(f -> f.toString().endsWith(".jsonl")).sorted().toList()) {
                    ops.addAll(lines(file, Op.class));
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        ops.forEach(op -> clients.add(op.process()));
        this.resource = lines(runDir.resolve("resource.jsonl"), ResourceWrite.class);
        this.permits = lines(runDir.resolve("permits.jsonl"), PermitDecision.class);
        this.leaders = lines(runDir.resolve("leaders.jsonl"), PermitDecision.class);
        this.ranges = lines(runDir.resolve("ranges.jsonl"), RangeDecision.class);
        List<FaultEvent> timeline = new ArrayList<>(lines(runDir.resolve("nemesis.jsonl"), FaultEvent.class));
        timeline.sort(Comparator.comparingLong(FaultEvent::atNanos));
        this.faults = List.copyOf(timeline);
        this.log = AppliedLog.read(runDir, run.members());
    }

    /** Checks the run in {@code runDir}; see the class comment. */
    public static Verdict check(Path runDir) {
        return new SafetyChecker(runDir).verdict();
    }

    private Verdict verdict() {
        for (AppliedLog.Member m : log.members.values()) {
            if (!m.present) {
                notes.add("member " + m.name + " has no audit log");
            }
            if (m.tornLines > 0 || m.malformedLines > 0) {
                notes.add("member " + m.name + ": " + m.tornLines + " torn last line(s) skipped (killed mid-write)"
                        + (m.malformedLines > 0 ? ", " + m.malformedLines + " malformed line(s) inside the file skipped" : ""));
            }
        }
        replay = ModelReplay.run(log, findings);
        if (replay.stopped != null) {
            notes.add("model replay: " + (replay.replayedUpTo < 0 ? "did not start: " : "covered indexes " + log.firstIndex()
                    + " to " + replay.replayedUpTo + ", then stopped: ") + replay.stopped);
        }
        tokens();
        resource();
        modelAndHolders();
        realTime();
        replicas();
        durability();
        expiries();
        fifo();
        watches();
        liveness();

        List<CheckOutcome> outcomes = new ArrayList<>();
        for (int check = 1; check <= 10; check++) {
            int found = findings.count(check);
            Status status = found > 0 ? Status.VIOLATED : exercised[check] ? Status.PASSED : Status.NOT_EXERCISED;
            String text = evidence[check] == null ? "" : evidence[check];
            if (found > Findings.KEPT_PER_CHECK) {
                text += "; " + found + " violations, the first " + Findings.KEPT_PER_CHECK + " listed";
            }
            outcomes.add(new CheckOutcome(check, TITLES[check], status, text));
        }
        List<Violation> violations = new ArrayList<>();
        for (Findings.Found f : findings.kept()) {
            violations.add(new Violation(f.check(), TITLES[f.check()], f.description(), f.atNanos(), around(f), timeline(f.atNanos())));
        }
        // Earliest first, so that the report's first violation is where things began to go wrong.
        violations.sort(Comparator.comparingLong(v -> v.atNanos() == 0 ? Long.MAX_VALUE : v.atNanos()));
        return new Verdict(runDir, run, outcomes, violations, statistics());
    }

    // ---- check 1 -------------------------------------------------------------------------------

    /**
     * A grant found in the log: by a Granted or Elected result (not a repeat) or a hand-off to a
     * waiter; a lock's or an election's leadership ({@code permits} 0), or a semaphore's (a Granted
     * result of either kind has the same name).
     */
    private record Grant(String key, long leaseId, long token, long index, long atNanos, String loggedBy, int permits) {}

    private List<Grant> grants() {
        List<Grant> grants = new ArrayList<>();
        for (AppliedLog.Command c : log.commands()) {
            long at = log.firstAt(c.index());
            JsonNode r = c.result();
            if (GRANTED.contains(c.resultType()) && !r.path("again").asBoolean()) {
                grants.add(new Grant(keyOf(r), r.path("leaseId").asLong(), r.path("fencingToken").asLong(), c.index(), at,
                        c.loggedBy(), r.path("permits").asInt()));
            }
            for (JsonNode e : c.effects()) {
                JsonNode g = AppliedLog.handOff(e);
                if (g != null) {
                    grants.add(new Grant(keyOf(g), g.path("leaseId").asLong(), g.path("fencingToken").asLong(), c.index(), at,
                            c.loggedBy(), g.path("permits").asInt()));
                }
            }
        }
        return grants;
    }

    private void tokens() {
        Map<Long, Grant> byToken = new HashMap<>();
        Map<String, Grant> lastByKey = new HashMap<>();
        List<Grant> grants = grants();
        for (Grant g : grants) {
            if (g.token() >>> 16 != g.index()) {
                findings.add(1, nameOf(g.key()) + " granted to lease " + g.leaseId() + " at index " + g.index() + " with token "
                        + g.token() + ", which is not a position of that index (" + (g.token() >>> 16) + ")", g.atNanos());
            }
            Grant last = lastByKey.put(g.key(), g);
            if (last != null && g.token() <= last.token()) {
                findings.add(1, nameOf(g.key()) + ": token " + g.token() + " (lease " + g.leaseId() + ", index " + g.index()
                        + ") granted after token " + last.token() + " (lease " + last.leaseId() + ", index " + last.index() + ")", g.atNanos());
            }
            Grant other = byToken.putIfAbsent(g.token(), g);
            if (other != null) {
                findings.add(1, "token " + g.token() + " issued twice: " + nameOf(other.key()) + " to lease " + other.leaseId() + " at index "
                        + other.index() + ", and " + nameOf(g.key()) + " to lease " + g.leaseId() + " at index " + g.index(), g.atNanos());
            }
        }
        Map<Long, Op> clientByToken = new HashMap<>();
        int clientGrants = 0;
        for (Op op : ops) {
            if (!GRANT_KINDS.contains(op.kind()) || op.outcome() != Outcome.OK) {
                continue;
            }
            clientGrants++;
            Op other = clientByToken.putIfAbsent(op.token(), op);
            if (other != null && (!java.util.Objects.equals(other.key(), op.key()) || other.leaseId() != op.leaseId())) {
                findings.add(1, "token " + op.token() + " returned to two holders: " + describe(other) + " and " + describe(op),
                        op.completeNanos(), other, op);
            }
            Grant logged = byToken.get(op.token());
            if (logged != null && (!logged.key().equals(op.key()) || logged.leaseId() != op.leaseId())) {
                findings.add(1, "token " + op.token() + " issued twice: the log grants it to lease " + logged.leaseId() + " for '"
                        + logged.key() + "' (index " + logged.index() + "), and " + describe(op) + " was given it too", op.completeNanos(), op);
            }
        }
        Set<String> keys = new TreeSet<>();
        grants.forEach(g -> keys.add(g.key()));
        long semaphoreGrants = grants.stream().filter(g -> g.permits() > 0).count();
        long leaderships = grants.stream().filter(g -> run.elections().contains(g.key())).count();
        exercised[1] = !grants.isEmpty() || clientGrants > 0;
        evidence[1] = grants.size() + " grants on " + keys.size() + " key(s) in the applied log" + (semaphoreGrants > 0 ? " ("
                + semaphoreGrants + " of semaphores, each with its own token)" : "") + (leaderships > 0 ? " (" + leaderships
                + " leaderships of elections, one leader per token)" : "") + ", " + clientGrants + " acknowledged acquires";
    }

    /** The key of a grant in the log; a grant of lock scopes (it names {@code scopes}, no key) is {@link #SCOPES}. */
    private static String keyOf(JsonNode granted) {
        return granted.has("scopes") && !granted.has("key") ? SCOPES : granted.path("key").asText();
    }

    /** How a name reads in a finding: {@code lock 'k'}, {@code semaphore 's'} or {@code election 'e'}. */
    private String nameOf(String key) {
        if (key.equals(SCOPES)) {
            return "a set of lock scopes";
        }
        return (run.semaphores().containsKey(key) ? "semaphore '" : run.elections().contains(key) ? "election '" : "lock '") + key + "'";
    }

    // ---- check 2 -------------------------------------------------------------------------------

    private void resource() {
        Map<String, ResourceWrite> lastAccepted = new HashMap<>();
        Map<String, Long> highest = new HashMap<>();
        Map<String, ResourceWrite> byWriter = new HashMap<>();
        /** Per accepted write, the value the key had just before it. */
        Map<ResourceWrite, Long> valueBefore = new java.util.IdentityHashMap<>();
        int accepted = 0;
        for (ResourceWrite w : resource) {
            byWriter.putIfAbsent(w.writer(), w);
            if (!w.accepted()) {
                continue;
            }
            accepted++;
            Long high = highest.get(w.key());
            if (high != null && w.token() < high) {
                findings.add(2, "stale write accepted: '" + w.key() + "' accepted token " + w.token() + " (value " + w.value()
                        + ", " + w.writer() + ") after it had accepted token " + high, w.atNanos(), opsOf(w.writer()));
            }
            ResourceWrite before = lastAccepted.get(w.key());
            if (before != null && w.value() <= before.value()) {
                findings.add(2, "lost update: '" + w.key() + "' accepted value " + w.value() + " (" + w.writer() + ", token "
                        + w.token() + ") after value " + before.value() + " (" + before.writer() + ", token " + before.token() + ")",
                        w.atNanos(), opsOf(before.writer(), w.writer()));
            }
            valueBefore.put(w, before == null ? null : before.value());
            lastAccepted.put(w.key(), w);
            highest.merge(w.key(), w.token(), Math::max);
        }
        Map<String, Op> lastRead = new HashMap<>();
        int writes = 0;
        int chains = 0;
        List<Op> byInvoke = new ArrayList<>(ops);
        byInvoke.sort(Comparator.comparingLong(Op::invokeNanos));
        for (Op op : byInvoke) {
            if (op.kind() == Kind.READ && op.outcome() == Outcome.OK) {
                lastRead.put(op.process() + "\u0000" + op.key(), op);
            }
            if (op.kind() != Kind.WRITE) {
                continue;
            }
            writes++;
            ResourceWrite w = byWriter.get(op.process() + "/" + op.id());
            if (op.outcome() == Outcome.OK) {
                if (w == null || !w.accepted()) {
                    findings.add(2, "acknowledged update lost: " + describe(op) + " wrote " + op.value() + " but the resource "
                            + (w == null ? "has no record of it" : "refused it"), op.completeNanos(), op);
                    continue;
                }
                Op read = lastRead.get(op.process() + "\u0000" + op.key());
                if (read != null && read.token() == op.token() && op.value() == read.value() + 1) {
                    chains++;
                    Long before = valueBefore.get(w);
                    long had = before == null ? 0 : before;
                    if (had != read.value()) {
                        findings.add(2, "lost update: " + op.process() + " read " + read.value() + " under token " + op.token()
                                + " and wrote " + op.value() + ", but '" + op.key() + "' held " + had + " when the write was accepted",
                                op.completeNanos(), read, op);
                    }
                }
            } else if (op.outcome() == Outcome.FAIL && w != null && w.accepted()) {
                findings.add(2, describe(op) + " was reported refused, but the resource accepted it", op.completeNanos(), op);
            }
        }
        exercised[2] = accepted > 0 || writes > 0;
        evidence[2] = resource.size() + " resource decisions (" + accepted + " accepted), " + writes + " client writes, "
                + chains + " read-modify-write chains";
        permitHolding();
        leaderHolding();
        rangeHolding();
    }

    /**
     * Check 2 for the byte-range writers (issue 21), "no overlapping writes accepted", by the
     * fenced resource's view ({@link RangeHoldings} defines holding there): no two grants whose
     * ranges conflict held at once, no write accepted outside its grant's ranges, after its holding
     * ended, or over bytes written before under a larger token ({@link RangeHoldings#breaches});
     * each client's RANGE_WRITE outcome is the resource's decision on it (by writer id: outcome,
     * token, region) and each accepted decision's writer that recorded its write recorded it OK;
     * and every grant the resource accepted a write under is a grant of lock scopes in the applied
     * log with that token, those ranges and that mode (where the log has its index).
     */
    private void rangeHolding() {
        if (ranges.isEmpty() && ops.stream().noneMatch(o -> o.kind() == Kind.RANGE_WRITE)) {
            if (run.hasRanges()) {
                notes.add("the run had range writers (inode " + run.rangeInode() + "), but ranges.jsonl has no decision and no "
                        + "client recorded a RANGE_WRITE");
            }
            return;
        }
        for (RangeHoldings.Breach b : RangeHoldings.breaches(ranges)) {
            findings.add(2, b.description(), b.atNanos(), opsOf(b.writers().toArray(String[]::new)));
        }
        Map<Long, ScopeGrant> logged = scopeGrants();
        Map<String, RangeDecision> byWriter = new HashMap<>();
        int accepted = 0;
        int refused = 0;
        int displaced = 0;
        int ends = 0;
        int fromLog = 0;
        Set<Long> grantsWritten = new HashSet<>();
        for (RangeDecision d : ranges) {
            switch (d.event()) {
                case DISPLACE -> displaced++;
                case END -> ends++;
                case WRITE -> {
                    byWriter.putIfAbsent(d.writer(), d);
                    if (!d.accepted()) {
                        refused++;
                        continue;
                    }
                    accepted++;
                    AppliedLog.Index ix = log.indexes.get(d.token() >>> 16);
                    if (!grantsWritten.add(d.token()) || ix == null || !ix.complete()) {
                        continue;
                    }
                    fromLog++;
                    ScopeGrant g = logged.get(d.token());
                    String wrote = "exclusive".equalsIgnoreCase(d.mode()) ? "exclusive" : "shared";
                    String asked = wrote + " " + d.inode() + ":" + d.held();
                    if (g == null || !g.describe().equals(asked)) {
                        findings.add(2, "the resource accepted a write of " + d.region() + " under grant " + d.token() + " of " + asked
                                + " (" + d.writer() + "), but index " + ix.index + " of the log " + (g == null
                                ? "grants no lock scopes with that token" : "grants that token to lease " + g.leaseId() + " for " + g.describe()),
                                d.atNanos(), opsOf(d.writer()));
                    }
                }
            }
        }
        int writes = 0;
        Set<String> recorded = new HashSet<>();
        for (Op op : ops) {
            if (op.kind() != Kind.RANGE_WRITE) {
                continue;
            }
            recorded.add(op.process() + "/" + op.id());
            if (op.outcome() == Outcome.INFO) {
                continue;
            }
            writes++;
            RangeDecision d = byWriter.get(op.process() + "/" + op.id());
            if (d == null || d.accepted() != (op.outcome() == Outcome.OK) || d.token() != op.token()
                    || !RangeWorker.key(d.inode(), d.start(), d.end()).equals(op.key())) {
                findings.add(2, describe(op) + " was reported " + (op.outcome() == Outcome.OK ? "accepted" : "refused") + ", but the resource "
                        + (d == null ? "has no record of it" : (d.accepted() ? "accepted" : "refused") + " token " + d.token() + " for "
                        + d.region()), op.completeNanos(), op);
            }
        }
        exercised[2] = true;
        evidence[2] += "; ranges of inode " + (run.hasRanges() ? run.rangeInode() : "?") + ": " + ranges.size() + " decisions ("
                + accepted + " writes accepted, " + refused + " refused, " + displaced + " grants displaced, " + ends + " ended), "
                + writes + " client writes matched, " + fromLog + " accepted grants found in the log with their ranges and mode";
    }

    /** A grant of lock scopes in the applied log (a Granted result of a scope acquire, or a hand-off to a waiting set). */
    record ScopeGrant(long leaseId, long token, long index, JsonNode scopes) {
        /** {@code exclusive 7:0-4096} for a grant of ranges of one inode in one mode; the scopes' JSON otherwise. */
        String describe() {
            StringBuilder held = new StringBuilder();
            String mode = null;
            long inode = -1;
            for (JsonNode part : scopes) {
                JsonNode scope = part.path("scope");
                String m = part.path("exclusive").asBoolean() ? "exclusive" : "shared";
                if (!scope.has("start") || mode != null && (!mode.equals(m) || inode != scope.path("inode").asLong())) {
                    return scopes.toString();
                }
                mode = m;
                inode = scope.path("inode").asLong();
                held.append(held.length() == 0 ? "" : ",").append(scope.path("start").asLong()).append('-').append(scope.path("end").asLong());
            }
            return mode == null ? scopes.toString() : mode + " " + inode + ":" + held;
        }
    }

    /** The grants of lock scopes in the applied log, by token. */
    private Map<Long, ScopeGrant> scopeGrants() {
        Map<Long, ScopeGrant> grants = new HashMap<>();
        for (AppliedLog.Command c : log.commands()) {
            JsonNode r = c.result();
            if (c.resultType().equals("Granted") && r.has("scopes") && !r.path("again").asBoolean()) {
                grants.putIfAbsent(r.path("fencingToken").asLong(), new ScopeGrant(r.path("leaseId").asLong(),
                        r.path("fencingToken").asLong(), c.index(), r.path("scopes")));
            }
            for (JsonNode e : c.effects()) {
                JsonNode g = AppliedLog.handOff(e);
                if (g != null && g.has("scopes")) {
                    grants.putIfAbsent(g.path("fencingToken").asLong(), new ScopeGrant(g.path("leaseId").asLong(),
                            g.path("fencingToken").asLong(), c.index(), g.path("scopes")));
                }
            }
        }
        return grants;
    }

    /** Check 4 for the range writers: each RANGE_ACQUIRE answered OK is a grant of the log to that lease, of that range and mode. */
    private int[] rangeAcquires() {
        int matched = 0;
        int undecided = 0;
        Map<Long, ScopeGrant> logged = null;
        for (Op op : ops) {
            if (op.kind() != Kind.RANGE_ACQUIRE || op.outcome() != Outcome.OK) {
                continue;
            }
            AppliedLog.Index ix = log.indexes.get(op.token() >>> 16);
            if (ix == null || !ix.complete()) {
                undecided++;
                continue;
            }
            if (logged == null) {
                logged = scopeGrants();
            }
            ScopeGrant g = logged.get(op.token());
            int colon = op.key().indexOf(':');
            String asked = (op.value() == 1 ? "exclusive " : "shared ") + op.key().substring(0, colon) + ":" + op.key().substring(colon + 1);
            if (g != null && g.leaseId() == op.leaseId() && g.describe().equals(asked)) {
                matched++;
            } else {
                findings.add(4, describe(op) + " (" + asked + ") does not match the log: index " + ix.index + " "
                        + (g == null ? "grants no lock scopes with that token" : "grants that token to lease " + g.leaseId() + " for "
                        + g.describe()), op.completeNanos(), op);
            }
        }
        return new int[] {matched, undecided};
    }

    /**
     * Check 2 for semaphores, by the fenced resource's view ({@link PermitFence} defines holding
     * there): never more permits held than the limit, no write accepted under a grant whose
     * holding had ended or that a newer accepted grant rules out; each client's SEM_WRITE outcome
     * is the resource's decision; and every grant the resource accepted a write under is a grant
     * of the applied log, with those permits (where the log has its index).
     */
    private void permitHolding() {
        fencedHolding(permits, PermitFence.breaches(permits, run.semaphores()), Kind.SEM_WRITE, "semaphores " + run.semaphores(), "grants");
    }

    /**
     * Check 2 for elections, by the fenced resource's view (each election fenced as a semaphore of
     * limit 1): never two leaderships held at once, no leader's write accepted after its holding
     * had ended or after a newer leader's; each client's LEAD_WRITE outcome is the resource's
     * decision; and every leadership the resource accepted a write under is one of the applied
     * log, of that election.
     */
    private void leaderHolding() {
        fencedHolding(leaders, PermitFence.leaderBreaches(leaders, run.elections()), Kind.LEAD_WRITE, "elections " + run.elections(),
                "leaderships");
    }

    /** Check 2 for a resource fenced per grant: the {@code breaches} of its {@code decisions}, and the {@code writeKind} ops. */
    private void fencedHolding(List<PermitDecision> decisions, List<PermitFence.Breach> breaches, Kind writeKind, String what,
                               String grantsAre) {
        if (decisions.isEmpty() && ops.stream().noneMatch(o -> o.kind() == writeKind)) {
            return;
        }
        boolean counted = writeKind == Kind.SEM_WRITE; // a semaphore's grants have permits; a leadership is one
        for (PermitFence.Breach b : breaches) {
            findings.add(2, b.description(), b.atNanos(), opsOf(b.writers().toArray(String[]::new)));
        }
        Map<String, PermitDecision> byWriter = new HashMap<>();
        Map<Long, Grant> logged = new HashMap<>();
        grants().forEach(g -> logged.putIfAbsent(g.token(), g));
        int accepted = 0;
        int displaced = 0;
        int fromLog = 0;
        Set<Long> seen = new HashSet<>();
        for (PermitDecision d : decisions) {
            if (d.event() == PermitDecision.Event.DISPLACE) {
                displaced++;
            }
            if (d.event() != PermitDecision.Event.WRITE) {
                continue;
            }
            byWriter.putIfAbsent(d.writer(), d);
            if (!d.accepted()) {
                continue;
            }
            accepted++;
            AppliedLog.Index ix = log.indexes.get(d.token() >>> 16);
            if (!seen.add(d.token()) || ix == null || !ix.complete()) {
                continue;
            }
            fromLog++;
            Grant g = logged.get(d.token());
            if (g == null || !g.key().equals(d.key()) || counted && g.permits() != d.permits()) {
                findings.add(2, nameOf(d.key()) + ": the resource accepted a write under grant " + d.token()
                        + (counted ? " with " + d.permits() + " permits" : "") + " (" + d.writer() + "), but index " + ix.index
                        + " of the log " + (g == null ? "grants nothing with that token" : "grants that token to lease " + g.leaseId()
                        + " for '" + g.key() + "'" + (g.permits() > 0 ? " (" + g.permits() + " permits)" : "")), d.atNanos(),
                        opsOf(d.writer()));
            }
        }
        int writes = 0;
        for (Op op : ops) {
            if (op.kind() != writeKind || op.outcome() == Outcome.INFO) {
                continue;
            }
            writes++;
            PermitDecision d = byWriter.get(op.process() + "/" + op.id());
            if (d == null || d.accepted() != (op.outcome() == Outcome.OK) || d.token() != op.token() || counted && d.permits() != op.value()) {
                findings.add(2, describe(op) + (counted ? " (" + op.value() + " permits)" : "") + " was reported "
                        + (op.outcome() == Outcome.OK ? "accepted" : "refused") + ", but the resource " + (d == null ? "has no record of it"
                        : (d.accepted() ? "accepted" : "refused") + " token " + d.token() + (counted ? " with " + d.permits() + " permits" : "")),
                        op.completeNanos(), op);
            }
        }
        exercised[2] = true;
        evidence[2] += "; " + what + ": " + decisions.size() + " decisions (" + accepted + " writes accepted, "
                + displaced + " " + grantsAre + " displaced), " + writes + " client writes, " + fromLog + " accepted " + grantsAre
                + " found in the log";
    }

    // ---- checks 3 and 8 (decided by the model replay) -------------------------------------------

    private void modelAndHolders() {
        exercised[3] = replay.commands > 0;
        evidence[3] = replay.replayedUpTo < 0 ? "model replay did not start: " + replay.stopped
                : "replayed " + replay.commands + " commands (indexes " + log.firstIndex() + " to " + replay.replayedUpTo
                + ") through the core; " + replay.mismatches + " results differed; " + replay.holderChecks + " holder checks"
                + (replay.semaphoreCommands > 0 ? "; " + replay.semaphoreCommands + " semaphore commands, " + replay.semaphoreChecks
                + " semaphore checks (permits held at most " + replay.mostPermitsHeld + ")" : "")
                + (replay.electionCommands > 0 ? "; " + replay.electionCommands + " election commands, " + replay.electionChecks
                + " election checks (one leader at a time)" : "")
                + (replay.scopeCommands > 0 ? "; " + replay.scopeCommands + " lock-scope commands, " + replay.scopeChecks
                + " lock-scope checks (no conflicting sets held at once, by the log and the model; at most " + replay.mostScopesHeld
                + " sets held, " + replay.scopeHandOffs + " handed to waiters)" : "")
                + (replay.stopped == null ? "" : "; stopped: " + replay.stopped);
    }

    private void fifo() {
        exercised[8] = replay.queueGrants > 0 || replay.semaphoreHandOffs > 0 || replay.electionHandOffs > 0;
        evidence[8] = replay.queueGrants + " hand-offs to waiters checked against the queues"
                + (replay.queueGrants == 0 ? " (no lock was handed to a waiter)" : "")
                + (replay.semaphoreCommands > 0 ? "; " + replay.semaphoreHandOffs + " semaphore hand-offs checked head first" : "")
                + (replay.electionCommands > 0 ? "; " + replay.electionHandOffs + " leaderships handed to the first candidate" : "");
    }

    // ---- check 4 -------------------------------------------------------------------------------

    private void realTime() {
        int matched = 0;
        int undecided = 0;
        for (Op op : ops) {
            if (op.kind() != Kind.ACQUIRE || op.outcome() != Outcome.OK) {
                continue;
            }
            AppliedLog.Index ix = log.indexes.get(op.token() >>> 16);
            if (ix == null || !ix.complete()) {
                undecided++;
                continue;
            }
            String found = null;
            for (AppliedLog.Command c : ix.commands) {
                JsonNode r = c.result();
                if (c.resultType().equals("Granted") && r.path("fencingToken").asLong() == op.token()) {
                    found = r.path("key").asText() + "/" + r.path("leaseId").asLong();
                }
                for (JsonNode e : c.effects()) {
                    JsonNode g = AppliedLog.handOff(e);
                    if (g != null && g.path("fencingToken").asLong() == op.token()) {
                        found = g.path("key").asText() + "/" + g.path("leaseId").asLong();
                    }
                }
            }
            if ((op.key() + "/" + op.leaseId()).equals(found)) {
                matched++;
            } else {
                findings.add(4, describe(op) + " does not match the log: index " + ix.index + " "
                        + (found == null ? "grants no lock with that token" : "grants that token to " + found), op.completeNanos(), op);
            }
        }
        int semaphoreMatched = 0;
        int campaignsMatched = 0;
        Map<Long, Grant> byToken = new HashMap<>();
        grants().forEach(g -> byToken.putIfAbsent(g.token(), g));
        for (Op op : ops) {
            if (op.kind() != Kind.SEM_ACQUIRE && op.kind() != Kind.CAMPAIGN || op.outcome() != Outcome.OK) {
                continue;
            }
            boolean counted = op.kind() == Kind.SEM_ACQUIRE;
            AppliedLog.Index ix = log.indexes.get(op.token() >>> 16);
            if (ix == null || !ix.complete()) {
                undecided++;
                continue;
            }
            Grant g = byToken.get(op.token());
            if (g != null && g.key().equals(op.key()) && g.leaseId() == op.leaseId() && (!counted || g.permits() == op.value())) {
                if (counted) {
                    semaphoreMatched++;
                } else {
                    campaignsMatched++;
                }
            } else {
                findings.add(4, describe(op) + (counted ? " (" + op.value() + " permits)" : "") + " does not match the log: index " + ix.index + " "
                        + (g == null ? "grants nothing with that token" : "grants that token to lease " + g.leaseId() + " for '" + g.key()
                        + "'" + (g.permits() > 0 ? " (" + g.permits() + " permits)" : "")), op.completeNanos(), op);
            }
        }
        // Completed before invoked => smaller position: sweep by invocation over the completions before it.
        List<Op> positioned = ops.stream().filter(o -> (LOG_KINDS.contains(o.kind()) || o.kind() == Kind.SEM_ACQUIRE
                || o.kind() == Kind.CAMPAIGN || o.kind() == Kind.PROCLAIM) && o.outcome() == Outcome.OK && o.position() > 0).toList();
        List<Op> byComplete = new ArrayList<>(positioned);
        byComplete.sort(Comparator.comparingLong(Op::completeNanos));
        List<Op> byInvoke = new ArrayList<>(positioned);
        byInvoke.sort(Comparator.comparingLong(Op::invokeNanos));
        Op highest = null;
        int next = 0;
        for (Op b : byInvoke) {
            while (next < byComplete.size() && byComplete.get(next).completeNanos() < b.invokeNanos()) {
                Op a = byComplete.get(next++);
                if (highest == null || a.position() > highest.position()) {
                    highest = a;
                }
            }
            if (highest != null && (b.position() < highest.position() || b.position() == highest.position() && !sameGrant(b, highest))) {
                findings.add(4, "real-time order broken: " + describe(highest) + " completed before " + describe(b)
                        + " was invoked, yet its position " + highest.position() + " is not smaller than " + b.position(),
                        b.invokeNanos(), highest, b);
            }
        }
        int probes = 0;
        for (FaultEvent f : faults) {
            if (NemesisEvent.PROBE.equals(f.phase())) {
                probes++;
                if (!f.detail().startsWith(NemesisEvent.REFUSED)) {
                    findings.add(4, "member " + f.target() + " answered while cut off from the majority (" + f.fault() + "): "
                            + f.detail(), f.atNanos());
                }
            }
        }
        exercised[4] = matched > 0 || positioned.size() > 1 || probes > 0;
        int[] rangeGrants = rangeAcquires();
        undecided += rangeGrants[1];
        exercised[4] |= semaphoreMatched > 0 || campaignsMatched > 0 || rangeGrants[0] > 0;
        evidence[4] = matched + " acquire answers found in the log" + (semaphoreMatched > 0 ? " and " + semaphoreMatched
                + " of semaphores (key, lease, permits)" : "") + (campaignsMatched > 0 ? " and " + campaignsMatched
                + " elections won (key, lease)" : "") + (rangeGrants[0] > 0 ? " and " + rangeGrants[0]
                + " grants of byte ranges (lease, ranges, mode)" : "") + (undecided > 0 ? " (" + undecided + " undecided: index not logged)" : "")
                + "; real-time order over " + positioned.size() + " answers with a position; results vs the model: see check 3"
                + (probes > 0 ? "; " + probes + " probe(s) of a cut-off minority member" : "");
    }

    private static boolean sameGrant(Op a, Op b) {
        return GRANT_KINDS.contains(a.kind()) && a.kind() == b.kind() && java.util.Objects.equals(a.key(), b.key())
                && a.leaseId() == b.leaseId() && a.token() == b.token();
    }

    // ---- check 5 -------------------------------------------------------------------------------

    private void replicas() {
        for (AppliedLog.Divergence d : log.divergences) {
            findings.add(5, "index " + d.index() + ": " + d.first() + " and " + d.second() + " applied different entries: " + d.what(), d.atNanos());
        }
        int compared = 0;
        for (var entry : log.digests.entrySet()) {
            List<AppliedLog.Digest> digests = entry.getValue();
            compared += digests.size();
            AppliedLog.Digest first = digests.get(0);
            for (AppliedLog.Digest d : digests) {
                if (d.digest() != first.digest()) {
                    findings.add(5, "index " + entry.getKey() + ": state digest " + first.digest() + " at " + first.loggedBy() + " but "
                            + d.digest() + " at " + d.loggedBy(), d.atNanos());
                }
            }
        }
        exercised[5] = log.crossChecked > 0 || compared > 1 || replay.digestsCompared > 0;
        evidence[5] = compared + " digest lines at " + log.digests.size() + " indexes (" + replay.digestsCompared
                + " compared with the model); " + log.crossChecked + " commands logged by more than one member or life, compared";
    }

    // ---- check 6 -------------------------------------------------------------------------------

    private void durability() {
        Set<String> down = new TreeSet<>();
        for (Map.Entry<FaultEvent, Long> f : intervals().entrySet()) {
            if (f.getValue() == Long.MAX_VALUE) {
                down.addAll(memberTargets(f.getKey().target()));
            }
        }
        List<AppliedLog.Member> survivors = log.members.values().stream()
                .filter(m -> m.present && !down.contains(m.name)).toList();
        List<Op> acquires = ops.stream().filter(o -> o.kind() == Kind.ACQUIRE && o.outcome() == Outcome.OK).toList();
        int checked = 0;
        int undecided = 0;
        for (Op op : ops) {
            if (op.outcome() != Outcome.OK || !EnumSet.of(Kind.ACQUIRE, Kind.RELEASE, Kind.GRANT, Kind.REVOKE, Kind.SEM_ACQUIRE,
                    Kind.SEM_RELEASE, Kind.CAMPAIGN, Kind.PROCLAIM, Kind.RESIGN).contains(op.kind())) {
                continue;
            }
            long index = locate(op);
            if (index < 0) {
                long bound = indexBound(op, acquires);
                if (bound >= 0 && bound <= log.completeUpTo) {
                    checked++;
                    findings.add(6, "acknowledged " + describe(op) + " is in no member's applied log, which is complete up to index "
                            + log.completeUpTo + " (the operation's index is at most " + bound + ")", op.completeNanos(), op);
                } else {
                    undecided++;
                }
                continue;
            }
            boolean decided = false;
            for (AppliedLog.Member m : survivors) {
                if (m.covers(index)) {
                    decided = true;
                } else if (m.lastIndex >= index && m.snapshotUpTo < index) {
                    decided = true;
                    findings.add(6, "acknowledged " + describe(op) + " (index " + index + ") is missing from survivor " + m.name
                            + ", which applied later indexes", op.completeNanos(), op);
                }
            }
            if (decided) {
                checked++;
            } else {
                undecided++;
            }
        }
        exercised[6] = checked > 0;
        evidence[6] = checked + " acknowledged operations looked up in the applied logs of the survivors "
                + survivors.stream().map(m -> m.name).toList() + (undecided > 0 ? "; " + undecided
                + " undecided (their index is past where the logs end)" : "");
    }

    /** The index at which the log applied what {@code op} was told, or -1. */
    private long locate(Op op) {
        if (GRANT_KINDS.contains(op.kind())) {
            long index = op.token() >>> 16;
            AppliedLog.Index ix = log.indexes.get(index);
            if (ix != null) {
                for (AppliedLog.Command c : ix.commands) {
                    if (c == null) {
                        continue;
                    }
                    if (GRANTED.contains(c.resultType()) && c.result().path("fencingToken").asLong() == op.token()) {
                        return index;
                    }
                    for (JsonNode e : c.effects()) {
                        JsonNode g = AppliedLog.handOff(e);
                        if (g != null && g.path("fencingToken").asLong() == op.token()) {
                            return index;
                        }
                    }
                }
            }
            return -1;
        }
        if (op.kind() == Kind.PROCLAIM) {
            AppliedLog.Index ix = log.indexes.get(op.position() >>> 16);
            if (ix != null) {
                for (AppliedLog.Command c : ix.commands) {
                    if (c != null && c.resultType().equals("Proclaimed") && c.result().path("revision").asLong() == op.position()) {
                        return ix.index;
                    }
                }
            }
            return -1;
        }
        if (leaseCommands == null) {
            leaseCommands = new HashMap<>();
            for (AppliedLog.Command c : log.commands()) {
                JsonNode cmd = c.command();
                String id = switch (c.type() + "/" + c.resultType()) {
                    case "LeaseGrant/LeaseGranted" -> "GRANT/" + cmd.path("leaseId").asLong();
                    case "LockRelease/Released" -> "RELEASE/" + cmd.path("leaseId").asLong() + "/" + cmd.path("fencingToken").asLong()
                            + "/" + cmd.path("key").asText();
                    case "SemaphoreRelease/Released" -> "SEM_RELEASE/" + cmd.path("leaseId").asLong() + "/"
                            + cmd.path("fencingToken").asLong() + "/" + cmd.path("key").asText();
                    case "ElectionResign/Resigned" -> "RESIGN/" + cmd.path("leaseId").asLong() + "/" + cmd.path("fencingToken").asLong()
                            + "/" + cmd.path("key").asText();
                    default -> null;
                };
                if (id != null) {
                    leaseCommands.putIfAbsent(id, c.index());
                }
                if (c.type().equals("LeaseRevoke")) {
                    leaseCommands.putIfAbsent("REVOKE/" + cmd.path("leaseId").asLong(), c.index());
                }
                if (c.resultType().equals("LeaseEnded")) {
                    leaseCommands.putIfAbsent("ENDED/" + c.result().path("leaseId").asLong(), c.index());
                }
            }
            grants().forEach(g -> grantsByKey.computeIfAbsent(g.key(), k -> new TreeMap<>()).put(g.token(), g.index()));
        }
        long found = switch (op.kind()) {
            case GRANT -> leaseCommands.getOrDefault("GRANT/" + op.leaseId(), -1L);
            // The SDK reports a revoke of a lease already gone, and a release of a grant already
            // ended, as done: what must survive is that the lease, or the grant, ended.
            case REVOKE -> first(leaseCommands.get("REVOKE/" + op.leaseId()), leaseCommands.get("ENDED/" + op.leaseId()));
            case RELEASE, RESIGN -> {
                var later = grantsByKey.getOrDefault(op.key(), new TreeMap<>()).higherEntry(op.token());
                yield first(leaseCommands.get(op.kind() + "/" + op.leaseId() + "/" + op.token() + "/" + op.key()),
                        first(leaseCommands.get("ENDED/" + op.leaseId()), later == null ? null : later.getValue()));
            }
            // A semaphore's later grants say nothing of this one's end: its release, or its lease's end.
            case SEM_RELEASE -> first(leaseCommands.get("SEM_RELEASE/" + op.leaseId() + "/" + op.token() + "/" + op.key()),
                    leaseCommands.get("ENDED/" + op.leaseId()));
            default -> -1L;
        };
        return found;
    }

    private static long first(Long a, Long b) {
        long x = a == null ? -1 : a;
        long y = b == null ? -1 : b;
        return x < 0 ? y : y < 0 ? x : Math.min(x, y);
    }

    private static long first(Long a, long b) {
        return first(a, b < 0 ? null : Long.valueOf(b));
    }

    /** The first index of each lease grant, revoke, lease end and release in the log, by {@link #locate}'s ids. */
    private Map<String, Long> leaseCommands;
    /** Per key, token → index of each grant. */
    private final Map<String, TreeMap<Long, Long>> grantsByKey = new HashMap<>();

    /**
     * The largest index at which {@code op}'s command can be: an acquire's token names it; an answer's
     * position bounds it; else any acquire invoked after {@code op} completed was granted later. -1 when unknown.
     */
    private static long indexBound(Op op, List<Op> acquires) {
        if (GRANT_KINDS.contains(op.kind())) {
            return op.token() >>> 16;
        }
        if (op.position() > 0) {
            return op.position() >>> 16;
        }
        long bound = -1;
        for (Op a : acquires) {
            if (a.invokeNanos() > op.completeNanos() && (bound < 0 || (a.token() >>> 16) < bound)) {
                bound = a.token() >>> 16;
            }
        }
        return bound;
    }

    // ---- check 7 -------------------------------------------------------------------------------

    private void expiries() {
        Map<Long, Long> ttlOfLease = new HashMap<>();
        List<AppliedLog.Command> expired = new ArrayList<>();
        for (AppliedLog.Command c : log.commands()) {
            if (c.resultType().equals("LeaseGranted")) {
                ttlOfLease.putIfAbsent(c.result().path("leaseId").asLong(), c.result().path("ttlMillis").asLong());
            } else if (c.resultType().equals("LeaseEnded") && c.result().path("reason").asText().equals("EXPIRED")) {
                expired.add(c);
            }
        }
        Map<Long, List<Op>> renewals = new HashMap<>();
        for (Op op : ops) {
            if ((op.kind() == Kind.KEEPALIVE || op.kind() == Kind.GRANT) && op.outcome() == Outcome.OK) {
                renewals.computeIfAbsent(op.leaseId(), k -> new ArrayList<>()).add(op);
            }
        }
        int decided = 0;
        for (AppliedLog.Command c : expired) {
            long lease = c.result().path("leaseId").asLong();
            long at = log.firstAt(c.index());
            List<Op> acks = renewals.getOrDefault(lease, List.of());
            if (acks.isEmpty()) {
                continue;
            }
            decided++;
            Op last = acks.stream().max(Comparator.comparingLong(Op::invokeNanos)).orElseThrow();
            long ttl = ttlOfLease.getOrDefault(lease, last.ttlMillis() > 0 ? last.ttlMillis() : run.ttlMillis());
            long earliest = last.invokeNanos() + TimeUnit.MILLISECONDS.toNanos(ttl);
            if (at < earliest) {
                findings.add(7, "lease " + lease + " expired at index " + c.index() + ", " + millis(at - last.invokeNanos())
                        + " ms after the keep-alive sent at " + rel(last.invokeNanos()) + " was acknowledged (" + describe(last)
                        + "); its TTL is " + ttl + " ms", at, last);
            }
        }
        exercised[7] = decided > 0;
        evidence[7] = expired.size() + " lease expiries in the log, " + decided + " with acknowledged renewals to compare"
                + (expired.isEmpty() ? " (no lease expired)" : "");
    }

    // ---- check 9 -------------------------------------------------------------------------------

    private void watches() {
        Map<String, List<Op>> streams = new LinkedHashMap<>();
        for (Op op : ops) {
            if (op.kind() == Kind.WATCH && op.outcome() == Outcome.OK) {
                streams.computeIfAbsent(op.process() + "/" + op.stream(), k -> new ArrayList<>()).add(op);
            }
        }
        long modelLimit = replay.replayedUpTo < 0 ? -1 : ((replay.replayedUpTo + 1) << 16) - 1;
        int events = 0;
        int compared = 0;
        for (Map.Entry<String, List<Op>> s : streams.entrySet()) {
            List<Op> stream = s.getValue();
            events += stream.size();
            Op previous = null;
            for (Op op : stream) {
                if (previous != null && op.token() <= previous.token()) {
                    findings.add(9, "watch stream " + s.getKey() + " " + (op.token() == previous.token() ? "delivered revision "
                            + op.token() + " twice" : "went back in time: revision " + op.token() + " (from " + op.member()
                            + ") after " + previous.token() + " (from " + previous.member() + ")"), op.completeNanos(), previous, op);
                }
                previous = op;
            }
            if (modelLimit < 0) {
                continue;
            }
            long first = stream.stream().mapToLong(Op::token).min().orElseThrow();
            long last = Math.min(modelLimit, stream.stream().mapToLong(Op::token).max().orElseThrow());
            Set<String> keys = new HashSet<>();
            Map<Long, Op> delivered = new HashMap<>();
            for (Op op : stream) {
                keys.add(op.key());
                delivered.putIfAbsent(op.token(), op);
                if (op.token() > modelLimit) {
                    continue;
                }
                compared++;
                ModelReplay.Event e = replay.events.get(op.token());
                if (e == null || !e.key().equals(op.key()) || e.put() != (op.value() == 1) || (e.put() && e.leaseId() != op.leaseId())) {
                    findings.add(9, "watch stream " + s.getKey() + " delivered revision " + op.token() + " ("
                            + (op.value() == 1 ? "PUT" : "DELETE") + " '" + op.key() + "' lease " + op.leaseId() + ") but the model "
                            + (e == null ? "has no event there" : "has " + (e.put() ? "PUT" : "DELETE") + " '" + e.key() + "' lease " + e.leaseId()),
                            op.completeNanos(), op);
                }
            }
            for (ModelReplay.Event e : replay.events.subMap(first, true, last, true).values()) {
                if (keys.contains(e.key()) && !delivered.containsKey(e.revision())) {
                    Op before = stream.stream().filter(o -> o.token() < e.revision()).reduce((a, b) -> b).orElse(null);
                    findings.add(9, "watch stream " + s.getKey() + " has a gap: it skipped revision " + e.revision() + " ("
                            + (e.put() ? "PUT" : "DELETE") + " '" + e.key() + "'" + (e.put() ? " lease " + e.leaseId() : "")
                            + ") between " + first + " and " + last, e.atNanos(), before == null ? List.of() : List.of(before));
                }
            }
        }
        exercised[9] = !streams.isEmpty();
        evidence[9] = streams.isEmpty() ? "no watch stream in the histories" : streams.size() + " streams, " + events
                + " events; " + compared + " compared with the model's events (the watched keys are those each stream delivered)";
    }

    // ---- check 10 ------------------------------------------------------------------------------

    private void liveness() {
        long election = run.electionTimeoutMillis();
        long leaderBound = 2 * election + 1000;
        Map<FaultEvent, Long> intervals = intervals();
        long[] applies = log.indexes.values().stream().mapToLong(ix -> ix.firstAt).filter(t -> t != Long.MAX_VALUE).sorted().toArray();
        long[] oks = ops.stream().filter(o -> LOG_KINDS.contains(o.kind()) && o.outcome() == Outcome.OK)
                .mapToLong(Op::completeNanos).sorted().toArray();
        long lastEvidence = Math.max(applies.length == 0 ? 0 : applies[applies.length - 1], oks.length == 0 ? 0 : oks[oks.length - 1]);
        int heals = 0;
        int healsUndecided = 0;
        for (Map.Entry<FaultEvent, Long> f : intervals.entrySet()) {
            long healed = f.getValue();
            if (healed == Long.MAX_VALUE || !affectsMembers(f.getKey().target())) {
                continue;
            }
            long deadline = healed + TimeUnit.MILLISECONDS.toNanos(leaderBound);
            boolean overlapped = intervals.entrySet().stream().anyMatch(o -> o.getKey() != f.getKey()
                    && affectsMembers(o.getKey().target()) && o.getKey().atNanos() < deadline && o.getValue() > healed);
            if (overlapped) {
                healsUndecided++;
                continue;
            }
            long progress = Math.min(ceiling(applies, healed), ceiling(oks, healed));
            boolean demand = ops.stream().anyMatch(o -> LOG_KINDS.contains(o.kind()) && o.invokeNanos() <= deadline && o.completeNanos() >= healed);
            String what = "leader after " + f.getKey().fault() + " of " + f.getKey().target() + " healed";
            if (progress <= deadline) {
                heals++;
                recoveries.add(new Verdict.Recovery(what, healed, millis(progress - healed), leaderBound));
            } else if (demand && (progress != Long.MAX_VALUE || lastEvidence > deadline || run.endNanos() > deadline)) {
                heals++;
                recoveries.add(new Verdict.Recovery(what, healed, progress == Long.MAX_VALUE ? -1 : millis(progress - healed), leaderBound));
                findings.add(10, "no leader within " + leaderBound + " ms after " + f.getKey().fault() + " of " + f.getKey().target()
                        + " healed: " + (progress == Long.MAX_VALUE ? "nothing was applied or acknowledged after it"
                        : "the first index applied or operation acknowledged came " + millis(progress - healed) + " ms later")
                        + ", while operations were waiting", healed, pending(healed, deadline));
            } else {
                healsUndecided++;
            }
        }
        int deaths = holderDeaths(intervals);
        exercised[10] = heals > 0 || deaths > 0;
        evidence[10] = heals + " heals measured (leader within " + leaderBound + " ms)" + (healsUndecided > 0 ? ", " + healsUndecided
                + " undecided (another fault overlapping, or no operation waiting)" : "") + "; " + deaths
                + " dead holders with a waiter measured (lock within TTL + " + (2 * election) + " + " + run.expiryPeriodMillis() + " ms)";
    }

    /** A holder died (its lease was declared lost, or its process was stopped for longer than the TTL): when did a waiter get the lock? */
    private int holderDeaths(Map<FaultEvent, Long> intervals) {
        record Death(String process, long leaseId, long atNanos, String why) {}
        List<Death> deaths = new ArrayList<>();
        for (Op op : ops) {
            if (op.kind() == Kind.LEASE_LOST) {
                deaths.add(new Death(op.process(), op.leaseId(), op.completeNanos(), op.process() + " declared lease " + op.leaseId() + " lost"));
            }
        }
        long ttlNanos = TimeUnit.MILLISECONDS.toNanos(run.ttlMillis());
        intervals.forEach((f, end) -> {
            for (String target : targets(f.target())) {
                if (clients.contains(target) && end - f.atNanos() > ttlNanos) {
                    deaths.add(new Death(target, 0, f.atNanos(), f.fault() + " of " + target));
                }
            }
        });
        Map<Long, Long> ttlOfLease = new HashMap<>();
        for (AppliedLog.Command c : log.commands()) {
            if (c.resultType().equals("LeaseGranted")) {
                ttlOfLease.putIfAbsent(c.result().path("leaseId").asLong(), c.result().path("ttlMillis").asLong());
            }
        }
        long lastApplied = log.indexes.values().stream().mapToLong(ix -> ix.firstAt).filter(t -> t != Long.MAX_VALUE).max().orElse(0);
        int measured = 0;
        for (Death d : deaths) {
            for (Op held : heldAt(d.process(), d.leaseId(), d.atNanos())) {
                long ttl = ttlOfLease.getOrDefault(held.leaseId(), run.ttlMillis());
                long bound = ttl + 2 * run.electionTimeoutMillis() + run.expiryPeriodMillis();
                // A member fault overlapping the wait (a majority killed, the leader paused) delays
                // the expiry: a leader that comes back counts the TTL again from its start. The
                // bound then runs from the last such heal.
                long from = d.atNanos();
                boolean moved = true;
                while (moved) {
                    moved = false;
                    for (Map.Entry<FaultEvent, Long> f : intervals.entrySet()) {
                        long healed = f.getValue();
                        if (affectsMembers(f.getKey().target()) && healed != Long.MAX_VALUE && healed > from
                                && f.getKey().atNanos() < from + TimeUnit.MILLISECONDS.toNanos(bound)) {
                            from = healed;
                            moved = true;
                        }
                    }
                }
                long deadline = from + TimeUnit.MILLISECONDS.toNanos(bound);
                AppliedLog.Command end = handOver(held);
                String what = "lock '" + held.key() + "' after " + d.why();
                if (end != null) {
                    boolean waiter = false;
                    for (JsonNode e : end.effects()) {
                        JsonNode g = AppliedLog.handOff(e);
                        waiter |= g != null && g.path("key").asText().equals(held.key());
                    }
                    if (!waiter) {
                        continue;
                    }
                    measured++;
                    long at = log.firstAt(end.index());
                    // When a member fault overlapped, the bound counts from its heal: say so beside the figure.
                    String measuredWhat = from == d.atNanos() ? what
                            : what + " (" + millis(at - from) + " ms after the last overlapping member-fault heal, which the bound counts from)";
                    recoveries.add(new Verdict.Recovery(measuredWhat, d.atNanos(), millis(at - d.atNanos()), bound));
                    if (at > deadline) {
                        findings.add(10, "the waiter for '" + held.key() + "' got it " + millis(at - d.atNanos()) + " ms after "
                                + d.why() + (from != d.atNanos() ? " and " + millis(at - from) + " ms after the last overlapping heal" : "")
                                + " (holder lease " + held.leaseId() + ", token " + held.token() + "), over the bound of "
                                + bound + " ms", at, held);
                    }
                } else if (lastApplied > deadline && waited(held)) {
                    measured++;
                    recoveries.add(new Verdict.Recovery(what, d.atNanos(), -1, bound));
                    findings.add(10, "'" + held.key() + "' was never handed to its waiter after " + d.why() + " (holder lease "
                            + held.leaseId() + ", token " + held.token() + ")", deadline, held);
                }
            }
        }
        return measured;
    }

    /** The grants {@code process} (with {@code leaseId}, when not 0) held at {@code at}: acquired and not released by then. */
    private List<Op> heldAt(String process, long leaseId, long at) {
        Map<String, Op> held = new TreeMap<>();
        ops.stream().filter(o -> o.process().equals(process) && o.outcome() == Outcome.OK && o.completeNanos() <= at)
                .filter(o -> o.key() != null || o.kind() == Kind.REVOKE || o.kind() == Kind.LEASE_LOST)
                .sorted(Comparator.comparingLong(Op::completeNanos))
                .forEach(o -> {
                    if (o.kind() == Kind.ACQUIRE && (leaseId == 0 || o.leaseId() == leaseId)) {
                        held.put(o.key(), o);
                    } else if (o.kind() == Kind.RELEASE && held.containsKey(o.key()) && held.get(o.key()).token() == o.token()) {
                        held.remove(o.key());
                    } else if ((o.kind() == Kind.REVOKE || o.kind() == Kind.LEASE_LOST)) {
                        held.values().removeIf(a -> a.leaseId() == o.leaseId() && o.completeNanos() < at);
                    }
                });
        return new ArrayList<>(held.values());
    }

    /** The command with which the grant {@code held} ended (its release, or its lease's end), or null. */
    private AppliedLog.Command handOver(Op held) {
        for (AppliedLog.Command c : log.indexes.tailMap(held.token() >>> 16, true).values().stream()
                .flatMap(ix -> Arrays.stream(ix.commands)).filter(c -> c != null && c.position() > held.token()).toList()) {
            JsonNode r = c.result();
            if (c.resultType().equals("LeaseEnded") && r.path("leaseId").asLong() == held.leaseId()) {
                for (JsonNode k : r.path("released")) {
                    if (k.asText().equals(held.key())) {
                        return c;
                    }
                }
                return null;
            }
            if (c.resultType().equals("Released") && c.type().equals("LockRelease") && c.command().path("leaseId").asLong() == held.leaseId()
                    && c.command().path("fencingToken").asLong() == held.token()) {
                return c;
            }
        }
        return null;
    }

    /** Whether another lease queued for the grant's key after it was made. */
    private boolean waited(Op held) {
        for (AppliedLog.Command c : log.commands()) {
            if (c.position() > held.token() && c.resultType().equals("Queued") && c.result().path("key").asText().equals(held.key())
                    && c.result().path("leaseId").asLong() != held.leaseId()) {
                return true;
            }
        }
        return false;
    }

    private List<Op> pending(long from, long to) {
        return ops.stream().filter(o -> LOG_KINDS.contains(o.kind()) && o.invokeNanos() <= to && o.completeNanos() >= from)
                .limit(AROUND).toList();
    }

    private static long ceiling(long[] sorted, long from) {
        int i = Arrays.binarySearch(sorted, from);
        if (i < 0) {
            i = -i - 1;
        } else {
            while (i > 0 && sorted[i - 1] == from) {
                i--;
            }
        }
        return i < sorted.length ? sorted[i] : Long.MAX_VALUE;
    }

    // ---- faults --------------------------------------------------------------------------------

    /** Each fault's start, with the time of its end (the next end of the same fault and target), or MAX_VALUE. */
    private Map<FaultEvent, Long> intervals() {
        Map<FaultEvent, Long> intervals = new LinkedHashMap<>();
        Map<String, List<FaultEvent>> open = new HashMap<>();
        for (FaultEvent f : faults) {
            String id = f.fault() + "\u0000" + f.target();
            if (f.isStart()) {
                open.computeIfAbsent(id, k -> new ArrayList<>()).add(f);
                intervals.put(f, Long.MAX_VALUE);
            } else if (f.isEnd()) {
                List<FaultEvent> starts = open.get(id);
                if (starts != null && !starts.isEmpty()) {
                    intervals.put(starts.remove(0), f.atNanos());
                }
            }
        }
        return intervals;
    }

    private static List<String> targets(String target) {
        return target == null ? List.of() : Arrays.stream(target.split("[,\\s]+")).filter(t -> !t.isEmpty()).toList();
    }

    private Set<String> memberTargets(String target) {
        Set<String> hit = new TreeSet<>();
        for (String t : targets(target)) {
            if (t.equals("all") || t.equals("*") || t.equals("cluster")) {
                hit.addAll(run.members());
            } else if (run.members().contains(t)) {
                hit.add(t);
            }
        }
        return hit;
    }

    /** Whether a fault can keep the members from electing a leader: any fault not aimed at client processes alone. */
    private boolean affectsMembers(String target) {
        List<String> hit = targets(target);
        return hit.isEmpty() || !clients.containsAll(hit);
    }

    // ---- the report's context --------------------------------------------------------------------

    private List<Op> around(Findings.Found f) {
        List<Op> around = new ArrayList<>(f.involved());
        if (f.atNanos() != 0) {
            ops.stream().filter(o -> !f.involved().contains(o))
                    .filter(o -> o.completeNanos() >= f.atNanos() - NEARBY_NANOS && o.invokeNanos() <= f.atNanos() + NEARBY_NANOS)
                    .sorted(Comparator.comparingLong(o -> Math.abs(o.invokeNanos() - f.atNanos())))
                    .limit(Math.max(0, AROUND - around.size()))
                    .forEach(around::add);
        }
        around.sort(Comparator.comparingLong(Op::invokeNanos));
        return around;
    }

    private List<FaultEvent> timeline(long at) {
        if (at == 0) {
            return faults.stream().limit(12).toList();
        }
        List<FaultEvent> before = faults.stream().filter(f -> f.atNanos() <= at + TimeUnit.SECONDS.toNanos(5)).toList();
        return before.subList(Math.max(0, before.size() - 12), before.size());
    }

    private Verdict.Statistics statistics() {
        Map<Kind, Map<Outcome, Integer>> byKind = new EnumMap<>(Kind.class);
        for (Op op : ops) {
            byKind.computeIfAbsent(op.kind(), k -> new EnumMap<>(Outcome.class)).merge(op.outcome(), 1, Integer::sum);
        }
        Map<String, Integer> byFault = new TreeMap<>();
        faults.stream().filter(FaultEvent::isStart).forEach(f -> byFault.merge(f.fault(), 1, Integer::sum));
        return new Verdict.Statistics(byKind, byFault, recoveries, notes);
    }

    // ---- reading -------------------------------------------------------------------------------

    /** JSON lines of {@code type}; a missing file is empty. A torn line inside a file (a killed writer, then appended to) is skipped and noted. */
    private <T> List<T> lines(Path file, Class<T> type) {
        if (!Files.isRegularFile(file)) {
            return List.of();
        }
        try {
            return JsonLines.read(file, type);
        } catch (UncheckedIOException torn) {
            List<T> records = new ArrayList<>();
            int skipped = 0;
            try {
                for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
                    if (line.isBlank()) {
                        continue;
                    }
                    try {
                        records.add(JSON.readValue(line, type));
                    } catch (IOException e) {
                        skipped++;
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            notes.add(runDir.relativize(file) + ": " + skipped + " torn line(s) skipped");
            return records;
        }
    }

    private List<Op> opsOf(String... writers) {
        List<Op> found = new ArrayList<>();
        for (String writer : writers) {
            for (Op op : ops) {
                if ((op.process() + "/" + op.id()).equals(writer)) {
                    found.add(op);
                }
            }
        }
        return found;
    }

    private String describe(Op op) {
        StringBuilder s = new StringBuilder().append(op.process()).append(' ').append(op.kind());
        if (op.key() != null) {
            s.append(" '").append(op.key()).append('\'');
        }
        if (op.leaseId() != 0) {
            s.append(" lease ").append(op.leaseId());
        }
        if (op.token() != 0) {
            s.append(" token ").append(op.token());
        }
        s.append(" [").append(rel(op.invokeNanos())).append(", ").append(rel(op.completeNanos())).append(']');
        return s.toString();
    }

    private String rel(long nanos) {
        return String.format(Locale.ROOT, "+%.3fs", (nanos - run.startNanos()) / 1e9);
    }

    private static long millis(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }
}
