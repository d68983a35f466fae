package io.tenure.it.safety;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.Map;

/** {@code nemesis.jsonl}: each fault's start and end, flushed per line, also echoed to the harness's output. */
final class NemesisLog implements AutoCloseable {
    private final Writer out;
    private final Map<Fault, Integer> started = new EnumMap<>(Fault.class);
    /** Faults started and not yet ended, and their targets. */
    private final Map<Fault, String> open = new EnumMap<>(Fault.class);

    NemesisLog(Path file) throws IOException {
        this.out = Files.newBufferedWriter(file, StandardCharsets.UTF_8);
    }

    /** Logs a start that happened at {@code atNanos}; returns it. */
    synchronized long start(Fault fault, String target, String detail, long atNanos) {
        started.merge(fault, 1, Integer::sum);
        open.put(fault, target);
        write(new NemesisEvent(atNanos, fault.name(), NemesisEvent.START, target, detail));
        return atNanos;
    }

    /** Logs an end that happened at {@code atNanos} (the heal), with what followed it in {@code detail}. */
    synchronized void end(Fault fault, String target, String detail, long atNanos) {
        open.remove(fault);
        write(new NemesisEvent(atNanos, fault.name(), NemesisEvent.END, target, detail));
    }

    /** Logs what a minority member answered while cut off (see {@link NemesisEvent#PROBE}). */
    synchronized void probe(Fault fault, String target, String detail, long atNanos) {
        write(new NemesisEvent(atNanos, fault.name(), NemesisEvent.PROBE, target, detail));
    }

    /** Ends {@code fault} if it started and did not end (a fault that failed half-way). */
    synchronized void endIfOpen(Fault fault, String detail, long atNanos) {
        String target = open.get(fault);
        if (target != null) {
            end(fault, target, detail, atNanos);
        }
    }

    synchronized Map<Fault, Integer> started() {
        return new EnumMap<>(started);
    }

    private void write(NemesisEvent event) {
        try {
            JsonLines.append(out, event);
            out.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        System.out.printf("nemesis %s %-5s %-6s %s%n", event.fault(), event.phase(), event.target(), event.detail());
    }

    @Override
    public synchronized void close() {
        try {
            out.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
