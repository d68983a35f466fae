package io.tenure.it.safety;

import java.nio.file.Path;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * What {@link SafetyChecker#check(Path)} found in a run: every check's outcome, the violations
 * (in the order found, check by check) and the run's figures; {@link #report()} renders it.
 */
public record Verdict(Path runDir, RunInfo run, List<CheckOutcome> checks, List<Violation> violations, Statistics statistics) {
    /** How many violations the report lists after the first one, which it shows in full. */
    private static final int LISTED = 25;

    public Verdict {
        checks = List.copyOf(checks);
        violations = List.copyOf(violations);
    }

    /**
     * The run's figures.
     *
     * @param ops        operations by kind and outcome
     * @param faults     fault starts by kind
     * @param recoveries the measured recoveries: leader after a heal, lock after a holder's death
     * @param notes      what the checker could not read or had to skip (torn lines, gaps)
     */
    public record Statistics(Map<Op.Kind, Map<Op.Outcome, Integer>> ops, Map<String, Integer> faults,
                             List<Recovery> recoveries, List<String> notes) {
        public Statistics {
            ops = Map.copyOf(ops);
            faults = Map.copyOf(faults);
            recoveries = List.copyOf(recoveries);
            notes = List.copyOf(notes);
        }
    }

    /**
     * One recovery: {@code what} recovered, counted from {@code atNanos}, in {@code millis} (-1 when it
     * did not within the run), against {@code boundMillis}.
     */
    public record Recovery(String what, long atNanos, long millis, long boundMillis) {}

    public boolean clean() {
        return violations.isEmpty();
    }

    /** Whether check {@code number} found at least one violation. */
    public boolean violated(int number) {
        return violations.stream().anyMatch(v -> v.check() == number);
    }

    /** The checks that found at least one violation, in order. */
    public java.util.SortedSet<Integer> violatedChecks() {
        return violations.stream().map(Violation::check).collect(Collectors.toCollection(java.util.TreeSet::new));
    }

    /** What check {@code number}'s violations say, earliest first. */
    public List<String> descriptions(int number) {
        return violations.stream().filter(v -> v.check() == number).map(Violation::description).toList();
    }

    public CheckOutcome outcome(int number) {
        return checks.stream().filter(c -> c.check() == number).findFirst().orElseThrow();
    }

    /** The report in Markdown: outcome per check, operations, faults, the first violation in full, recoveries. */
    public String report() {
        StringBuilder md = new StringBuilder();
        md.append("# Safety run: ").append(runDir.getFileName()).append("\n\n");
        md.append(String.format(Locale.ROOT, "Seed %d, %s, members %s, keys %s, TTL %d ms, election timeout %d ms, expiry period %d ms.%n%n",
                run.seed(), seconds(run.endNanos() - run.startNanos()), run.members(), run.keys(), run.ttlMillis(),
                run.electionTimeoutMillis(), run.expiryPeriodMillis()));
        md.append(clean() ? "**Verdict: no violation.**" : "**Verdict: " + violations.size() + " violation(s), checks "
                + violations.stream().map(Violation::check).distinct().sorted().map(String::valueOf).collect(Collectors.joining(", ")) + ".**");
        md.append("\n\n## Checks\n\n| # | check | outcome | evidence |\n| --- | --- | --- | --- |\n");
        for (CheckOutcome c : checks) {
            long count = violations.stream().filter(v -> v.check() == c.check()).count();
            String status = switch (c.status()) {
                case PASSED -> "passed";
                case VIOLATED -> "**VIOLATED** (" + count + ")";
                case NOT_EXERCISED -> "not exercised";
            };
            md.append("| ").append(c.check()).append(" | ").append(c.title()).append(" | ").append(status).append(" | ")
                    .append(cell(c.evidence())).append(" |\n");
        }
        operations(md);
        faults(md);
        if (!clean()) {
            Violation first = violations.get(0);
            md.append("\n## First violation: check ").append(first.check()).append(", ").append(first.title()).append("\n\n");
            md.append(first.description()).append(first.atNanos() == 0 ? "" : " (at " + at(first.atNanos()) + ")").append("\n\n");
            md.append("Operations around it:\n\n| op | process | kind | key | lease | token | value | invoked | completed | outcome | position | member | error |\n")
                    .append("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
            for (Op op : first.around()) {
                md.append(String.format(Locale.ROOT, "| %d | %s | %s | %s | %d | %d | %d | %s | %s | %s | %d | %s | %s |%n",
                        op.id(), op.process(), op.kind(), op.key() == null ? "" : op.key(), op.leaseId(), op.token(), op.value(),
                        at(op.invokeNanos()), at(op.completeNanos()), op.outcome(), op.position(),
                        op.member() == null ? "" : op.member(), op.error() == null ? "" : cell(op.error())));
            }
            md.append("\nFault timeline:\n\n");
            if (first.timeline().isEmpty()) {
                md.append("(no fault before or around it)\n");
            }
            for (FaultEvent f : first.timeline()) {
                md.append("- ").append(at(f.atNanos())).append(' ').append(f.fault()).append(' ').append(f.phase())
                        .append(' ').append(f.target()).append(f.detail() == null ? "" : " (" + f.detail() + ")").append('\n');
            }
            if (violations.size() > 1) {
                md.append("\n## Other violations\n\n");
                violations.stream().skip(1).limit(LISTED).forEach(v -> md.append("- check ").append(v.check()).append(": ")
                        .append(v.description()).append(v.atNanos() == 0 ? "" : " (at " + at(v.atNanos()) + ")").append('\n'));
                if (violations.size() - 1 > LISTED) {
                    md.append("- ... and ").append(violations.size() - 1 - LISTED).append(" more\n");
                }
            }
        }
        recoveries(md);
        if (!statistics.notes().isEmpty()) {
            md.append("\n## Notes\n\n");
            statistics.notes().forEach(n -> md.append("- ").append(n).append('\n'));
        }
        return md.toString();
    }

    private void operations(StringBuilder md) {
        md.append("\n## Operations\n\n| kind | ok | fail | info | total |\n| --- | --- | --- | --- | --- |\n");
        int[] totals = new int[4];
        Map<Op.Kind, Map<Op.Outcome, Integer>> sorted = new EnumMap<>(Op.Kind.class);
        sorted.putAll(statistics.ops());
        sorted.forEach((kind, byOutcome) -> {
            int ok = byOutcome.getOrDefault(Op.Outcome.OK, 0);
            int fail = byOutcome.getOrDefault(Op.Outcome.FAIL, 0);
            int info = byOutcome.getOrDefault(Op.Outcome.INFO, 0);
            totals[0] += ok;
            totals[1] += fail;
            totals[2] += info;
            totals[3] += ok + fail + info;
            md.append("| ").append(kind).append(" | ").append(ok).append(" | ").append(fail).append(" | ").append(info)
                    .append(" | ").append(ok + fail + info).append(" |\n");
        });
        md.append("| all | ").append(totals[0]).append(" | ").append(totals[1]).append(" | ").append(totals[2]).append(" | ")
                .append(totals[3]).append(" |\n");
    }

    private void faults(StringBuilder md) {
        md.append("\n## Faults\n\n");
        if (statistics.faults().isEmpty()) {
            md.append("No fault was injected.\n");
            return;
        }
        md.append("| fault | injected |\n| --- | --- |\n");
        new TreeMap<>(statistics.faults()).forEach((k, n) -> md.append("| ").append(k).append(" | ").append(n).append(" |\n"));
    }

    private void recoveries(StringBuilder md) {
        md.append("\n## Recovery times\n\n");
        if (statistics.recoveries().isEmpty()) {
            md.append("None measured (no fault ended, and no lock holder died, while the run went on).\n");
            return;
        }
        for (String kind : List.of("leader", "lock")) {
            List<Long> measured = statistics.recoveries().stream().filter(r -> r.what().startsWith(kind) && r.millis() >= 0)
                    .map(Recovery::millis).sorted().toList();
            if (!measured.isEmpty()) {
                md.append(String.format(Locale.ROOT, "- %s: %d measured, median %d ms, max %d ms%n",
                        kind.equals("leader") ? "a leader after a heal" : "the lock for a dead holder's waiter", measured.size(),
                        measured.get(measured.size() / 2), measured.get(measured.size() - 1)));
            }
        }
        md.append('\n');
        md.append("| what | from | took | bound |\n| --- | --- | --- | --- |\n");
        for (Recovery r : statistics.recoveries()) {
            md.append("| ").append(cell(r.what())).append(" | ").append(at(r.atNanos())).append(" | ")
                    .append(r.millis() < 0 ? "not within the run" : r.millis() + " ms").append(" | ").append(r.boundMillis())
                    .append(" ms |\n");
        }
    }

    /** A time as seconds since the run's start. */
    private String at(long nanos) {
        return "+" + seconds(nanos - run.startNanos());
    }

    private static String seconds(long nanos) {
        return String.format(Locale.ROOT, "%.3fs", nanos / 1e9);
    }

    private static String cell(String text) {
        return text.replace("|", "\\|").replace("\n", " ");
    }
}
