package io.tenure.server.raft;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.Command;
import io.tenure.core.kernel.Effect;
import io.tenure.core.kernel.Result;
import io.tenure.core.TenureState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.BufferedWriter;
import java.io.Closeable;
import java.io.IOException;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.lang.reflect.RecordComponent;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.zip.CRC32C;

/**
 * A test aid for the safety suite (the hidden {@code tenure server --audit-log FILE}): what this
 * member applied, one JSON object per line, for a checker to compare members with each other, with
 * the clients' histories and with the pure core replayed as the model. Never on by default, and not
 * a durable record: lines are buffered and flushed every {@value #FLUSH_MILLIS} ms and on close, so
 * a killed member loses its tail (and may leave a torn last line, which the next open cuts off).
 * A restarted member appends to the same file and logs again whatever it re-applies.
 *
 * <p>Every line has {@code "line"} (its kind), {@code "at"} ({@link System#nanoTime()} when it was
 * written, the machine's monotonic clock that clients also record) and, but for {@code open}, the
 * Raft {@code index} and {@code term} it is about:
 * <ul>
 *   <li>{@code open}: the member started ({@code member}, {@code pid}); a new life of the file begins;</li>
 *   <li>{@code apply}: one command of the entry at {@code index}: {@code slot} of {@code slots},
 *       {@code position} ({@link Entry#position}), {@code command} ({@link #command}), {@code result}
 *       ({@link #result}), {@code effects} ({@link #effects}); {@code "skippedByTerm": true} when the
 *       adapter did not hand the command to the core (a lease expiry carried into another term);</li>
 *   <li>{@code index}: an entry with no command of Tenure's (a Raft configuration or metadata entry),
 *       so that a member's lines cover every index it applied;</li>
 *   <li>{@code digest}: after applying an index divisible by {@value #DIGEST_EVERY}: {@code digest},
 *       the CRC32C of the core's snapshot bytes ({@link #digest(TenureState)}), and {@code appliedPosition};</li>
 *   <li>{@code snapshot}: the state was replaced by the snapshot of {@code index}, {@code cause}
 *       {@code loaded} (at start) or {@code installed} (sent by the leader); lines go on after it.</li>
 * </ul>
 *
 * <p>Writes come from the apply thread; a write that fails turns the log off (logged once) rather
 * than stop the member.
 */
public final class AuditLog implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(AuditLog.class);
    /** Indexes between digests: often enough to locate a divergence, rare enough to cost nothing. */
    public static final int DIGEST_EVERY = 256;
    /** The longest a written line stays in the buffer. */
    public static final long FLUSH_MILLIS = 100;
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private final Path file;
    private final Writer out;
    private final LongSupplier clock;
    private final ScheduledExecutorService flusher;
    private boolean failed;
    private boolean closed;

    private AuditLog(Path file, Writer out, LongSupplier clock, ScheduledExecutorService flusher) {
        this.file = file;
        this.out = out;
        this.clock = clock;
        this.flusher = flusher;
    }

    /** Opens {@code file} for appending (creating it and its directory), flushed every {@value #FLUSH_MILLIS} ms. */
    public static AuditLog open(Path file, String member) throws IOException {
        ScheduledExecutorService flusher = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "tenure-audit-flush");
            t.setDaemon(true);
            return t;
        });
        AuditLog log;
        try {
            log = open(file, member, System::nanoTime, flusher);
        } catch (IOException | RuntimeException e) {
            flusher.shutdownNow();
            throw e;
        }
        flusher.scheduleWithFixedDelay(log::flush, FLUSH_MILLIS, FLUSH_MILLIS, TimeUnit.MILLISECONDS);
        return log;
    }

    /**
     * Opens {@code file} with the given clock; flushed only by {@link #flush()} and {@link #close()}
     * (for tests that write audit lines of their own).
     */
    public static AuditLog open(Path file, String member, LongSupplier clock) throws IOException {
        return open(file, member, clock, null);
    }

    private static AuditLog open(Path file, String member, LongSupplier clock, ScheduledExecutorService flusher) throws IOException {
        Path dir = file.toAbsolutePath().getParent();
        if (dir != null) {
            Files.createDirectories(dir);
        }
        cutTornTail(file);
        OutputStream stream = Files.newOutputStream(file, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        AuditLog log = new AuditLog(file, new BufferedWriter(new OutputStreamWriter(stream, StandardCharsets.UTF_8), 1 << 16),
                clock, flusher);
        ObjectNode open = log.line("open");
        open.put("member", member);
        open.put("pid", ProcessHandle.current().pid());
        log.write(open);
        LOG.warn("event=audit_log_on file={} (a test aid: every applied command is written to it)", file.toAbsolutePath());
        return log;
    }

    /** A killed writer may have left half a line: cut it, so that the next life starts on a line of its own. */
    private static void cutTornTail(Path file) throws IOException {
        if (!Files.exists(file)) {
            return;
        }
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            long size = channel.size();
            long end = size;
            ByteBuffer buffer = ByteBuffer.allocate(8192);
            while (end > 0) {
                int chunk = (int) Math.min(buffer.capacity(), end);
                buffer.clear().limit(chunk);
                long from = end - chunk;
                while (buffer.hasRemaining()) {
                    if (channel.read(buffer, from + buffer.position()) < 0) {
                        break;
                    }
                }
                for (int i = chunk - 1; i >= 0; i--) {
                    if (buffer.get(i) == '\n') {
                        if (from + i + 1 < size) {
                            channel.truncate(from + i + 1);
                        }
                        return;
                    }
                }
                end = from;
            }
            channel.truncate(0);
        }
    }

    /** One command applied at {@code index}, slot {@code slot} of {@code slots}. */
    public void applied(long index, long term, int slot, int slots, Command command, Applied applied, boolean skippedByTerm) {
        write(applyLine(clock.getAsLong(), index, term, slot, slots, command, applied, skippedByTerm));
    }

    /** An entry without commands of Tenure's (configuration, metadata). */
    public void indexApplied(long index, long term) {
        ObjectNode line = line("index");
        line.put("index", index);
        line.put("term", term);
        write(line);
    }

    /** The state digest after applying {@code index}. */
    public void digest(long index, long term, TenureState state) {
        ObjectNode line = line("digest");
        line.put("index", index);
        line.put("term", term);
        line.put("appliedPosition", state.appliedPosition());
        line.put("digest", digest(state));
        write(line);
    }

    /** The state was replaced by the snapshot of {@code index}. */
    public void snapshot(long index, long term, String cause) {
        ObjectNode line = line("snapshot");
        line.put("index", index);
        line.put("term", term);
        line.put("cause", cause);
        write(line);
    }

    /** The line of one applied command, as {@link #applied} writes it. */
    public static ObjectNode applyLine(long at, long index, long term, int slot, int slots, Command command, Applied applied,
                                       boolean skippedByTerm) {
        ObjectNode line = NODES.objectNode();
        line.put("line", "apply");
        line.put("at", at);
        line.put("index", index);
        line.put("term", term);
        line.put("slot", slot);
        line.put("slots", slots);
        line.put("position", Entry.position(index, slot));
        if (skippedByTerm) {
            line.put("skippedByTerm", true);
        }
        line.set("command", command(command));
        line.set("result", result(applied.result()));
        line.set("effects", effects(applied.effects()));
        return line;
    }

    /** CRC32C of the state's snapshot bytes: equal states give equal digests (the format is canonical). */
    public static long digest(TenureState state) {
        CRC32C crc = new CRC32C();
        try {
            state.writeSnapshot(new OutputStream() {
                @Override
                public void write(int b) {
                    crc.update(b);
                }

                @Override
                public void write(byte[] b, int off, int len) {
                    crc.update(b, off, len);
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return crc.getValue();
    }

    /**
     * A command as JSON: {@code type} (the record's name), its fields by name, and {@code bytes},
     * its log encoding in base64 (from which a checker rebuilds the very command,
     * {@code TenureState.CODEC.decode}).
     */
    public static ObjectNode command(Command command) {
        ObjectNode n = (ObjectNode) json(command);
        n.put("bytes", TenureState.CODEC.encode(command));
        return n;
    }

    /** A result as JSON: {@code type} (the record's name) and its fields by name. */
    public static ObjectNode result(Result result) {
        return (ObjectNode) json(result);
    }

    public static ArrayNode effects(List<Effect> effects) {
        ArrayNode array = NODES.arrayNode();
        effects.forEach(e -> array.add(json(e)));
        return array;
    }

    /**
     * Any value of the core as JSON, read from its record components, so that every primitive's
     * commands, results and effects are written without a line of their own here. A command,
     * result or effect carries its record's name as {@code type}; byte arrays are base64; enums
     * their names.
     */
    static JsonNode json(Object value) {
        if (value == null) {
            return NODES.nullNode();
        } else if (value instanceof byte[] b) {
            return NODES.binaryNode(b);
        } else if (value instanceof long[] longs) {
            ArrayNode array = NODES.arrayNode();
            for (long l : longs) {
                array.add(l);
            }
            return array;
        } else if (value instanceof Collection<?> items) {
            ArrayNode array = NODES.arrayNode();
            items.forEach(item -> array.add(json(item)));
            return array;
        } else if (value instanceof Record record) {
            ObjectNode n = NODES.objectNode();
            if (record instanceof Command || record instanceof Result || record instanceof Effect) {
                n.put("type", record.getClass().getSimpleName());
            }
            for (RecordComponent component : record.getClass().getRecordComponents()) {
                try {
                    n.set(component.getName(), json(component.getAccessor().invoke(record)));
                } catch (ReflectiveOperationException e) {
                    throw new IllegalStateException("cannot read " + component + " of " + record.getClass().getName(), e);
                }
            }
            return n;
        } else if (value instanceof Enum<?> e) {
            return NODES.textNode(e.name());
        } else if (value instanceof Long l) {
            return NODES.numberNode(l);
        } else if (value instanceof Integer i) {
            return NODES.numberNode(i);
        } else if (value instanceof Boolean b) {
            return NODES.booleanNode(b);
        }
        return NODES.textNode(String.valueOf(value));
    }

    private ObjectNode line(String kind) {
        ObjectNode line = NODES.objectNode();
        line.put("line", kind);
        line.put("at", clock.getAsLong());
        return line;
    }

    /** Appends one line (buffered). */
    public synchronized void write(ObjectNode line) {
        if (failed || closed) {
            return;
        }
        try {
            out.write(JSON.writeValueAsString(line));
            out.write('\n');
        } catch (IOException e) {
            fail(e);
        }
    }

    public synchronized void flush() {
        if (failed || closed) {
            return;
        }
        try {
            out.flush();
        } catch (IOException e) {
            fail(e);
        }
    }

    private void fail(IOException e) {
        failed = true;
        LOG.error("event=audit_log_failed file={} reason=\"{}\": the audit log is off from here on", file, e.toString());
    }

    /** Flushes and closes; later writes are ignored. */
    @Override
    public void close() {
        if (flusher != null) {
            flusher.shutdownNow();
        }
        synchronized (this) {
            if (closed) {
                return;
            }
            flush();
            closed = true;
            try {
                out.close();
            } catch (IOException e) {
                LOG.warn("event=audit_log_close_failed file={} reason=\"{}\"", file, e.toString());
            }
        }
    }
}
