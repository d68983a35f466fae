package io.tenure.it.safety;

import io.tenure.it.safety.Op.Kind;
import io.tenure.it.safety.Op.Outcome;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * What the harness checks itself over a run directory, before (and beside) the checker: the
 * fenced resource's log and the clients' histories.
 *
 * <p>Violations (each fails the CI form):
 * <ol>
 *   <li>per key, an accepted token lower than one accepted before it (or, with the {@code ABOVE}
 *       fence, not higher);</li>
 *   <li>per key, an accepted value not higher than the one accepted before it: each write is
 *       the value read under the lock plus one, so two accepted writes of one value mean two
 *       holders read the same value, a lost update;</li>
 *   <li>a WRITE a client recorded OK that the resource did not accept, or FAIL that it did not
 *       refuse;</li>
 *   <li>per semaphore, by the resource's view ({@code permits.jsonl}, {@link PermitFence#breaches}):
 *       more permits held than the limit, or a write accepted under a grant whose holding had
 *       ended or that a newer accepted grant rules out; and a SEM_WRITE whose recorded outcome is
 *       not the resource's decision;</li>
 *   <li>per election, by the resource's view ({@code leaders.jsonl}, the same replay with a limit of
 *       1): two leaderships held at once, or a leader's write accepted after its holding had ended
 *       or after a newer leader's; and a LEAD_WRITE whose recorded outcome is not the resource's
 *       decision.</li>
 * </ol>
 * Warnings (reported, not failing; the checker judges them against the members' logs): a write
 * accepted after another process had already been granted the key with a larger token (the
 * newer holder had not written yet, so the fence could not refuse it).
 */
public final class HarnessChecks {
    /**
     * @param opsByKind  per operation kind, the count of each outcome
     * @param faults     per fault kind, how many times it started
     * @param accepted   accepted writes per key
     * @param refused    refused writes per key
     */
    public record Findings(List<String> violations, List<String> warnings, Map<Kind, Map<Outcome, Integer>> opsByKind,
                           Map<String, Integer> faults, Map<String, Integer> accepted, Map<String, Integer> refused,
                           List<NemesisEvent> timeline, RunInfo run) {

        public int ops(Kind kind, Outcome outcome) {
            return opsByKind.getOrDefault(kind, Map.of()).getOrDefault(outcome, 0);
        }

        public String summary() {
            StringBuilder text = new StringBuilder();
            int total = opsByKind.values().stream().flatMap(m -> m.values().stream()).mapToInt(Integer::intValue).sum();
            text.append("operations: ").append(total).append('\n');
            opsByKind.forEach((kind, outcomes) -> text.append(String.format("  %-10s %s%n", kind, outcomes)));
            text.append("resource: accepted ").append(accepted).append(", refused ").append(refused).append('\n');
            text.append("faults started: ").append(faults).append('\n');
            text.append("harness violations: ").append(violations.isEmpty() ? "none" : violations.size()).append('\n');
            violations.forEach(v -> text.append("  VIOLATION ").append(v).append('\n'));
            text.append("warnings: ").append(warnings.isEmpty() ? "none" : warnings.size()).append('\n');
            warnings.forEach(w -> text.append("  warning ").append(w).append('\n'));
            return text.toString();
        }

        /** {@code harness.md}: the settings, the figures, the findings and the fault timeline. */
        public String markdown(List<String> problems) {
            StringBuilder md = new StringBuilder("# Safety run: the harness's findings\n\n");
            md.append(String.format("Seed %d; %d ms TTL; %d ms election timeout; members %s; keys %s; fence %s; %.1f s of workload.%n%n",
                    run.seed(), run.ttlMillis(), run.electionTimeoutMillis(), run.members(), run.keys(), run.fence(),
                    (run.endNanos() - run.startNanos()) / 1e9));
            md.append("Violations: ").append(violations.isEmpty() ? "**none**" : "**" + violations.size() + "**").append("\n\n");
            violations.forEach(v -> md.append("- ").append(v).append('\n'));
            md.append("\n## Operations\n\n| kind | OK | FAIL | INFO |\n| --- | ---: | ---: | ---: |\n");
            opsByKind.forEach((kind, o) -> md.append(String.format("| %s | %d | %d | %d |%n", kind,
                    o.getOrDefault(Outcome.OK, 0), o.getOrDefault(Outcome.FAIL, 0), o.getOrDefault(Outcome.INFO, 0))));
            md.append("\nResource: accepted ").append(accepted).append(", refused ").append(refused).append(".\n");
            md.append("\n## Faults\n\nStarted: ").append(faults).append(run.faultsSkipped().isEmpty() ? "" : "; skipped: " + run.faultsSkipped())
                    .append(".\n\n| at (s) | fault | phase | target | detail |\n| ---: | --- | --- | --- | --- |\n");
            for (NemesisEvent e : timeline) {
                md.append(String.format("| %.1f | %s | %s | %s | %s |%n", (e.atNanos() - run.startNanos()) / 1e9, e.fault(), e.phase(),
                        e.target(), e.detail().replace("|", "/")));
            }
            md.append("\n## Harness problems\n\n").append(problems.isEmpty() ? "none\n" : "");
            problems.forEach(p -> md.append("- ").append(p).append('\n'));
            md.append("\n## Warnings\n\n").append(warnings.isEmpty() ? "none\n" : "");
            warnings.forEach(w -> md.append("- ").append(w).append('\n'));
            return md.toString();
        }
    }

    private HarnessChecks() {
    }

    public static Findings check(Path runDir) throws IOException {
        RunInfo run = RunInfo.read(runDir);
        List<Op> ops = histories(runDir);
        List<ResourceWrite> writes = Files.exists(runDir.resolve("resource.jsonl"))
                ? JsonLines.read(runDir.resolve("resource.jsonl"), ResourceWrite.class) : List.of();
        List<NemesisEvent> timeline = Files.exists(runDir.resolve("nemesis.jsonl"))
                ? JsonLines.read(runDir.resolve("nemesis.jsonl"), NemesisEvent.class) : List.of();
        List<String> violations = new ArrayList<>();
        List<String> warnings = new ArrayList<>();
        checkResource(writes, FencedResource.Fence.valueOf(run.fence()), violations);
        checkWritesRecorded(ops, writes, violations);
        checkStaleAccepts(ops, writes, warnings);
        List<PermitDecision> permitDecisions = Files.exists(runDir.resolve("permits.jsonl"))
                ? JsonLines.read(runDir.resolve("permits.jsonl"), PermitDecision.class) : List.of();
        checkPermits(ops, permitDecisions, run.semaphores(), violations);
        List<PermitDecision> leaderDecisions = Files.exists(runDir.resolve("leaders.jsonl"))
                ? JsonLines.read(runDir.resolve("leaders.jsonl"), PermitDecision.class) : List.of();
        checkLeaders(ops, leaderDecisions, run.elections(), violations);
        List<RangeDecision> rangeDecisions = Files.exists(runDir.resolve("ranges.jsonl"))
                ? JsonLines.read(runDir.resolve("ranges.jsonl"), RangeDecision.class) : List.of();
        checkRanges(ops, rangeDecisions, violations);
        Path counters = runDir.resolve(SafetyRun.COUNTERS_FILE);
        if (Files.exists(counters)) {
            checkCounters(ops, new com.fasterxml.jackson.databind.ObjectMapper().readTree(counters.toFile()), violations);
        }
        checkKv(ops, violations);

        Map<Kind, Map<Outcome, Integer>> byKind = new EnumMap<>(Kind.class);
        for (Op op : ops) {
            byKind.computeIfAbsent(op.kind(), k -> new EnumMap<>(Outcome.class)).merge(op.outcome(), 1, Integer::sum);
        }
        Map<String, Integer> faults = new TreeMap<>();
        timeline.stream().filter(e -> e.phase().equals(NemesisEvent.START)).forEach(e -> faults.merge(e.fault(), 1, Integer::sum));
        Map<String, Integer> accepted = new TreeMap<>();
        Map<String, Integer> refused = new TreeMap<>();
        for (ResourceWrite w : writes) {
            (w.accepted() ? accepted : refused).merge(w.key(), 1, Integer::sum);
        }
        for (PermitDecision d : Stream.concat(permitDecisions.stream(), leaderDecisions.stream()).toList()) {
            if (d.event() == PermitDecision.Event.WRITE) {
                (d.accepted() ? accepted : refused).merge(d.key(), 1, Integer::sum);
            }
        }
        for (RangeDecision d : rangeDecisions) {
            if (d.event() == RangeDecision.Event.WRITE) {
                (d.accepted() ? accepted : refused).merge("inode " + d.inode(), 1, Integer::sum);
            }
        }
        return new Findings(violations, warnings, byKind, faults, accepted, refused, timeline, run);
    }

    /**
     * Exactly-once increments: per counter, no value answered to two increments (one would have
     * been lost, or applied twice and answered once), and the value read after the run between the
     * acknowledged increments and those plus the ones whose outcome is unknown (INFO). FAIL
     * increments were refused and count for nothing.
     */
    static void checkCounters(List<Op> ops, com.fasterxml.jackson.databind.JsonNode finals, List<String> violations) {
        if (finals.has("error")) {
            violations.add("counters: the healed cluster did not answer the read of the counters: " + finals.get("error").asText());
            return;
        }
        Map<String, List<Op>> byCounter = new TreeMap<>();
        ops.stream().filter(op -> op.kind() == Kind.INCR).forEach(op -> byCounter.computeIfAbsent(op.key(), k -> new ArrayList<>()).add(op));
        for (Map.Entry<String, List<Op>> e : byCounter.entrySet()) {
            String counter = e.getKey();
            Map<Long, Op> answered = new java.util.HashMap<>();
            long acknowledged = 0;
            long unknown = 0;
            for (Op op : e.getValue()) {
                if (op.outcome() == Outcome.OK) {
                    acknowledged++;
                    Op before = answered.putIfAbsent(op.value(), op);
                    if (before != null) {
                        violations.add("counter " + counter + ": value " + op.value() + " answered to two increments (ops " + before.id()
                                + " of " + before.process() + " and " + op.id() + " of " + op.process() + ")");
                    }
                } else if (op.outcome() == Outcome.INFO) {
                    unknown++;
                }
            }
            if (!finals.has(counter)) {
                violations.add("counter " + counter + ": incremented " + acknowledged + " times, but not read after the run");
                continue;
            }
            long value = finals.get(counter).asLong();
            if (value < acknowledged || value > acknowledged + unknown) {
                violations.add("counter " + counter + ": " + value + " after the run, but " + acknowledged + " increments were acknowledged and "
                        + unknown + " have an unknown outcome (expected " + acknowledged + " to " + (acknowledged + unknown) + ")");
            }
            long highest = answered.keySet().stream().mapToLong(Long::longValue).max().orElse(0);
            if (highest > value) {
                violations.add("counter " + counter + ": an increment was answered " + highest + ", above the " + value + " read after the run");
            }
        }
    }

    /**
     * Linearizability of the key-value histories, per key: a compare-and-set register whose every
     * write is a compare-and-set on the mod revision read (or a put-if-absent) of a value no other
     * write uses. With unique values the conditions below are what a linearization needs (they
     * follow etcd's and Jepsen's register checks):
     * <ol>
     *   <li>no lost update: no two acknowledged writes swapped from the same revision (or both
     *       created the key);</li>
     *   <li>each acknowledged write's revision is above the one it compared;</li>
     *   <li>no value from nowhere: a read's value was written by a write invoked before the read
     *       completed, at the revision the read reports when that write's revision is known;</li>
     *   <li>real time: an operation that starts after another completed sees (or makes) a revision
     *       at least as new, newer for two acknowledged writes;</li>
     *   <li>a chain: between two consecutive acknowledged writes (by revision) the later compared
     *       the earlier's revision, unless a write of unknown outcome compared it.</li>
     * </ol>
     * FAIL writes are compare misses that changed nothing; their revision is the key's at the time.
     */
    static void checkKv(List<Op> ops, List<String> violations) {
        Map<String, List<Op>> byKey = new TreeMap<>();
        ops.stream().filter(op -> op.kind() == Kind.KV_READ || op.kind() == Kind.KV_CAS)
                .forEach(op -> byKey.computeIfAbsent(op.key(), k -> new ArrayList<>()).add(op));
        for (Map.Entry<String, List<Op>> e : byKey.entrySet()) {
            checkKvKey(e.getKey(), e.getValue(), violations);
        }
    }

    private static void checkKvKey(String key, List<Op> ops, List<String> violations) {
        Map<Long, Op> writesOfValue = new java.util.HashMap<>();
        Map<Long, Op> swappedFrom = new java.util.HashMap<>();
        Set<Long> unknownFrom = new java.util.HashSet<>();
        Map<Long, Long> revisionOfValue = new java.util.HashMap<>();
        for (Op op : ops) {
            if (op.kind() != Kind.KV_CAS) {
                continue;
            }
            writesOfValue.put(op.value(), op);
            if (op.outcome() == Outcome.INFO) {
                unknownFrom.add(op.token());
            } else if (op.outcome() == Outcome.OK) {
                Op before = swappedFrom.putIfAbsent(op.token(), op);
                if (before != null) {
                    violations.add("kv " + key + ": two writes swapped from revision " + op.token() + " (a lost update): op " + before.id()
                            + " of " + before.process() + " and op " + op.id() + " of " + op.process());
                }
                if (op.position() != 0) {
                    if (op.position() <= op.token()) {
                        violations.add("kv " + key + ": op " + op.id() + " of " + op.process() + " swapped from revision " + op.token()
                                + " to revision " + op.position() + ", not above it");
                    }
                    revisionOfValue.put(op.value(), op.position());
                }
            }
        }
        for (Op op : ops) {
            if (op.kind() != Kind.KV_READ || op.outcome() != Outcome.OK || op.value() == 0) {
                continue;
            }
            Op writer = writesOfValue.get(op.value());
            if (writer == null || writer.outcome() == Outcome.FAIL || writer.invokeNanos() > op.completeNanos()) {
                violations.add("kv " + key + ": op " + op.id() + " of " + op.process() + " read value " + op.value()
                        + (writer == null ? ", which no write wrote" : writer.outcome() == Outcome.FAIL
                        ? ", which a write that did not swap (op " + writer.id() + ") carried" : ", written by op " + writer.id()
                        + " only after the read completed"));
                continue;
            }
            Long written = revisionOfValue.get(op.value());
            if (written == null) {
                revisionOfValue.put(op.value(), op.token());
            } else if (written != op.token()) {
                violations.add("kv " + key + ": op " + op.id() + " of " + op.process() + " read value " + op.value() + " at revision "
                        + op.token() + ", but it was written at revision " + written);
            }
        }
        checkKvRealTime(key, ops, violations);
        List<Op> acknowledged = ops.stream().filter(op -> op.kind() == Kind.KV_CAS && op.outcome() == Outcome.OK
                && revisionOfValue.containsKey(op.value())).sorted(java.util.Comparator.comparingLong(op -> revisionOfValue.get(op.value()))).toList();
        for (int i = 1; i < acknowledged.size(); i++) {
            long previous = revisionOfValue.get(acknowledged.get(i - 1).value());
            Op next = acknowledged.get(i);
            if (next.token() != previous && !unknownFrom.contains(previous)) {
                violations.add("kv " + key + ": op " + next.id() + " of " + next.process() + " swapped from revision " + next.token()
                        + ", but the write before it made revision " + previous + " and no write of unknown outcome compared that");
            }
        }
    }

    /** Condition 4 of {@link #checkKv}: sweeps the operations by start, against the newest revision of those completed before. */
    private static void checkKvRealTime(String key, List<Op> ops, List<String> violations) {
        List<Op> known = ops.stream().filter(op -> op.outcome() != Outcome.INFO && revisionSeen(op) > 0).toList();
        List<Op> byEnd = known.stream().sorted(java.util.Comparator.comparingLong(Op::completeNanos)).toList();
        List<Op> byStart = known.stream().sorted(java.util.Comparator.comparingLong(Op::invokeNanos)).toList();
        int done = 0;
        Op newest = null;
        Op newestWrite = null;
        for (Op op : byStart) {
            while (done < byEnd.size() && byEnd.get(done).completeNanos() < op.invokeNanos()) {
                Op finished = byEnd.get(done++);
                if (newest == null || revisionSeen(finished) > revisionSeen(newest)) {
                    newest = finished;
                }
                if (isWrite(finished) && (newestWrite == null || revisionSeen(finished) > revisionSeen(newestWrite))) {
                    newestWrite = finished;
                }
            }
            if (newest != null && revisionSeen(op) < revisionSeen(newest)) {
                violations.add("kv " + key + ": op " + op.id() + " of " + op.process() + " (" + op.kind() + ") saw revision "
                        + revisionSeen(op) + ", older than revision " + revisionSeen(newest) + " of op " + newest.id() + " of "
                        + newest.process() + ", which completed before it started");
            } else if (isWrite(op) && newestWrite != null && revisionSeen(op) <= revisionSeen(newestWrite)) {
                violations.add("kv " + key + ": op " + op.id() + " of " + op.process() + " wrote revision " + revisionSeen(op)
                        + ", not above revision " + revisionSeen(newestWrite) + " of op " + newestWrite.id() + ", written before it started");
            }
        }
    }

    private static boolean isWrite(Op op) {
        return op.kind() == Kind.KV_CAS && op.outcome() == Outcome.OK;
    }

    /** The revision an operation saw or made: a read's, a swap's new one, a miss's current one; 0 when unknown. */
    private static long revisionSeen(Op op) {
        return op.kind() == Kind.KV_READ ? op.token() : op.position();
    }

    /** Violations 1 and 2: per key, accepted tokens never go down and accepted values always go up. */
    static void checkResource(List<ResourceWrite> writes, FencedResource.Fence fence, List<String> violations) {
        Map<String, ResourceWrite> last = new HashMap<>();
        for (ResourceWrite w : writes) {
            if (!w.accepted()) {
                continue;
            }
            ResourceWrite before = last.put(w.key(), w);
            if (before == null) {
                continue;
            }
            boolean tokenOk = fence == FencedResource.Fence.AT_LEAST ? w.token() >= before.token() : w.token() > before.token();
            if (!tokenOk) {
                violations.add("stale token accepted on " + w.key() + ": " + w.token() + " from " + w.writer()
                        + " after " + before.token() + " from " + before.writer());
            }
            if (w.value() <= before.value()) {
                violations.add("lost update on " + w.key() + ": value " + w.value() + " (token " + w.token() + ", " + w.writer()
                        + ") accepted after value " + before.value() + " (token " + before.token() + ", " + before.writer() + ")");
            }
        }
    }

    /** Violation 3: a client's recorded WRITE outcome agrees with the resource's decision. */
    static void checkWritesRecorded(List<Op> ops, List<ResourceWrite> writes, List<String> violations) {
        Map<String, ResourceWrite> byWriter = new HashMap<>();
        writes.forEach(w -> byWriter.put(w.writer(), w));
        for (Op op : ops) {
            if (op.kind() != Kind.WRITE || op.outcome() == Outcome.INFO) {
                continue;
            }
            ResourceWrite decision = byWriter.get(op.process() + "/" + op.id());
            if (decision == null) {
                violations.add(op.process() + " recorded WRITE " + op.id() + " " + op.outcome() + " on " + op.key()
                        + " (token " + op.token() + ") but the resource has no such write");
            } else if ((op.outcome() == Outcome.OK) != decision.accepted() || decision.token() != op.token()
                    || decision.value() != op.value()) {
                violations.add(op.process() + " recorded WRITE " + op.id() + " " + op.outcome() + " (token " + op.token() + ", value "
                        + op.value() + ") but the resource " + (decision.accepted() ? "accepted" : "refused") + " token "
                        + decision.token() + " value " + decision.value());
            }
        }
    }

    /** Violation 4: the semaphores' resource view, and each SEM_WRITE's recorded outcome against the resource's decision. */
    static void checkPermits(List<Op> ops, List<PermitDecision> decisions, Map<String, Integer> limits, List<String> violations) {
        PermitFence.breaches(decisions, limits).forEach(b -> violations.add(b.description()));
        checkOutcomes(ops, Kind.SEM_WRITE, decisions, violations);
    }

    /**
     * The byte-range writers' resource view (no conflicting holdings open at once, no overlapping
     * stale write accepted: {@link RangeHoldings#breaches}), and each RANGE_WRITE's recorded outcome
     * against the resource's decision on it (by writer id: accepted or refused, token, region).
     */
    static void checkRanges(List<Op> ops, List<RangeDecision> decisions, List<String> violations) {
        RangeHoldings.breaches(decisions).forEach(b -> violations.add(b.description()));
        Map<String, RangeDecision> byWriter = new HashMap<>();
        decisions.stream().filter(d -> d.event() == RangeDecision.Event.WRITE).forEach(d -> byWriter.put(d.writer(), d));
        for (Op op : ops) {
            if (op.kind() != Kind.RANGE_WRITE || op.outcome() == Outcome.INFO) {
                continue;
            }
            RangeDecision d = byWriter.get(op.process() + "/" + op.id());
            if (d == null || d.accepted() != (op.outcome() == Outcome.OK) || d.token() != op.token()
                    || !RangeWorker.key(d.inode(), d.start(), d.end()).equals(op.key())) {
                violations.add(op.process() + " recorded RANGE_WRITE " + op.id() + " " + op.outcome() + " of " + op.key() + " (token "
                        + op.token() + "), but the resource " + (d == null ? "has no record of it" : (d.accepted() ? "accepted" : "refused")
                        + " token " + d.token() + " for " + d.region()));
            }
        }
    }

    /** Violation 5: the elections' resource view (one leadership at a time), and each LEAD_WRITE's recorded outcome. */
    static void checkLeaders(List<Op> ops, List<PermitDecision> decisions, List<String> elections, List<String> violations) {
        PermitFence.leaderBreaches(decisions, elections).forEach(b -> violations.add(b.description()));
        checkOutcomes(ops, Kind.LEAD_WRITE, decisions, violations);
    }

    /** The recorded outcomes of the {@code writeKind} ops against the decisions of a resource fenced per grant. */
    private static void checkOutcomes(List<Op> ops, Kind writeKind, List<PermitDecision> decisions, List<String> violations) {
        boolean permits = writeKind == Kind.SEM_WRITE; // a leader's write has no permits of its own to compare
        Map<String, PermitDecision> byWriter = new HashMap<>();
        decisions.stream().filter(d -> d.event() == PermitDecision.Event.WRITE).forEach(d -> byWriter.put(d.writer(), d));
        for (Op op : ops) {
            if (op.kind() != writeKind || op.outcome() == Outcome.INFO) {
                continue;
            }
            PermitDecision decision = byWriter.get(op.process() + "/" + op.id());
            if (decision == null || (op.outcome() == Outcome.OK) != decision.accepted() || decision.token() != op.token()
                    || permits && decision.permits() != op.value()) {
                violations.add(op.process() + " recorded " + writeKind + " " + op.id() + " " + op.outcome() + " on " + op.key() + " (token "
                        + op.token() + (permits ? ", " + op.value() + " permits" : "") + ") but the resource " + (decision == null
                        ? "has no such write" : (decision.accepted() ? "accepted" : "refused") + " token " + decision.token()
                        + (permits ? " with " + decision.permits() + " permits" : "")));
            }
        }
    }

    /** The warning: a write accepted after another process's grant of the key with a larger token had completed. */
    static void checkStaleAccepts(List<Op> ops, List<ResourceWrite> writes, List<String> warnings) {
        Map<String, List<Op>> grantsByKey = new HashMap<>();
        ops.stream().filter(op -> op.kind() == Kind.ACQUIRE && op.outcome() == Outcome.OK && op.key() != null)
                .forEach(op -> grantsByKey.computeIfAbsent(op.key(), k -> new ArrayList<>()).add(op));
        for (ResourceWrite w : writes) {
            if (!w.accepted()) {
                continue;
            }
            String writer = FencedResource.processOf(w.writer());
            grantsByKey.getOrDefault(w.key(), List.of()).stream()
                    .filter(g -> !g.process().equals(writer) && g.token() > w.token() && g.completeNanos() < w.atNanos())
                    .findFirst()
                    .ifPresent(g -> warnings.add("write of " + w.key() + " with token " + w.token() + " by " + w.writer()
                            + " accepted " + (w.atNanos() - g.completeNanos()) / 1_000_000 + " ms after " + g.process()
                            + " was granted it with token " + g.token()));
        }
    }

    static List<Op> histories(Path runDir) {
        Path dir = runDir.resolve("history");
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> files = Files.list(dir)) {
            List<Op> ops = new ArrayList<>();
            files.filter(f -> f.getFileName().toString().endsWith(".jsonl")).sorted()
                    .forEach(f -> ops.addAll(JsonLines.read(f, Op.class)));
            return ops;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
