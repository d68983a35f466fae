package io.tenure.it.safety;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.Command;
import io.tenure.core.TenureState;
import io.tenure.server.raft.AuditLog;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;

/**
 * Writes a hand-made run directory for the checker's tests: commands applied through the pure
 * core and logged for every member with the server's own {@link AuditLog} (so the format is the
 * real one), client operations, resource writes and faults. A test can tamper with one member's
 * line of a command to plant a violation. Times are milliseconds after {@link #T0}.
 */
final class RunFixture {
    /** The run's start on the (pretend) monotonic clock. */
    static final long T0 = 1_000_000_000_000L;
    static final long TERM = 1;

    final Path dir;
    final List<String> members;
    long ttlMillis = 5_000;
    long electionMillis = 1_000;
    long endMillis = 15_000;
    private final TenureState model = new TenureState();
    private final Map<String, AuditLog> audits = new LinkedHashMap<>();
    private final Map<String, AtomicLong> clocks = new LinkedHashMap<>();
    private final List<Op> ops = new ArrayList<>();
    private final List<ResourceWrite> resource = new ArrayList<>();
    private final List<PermitDecision> permits = new ArrayList<>();
    private final List<PermitDecision> leaders = new ArrayList<>();
    /** The range writers' decisions ({@code ranges.jsonl}), and their inode in {@code run.json} (0: none). */
    final List<RangeDecision> ranges = new ArrayList<>();
    long rangeInode;
    /** The run's semaphores and their limits, as {@code run.json} names them. */
    final Map<String, Integer> semaphores = new LinkedHashMap<>();
    /** The run's elections, as {@code run.json} names them. */
    final List<String> elections = new ArrayList<>();
    private final List<FaultEvent> faults = new ArrayList<>();
    private long nextIndex;
    private long nextOpId = 1;

    RunFixture(Path dir, String... members) throws IOException {
        this.dir = dir;
        this.members = List.of(members);
        for (int i = 0; i < members.length; i++) {
            AtomicLong clock = new AtomicLong(T0);
            clocks.put(members[i], clock);
            audits.put(members[i], AuditLog.open(dir.resolve("members").resolve(members[i]).resolve("audit.jsonl"), members[i], clock::get));
        }
    }

    static long at(long millis) {
        return T0 + millis * 1_000_000L;
    }

    static long position(long index) {
        return index << 16;
    }

    /** The next index, as every member applies it at {@code millis} (member i a few ms after member 0). */
    Applied apply(long millis, Command command) {
        return apply(millis, command, (member, line) -> { });
    }

    /** As {@link #apply(long, Command)}, letting {@code tamper} change a member's logged line first. */
    Applied apply(long millis, Command command, BiConsumer<String, ObjectNode> tamper) {
        long index = nextIndex++;
        Applied applied = model.apply(position(index), command);
        int i = 0;
        for (Map.Entry<String, AuditLog> m : audits.entrySet()) {
            long when = at(millis) + 3_000_000L * i++;
            clocks.get(m.getKey()).set(when);
            ObjectNode line = AuditLog.applyLine(when, index, TERM, 0, 1, command, applied, false);
            tamper.accept(m.getKey(), line);
            m.getValue().write(line);
        }
        return applied;
    }

    /** The next index is a Raft configuration or metadata entry. */
    long noop(long millis) {
        long index = nextIndex++;
        int i = 0;
        for (Map.Entry<String, AuditLog> m : audits.entrySet()) {
            clocks.get(m.getKey()).set(at(millis) + 3_000_000L * i++);
            m.getValue().indexApplied(index, TERM);
        }
        return index;
    }

    /** Every member logs the state digest after the last index; {@code tamper} may change a member's line. */
    void digest(BiConsumer<String, ObjectNode> tamper) {
        for (Map.Entry<String, AuditLog> m : audits.entrySet()) {
            ObjectNode line = new ObjectMapper().createObjectNode();
            line.put("line", "digest");
            line.put("at", clocks.get(m.getKey()).get());
            line.put("index", nextIndex - 1);
            line.put("term", TERM);
            line.put("appliedPosition", model.appliedPosition());
            line.put("digest", AuditLog.digest(model));
            tamper.accept(m.getKey(), line);
            m.getValue().write(line);
        }
    }

    Op op(String process, Op.Kind kind, String key, long leaseId, long token, long value, long invokeMillis, long completeMillis,
          Op.Outcome outcome, long position) {
        Op op = new Op(nextOpId++, process, kind, key, leaseId, token, value, kind == Op.Kind.GRANT || kind == Op.Kind.KEEPALIVE ? ttlMillis : 0,
                at(invokeMillis), at(completeMillis), outcome, position, outcome == Op.Outcome.OK ? null : "failed", "n1", null);
        ops.add(op);
        return op;
    }

    /** An acknowledged operation; an acquire's position is its token. */
    Op ok(String process, Op.Kind kind, String key, long leaseId, long token, long value, long invokeMillis, long completeMillis) {
        return op(process, kind, key, leaseId, token, value, invokeMillis, completeMillis, Op.Outcome.OK,
                kind == Op.Kind.ACQUIRE || kind == Op.Kind.SEM_ACQUIRE || kind == Op.Kind.CAMPAIGN ? token : 0);
    }

    /** A watch event delivered on {@code stream}. */
    Op watched(String process, String stream, String key, long revision, boolean put, long leaseId, long millis, String member) {
        Op op = new Op(nextOpId++, process, Op.Kind.WATCH, key, leaseId, revision, put ? 1 : 0, 0, at(millis), at(millis),
                Op.Outcome.OK, revision, null, member, stream);
        ops.add(op);
        return op;
    }

    void write(Op op, long millis, boolean accepted) {
        resource.add(new ResourceWrite(op.key(), op.token(), op.value(), op.process() + "/" + op.id(), at(millis), accepted));
    }

    void resource(ResourceWrite write) {
        resource.add(write);
    }

    /** The resource's decision on {@code op}'s semaphore grant (its key, token and permits), made at {@code millis}. */
    void permit(Op op, PermitDecision.Event event, long millis, boolean accepted) {
        permits.add(new PermitDecision(op.key(), event, op.token(), (int) op.value(), op.process() + "/" + op.id(), at(millis), accepted,
                accepted ? null : "refused"));
    }

    /** The resource's decision on {@code op}'s leadership (its election and token), made at {@code millis}. */
    void leader(Op op, PermitDecision.Event event, long millis, boolean accepted) {
        leaders.add(new PermitDecision(op.key(), event, op.token(), 1, op.process() + "/" + op.id(), at(millis), accepted,
                accepted ? null : "refused"));
    }

    void fault(String fault, String target, long startMillis, long endMillis) {
        faults.add(new FaultEvent(at(startMillis), fault, "start", target, "planted"));
        if (endMillis >= 0) {
            faults.add(new FaultEvent(at(endMillis), fault, "end", target, "planted"));
        }
    }

    List<Op> ops() {
        return ops;
    }

    /** Writes everything not yet written, and closes the audit logs. */
    Path finish() throws IOException {
        audits.values().forEach(AuditLog::close);
        ObjectNode run = new ObjectMapper().createObjectNode();
        run.put("ttlMillis", ttlMillis);
        run.put("electionTimeoutMillis", electionMillis);
        run.put("expiryPeriodMillis", 50);
        members.forEach(run.putArray("members")::add);
        run.putArray("keys").add("k1").add("k2");
        run.put("startNanos", T0);
        run.put("endNanos", at(endMillis));
        run.put("seed", 42);
        run.putArray("faults").add("kill").add("pause");
        semaphores.forEach(run.putObject("semaphores")::put);
        elections.forEach(run.putArray("elections")::add);
        if (rangeInode > 0) {
            run.put("rangeInode", rangeInode);
        }
        Files.writeString(dir.resolve("run.json"), run.toString());
        Files.createDirectories(dir.resolve("history"));
        Map<String, List<Op>> byProcess = new LinkedHashMap<>();
        ops.forEach(op -> byProcess.computeIfAbsent(op.process(), k -> new ArrayList<>()).add(op));
        for (Map.Entry<String, List<Op>> p : byProcess.entrySet()) {
            writeLines(dir.resolve("history").resolve(p.getKey() + ".jsonl"), p.getValue());
        }
        writeLines(dir.resolve("resource.jsonl"), resource);
        writeLines(dir.resolve("permits.jsonl"), permits);
        writeLines(dir.resolve("leaders.jsonl"), leaders);
        if (!ranges.isEmpty()) {
            writeLines(dir.resolve("ranges.jsonl"), ranges);
        }
        writeLines(dir.resolve("nemesis.jsonl"), faults);
        return dir;
    }

    static void writeLines(Path file, List<?> records) {
        try (Writer out = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            for (Object r : records) {
                JsonLines.append(out, r);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
