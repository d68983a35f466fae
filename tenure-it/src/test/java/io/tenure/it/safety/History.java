package io.tenure.it.safety;

import io.tenure.it.safety.Op.Kind;
import io.tenure.it.safety.Op.Outcome;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One client process's history file, {@code history/<process>.jsonl}: an {@link Op} per line,
 * written and flushed when the operation completes, so a process killed at any moment leaves
 * every completed operation on disk (and at most a torn last line, which {@link JsonLines}
 * ignores). Operations still open when the process ends are written as {@link Outcome#INFO} by
 * {@link #close(String)}, which a shutdown hook calls. Thread-safe.
 */
public final class History implements AutoCloseable {
    private final Writer out;
    private final String process;
    private final long idBase;
    private final Map<Long, Pending> open = new LinkedHashMap<>();
    private long sequence;
    private boolean closed;

    private History(Writer out, String process, int processNumber) {
        this.out = out;
        this.process = process;
        this.idBase = (long) processNumber << 40;
    }

    /**
     * Opens (appending) the history of {@code process}, whose operation ids carry
     * {@code processNumber} in their high bits so they are unique within the run.
     */
    public static History open(Path file, String process, int processNumber) throws IOException {
        Files.createDirectories(file.getParent());
        Writer out = Files.newBufferedWriter(file, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        return new History(out, process, processNumber);
    }

    public String process() {
        return process;
    }

    /** Starts an operation now. */
    public Pending invoke(Kind kind, String key) {
        return invokeAt(kind, key, System.nanoTime());
    }

    /** Starts an operation that was invoked at {@code invokeNanos} (a keep-alive observed after its send). */
    public synchronized Pending invokeAt(Kind kind, String key, long invokeNanos) {
        Pending pending = new Pending(this, idBase | ++sequence, kind, key, invokeNanos);
        open.put(pending.id, pending);
        return pending;
    }

    synchronized void complete(Pending p, Outcome outcome, String error) {
        if (open.remove(p.id) == null || closed) {
            return; // already completed, or the process is ending and wrote it as INFO
        }
        write(p.toOp(outcome, System.nanoTime(), error));
    }

    private void write(Op op) {
        try {
            JsonLines.append(out, op);
            out.flush();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the history of " + process, e);
        }
    }

    /** Writes every open operation as INFO with {@code why}, then closes the file; later completions are dropped. */
    public synchronized void close(String why) {
        if (closed) {
            return;
        }
        long now = System.nanoTime();
        List<Pending> left = new ArrayList<>(open.values());
        open.clear();
        for (Pending p : left) {
            write(p.toOp(Outcome.INFO, now, why));
        }
        closed = true;
        try {
            out.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        close("the process ended with the operation open");
    }

    /** An operation invoked and not yet completed; fill in what the answer said, then complete it once. */
    public static final class Pending {
        private final History history;
        final long id;
        final Kind kind;
        final String key;
        final long invokeNanos;
        private volatile long leaseId;
        private volatile long token;
        private volatile long value;
        private volatile long ttlMillis;
        private volatile long position;
        private volatile String stream;

        private Pending(History history, long id, Kind kind, String key, long invokeNanos) {
            this.history = history;
            this.id = id;
            this.kind = kind;
            this.key = key;
            this.invokeNanos = invokeNanos;
        }

        public long id() {
            return id;
        }

        public Pending leaseId(long leaseId) {
            this.leaseId = leaseId;
            return this;
        }

        public Pending token(long token) {
            this.token = token;
            return this;
        }

        public Pending value(long value) {
            this.value = value;
            return this;
        }

        public Pending ttlMillis(long ttlMillis) {
            this.ttlMillis = ttlMillis;
            return this;
        }

        public Pending position(long position) {
            this.position = position;
            return this;
        }

        public Pending stream(String stream) {
            this.stream = stream;
            return this;
        }

        public void ok() {
            history.complete(this, Outcome.OK, null);
        }

        /** It definitely did not happen. */
        public void fail(String error) {
            history.complete(this, Outcome.FAIL, error);
        }

        /** It may or may not have happened. */
        public void info(String error) {
            history.complete(this, Outcome.INFO, error);
        }

        public void complete(Outcome outcome, String error) {
            history.complete(this, outcome, error);
        }

        Op toOp(Outcome outcome, long completeNanos, String error) {
            return new Op(id, history.process, kind, key, leaseId, token, value, ttlMillis, invokeNanos, completeNanos,
                    outcome, position, error, null, stream);
        }
    }
}
