package io.tenure.server.security;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Who did what on this member, as JSON lines in a file of its own ({@code --audit-file}): every
 * grant, release and revoke, every change of users, roles and the switch, and every refused
 * request (a missing or wrong credential, a missing permission), each with its principal, the
 * remote address, the resource and the outcome. Never a password, a token or its hash.
 *
 * <p>Lines are handed to one writer thread through a bounded queue, so a call never waits on the
 * disk; the writer flushes after each batch and starts a new file when the current one reaches
 * {@link Settings#maxBytes}, keeping {@link Settings#files} older ones ({@code audit.jsonl.1} the
 * newest). When the queue is full (the disk is slower than the calls) a line is dropped and
 * counted, never blocking the call: {@link #dropped()}, logged as {@code event=audit_dropped}.
 */
public final class AuditTrail implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(AuditTrail.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int QUEUE = 65_536;

    /**
     * Where the trail goes: {@code file} (null: no trail), a new file after {@code maxBytes}, and
     * {@code files} older files kept.
     */
    public record Settings(Path file, long maxBytes, int files) {
        public static final long DEFAULT_MAX_BYTES = 64L << 20;
        public static final int DEFAULT_FILES = 5;
        public static final Settings OFF = new Settings(null, DEFAULT_MAX_BYTES, DEFAULT_FILES);

        /** The problem with these settings, naming the flag, or null. */
        public String problem() {
            if (maxBytes < 4096) {
                return "--audit-max-size must be at least 4096 bytes, got " + maxBytes;
            }
            if (files < 1 || files > 1000) {
                return "--audit-files must be between 1 and 1000, got " + files;
            }
            return null;
        }
    }

    /** A trail that records nothing. */
    public static final AuditTrail OFF = new AuditTrail();

    private final Settings settings;
    private final String member;
    private final LongSupplier wallClockMillis;
    private final BlockingQueue<String> lines;
    private final AtomicLong dropped = new AtomicLong();
    private final AtomicLong lastDropWarning = new AtomicLong();
    private final Thread writer;
    private volatile boolean closed;

    private AuditTrail() {
        this.settings = Settings.OFF;
        this.member = "";
        this.wallClockMillis = System::currentTimeMillis;
        this.lines = null;
        this.writer = null;
    }

    private AuditTrail(Settings settings, String member, LongSupplier wallClockMillis) throws IOException {
        this.settings = settings;
        this.member = member;
        this.wallClockMillis = wallClockMillis;
        this.lines = new ArrayBlockingQueue<>(QUEUE);
        Path parent = settings.file().toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        // Fails now, at start, on a file the member cannot write.
        Files.newBufferedWriter(settings.file(), StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND).close();
        this.writer = new Thread(this::writeLines, "tenure-audit");
        writer.setDaemon(true);
        writer.start();
    }

    /** The trail of member {@code member} as {@code settings} say: {@link #OFF} without a file. */
    public static AuditTrail open(Settings settings, String member) {
        if (settings == null || settings.file() == null) {
            return OFF;
        }
        try {
            return new AuditTrail(settings, member, System::currentTimeMillis);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the audit file " + settings.file() + " (--audit-file): " + e.getMessage(), e);
        }
    }

    public boolean enabled() {
        return lines != null;
    }

    /** Lines dropped because the writer fell behind. */
    public long dropped() {
        return dropped.get();
    }

    /**
     * Records that {@code who} did {@code action} on {@code resource} of {@code kind} (empty:
     * none) with {@code outcome}; {@code lease} and {@code token} are 0 when they do not apply,
     * {@code message} empty when there is none to add.
     */
    public void record(Principal who, String action, String kind, String resource, long lease, long token, String outcome,
                       String message) {
        if (lines == null || closed) {
            return;
        }
        ObjectNode line = JSON.createObjectNode();
        line.put("time", Instant.ofEpochMilli(wallClockMillis.getAsLong()).toString());
        line.put("member", member);
        line.put("user", who.isMember() ? "(member)" : who.user());
        line.put("credential", who.credential());
        line.put("remote", who.remote());
        line.put("action", action);
        if (!kind.isEmpty()) {
            line.put("kind", kind);
        }
        if (!resource.isEmpty()) {
            line.put("resource", resource);
        }
        if (lease != 0) {
            line.put("lease", lease);
        }
        if (token != 0) {
            line.put("token", token);
        }
        line.put("outcome", outcome);
        if (!message.isEmpty()) {
            line.put("message", message);
        }
        if (!lines.offer(line.toString())) {
            long n = dropped.incrementAndGet();
            long now = System.nanoTime();
            long last = lastDropWarning.get();
            if (now - last > TimeUnit.SECONDS.toNanos(10) && lastDropWarning.compareAndSet(last, now)) {
                LOG.warn("event=audit_dropped dropped_total={} file={}: the audit writer is behind the calls", n, settings.file());
            }
        }
    }

    /**
     * Records how {@code call}, made by {@code who}, ends: its answer's {@code outcome} and fencing
     * {@code token} (0: none), or {@code refused} with the failure's message. Nothing when off.
     */
    public <T> void whenDone(java.util.concurrent.CompletableFuture<T> call, Principal who, String action, String kind, String resource,
                             long lease, java.util.function.ToLongFunction<T> token, java.util.function.Function<T, String> outcome) {
        if (lines == null) {
            return;
        }
        call.whenComplete((answer, error) -> {
            if (error != null) {
                Throwable cause = io.tenure.server.Causes.unwrap(error);
                record(who, action, kind, resource, lease, 0, "refused", String.valueOf(cause.getMessage()));
            } else {
                record(who, action, kind, resource, lease, token.applyAsLong(answer), outcome.apply(answer), "");
            }
        });
    }

    private void writeLines() {
        BufferedWriter out = null;
        try {
            out = openFile();
            long size = Files.size(settings.file());
            List<String> batch = new ArrayList<>(1024);
            while (!closed || !lines.isEmpty()) {
                String first = lines.poll(200, TimeUnit.MILLISECONDS);
                if (first == null) {
                    continue;
                }
                batch.add(first);
                lines.drainTo(batch, 4095);
                for (String line : batch) {
                    if (size > 0 && size + line.length() + 1 > settings.maxBytes()) {
                        out.close();
                        rotate();
                        out = openFile();
                        size = 0;
                    }
                    out.write(line);
                    out.write('\n');
                    size += line.getBytes(StandardCharsets.UTF_8).length + 1;
                }
                out.flush();
                batch.clear();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException e) {
            LOG.error("event=audit_failed file={} reason=\"{}\": no more audit lines are written", settings.file(), e.getMessage());
        } finally {
            if (out != null) {
                try {
                    out.close();
                } catch (IOException e) {
                    LOG.warn("event=audit_close_failed file={} reason=\"{}\"", settings.file(), e.getMessage());
                }
            }
        }
    }

    private BufferedWriter openFile() throws IOException {
        return Files.newBufferedWriter(settings.file(), StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    }

    /** audit.jsonl → audit.jsonl.1 → ... → audit.jsonl.N, the oldest beyond N deleted. */
    private void rotate() throws IOException {
        Path file = settings.file();
        Files.deleteIfExists(older(file, settings.files()));
        for (int i = settings.files() - 1; i >= 1; i--) {
            Path from = older(file, i);
            if (Files.exists(from)) {
                Files.move(from, older(file, i + 1), StandardCopyOption.REPLACE_EXISTING);
            }
        }
        Files.move(file, older(file, 1), StandardCopyOption.REPLACE_EXISTING);
    }

    static Path older(Path file, int generation) {
        return file.resolveSibling(file.getFileName() + "." + generation);
    }

    /** Writes what was recorded and stops the writer. */
    @Override
    public void close() {
        if (writer == null || closed) {
            return;
        }
        closed = true;
        try {
            writer.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
