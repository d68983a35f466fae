package io.tenure.spike.engine;

import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.Command;
import io.tenure.server.raft.Entry;
import io.tenure.server.raft.EntryCodec;

import java.security.SecureRandom;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The coalescing of {@code io.tenure.server.raft.Proposer}, over either engine: every command that
 * arrives while {@value #MAX_IN_FLIGHT} entries are in flight goes into the next entry (up to
 * {@link Entry#MAX_COMMANDS} commands or {@value #MAX_ENTRY_BYTES} bytes), encoded with
 * {@link EntryCodec} under this process's incarnation. Its callers are answered slot by slot when
 * the leader applies the entry ({@link #callersOf}), as the product does.
 *
 * <p>Left out of the product's: the renewal lane, forwarding from a follower, snapshot installs.
 */
final class Proposer {
    /** As the product's: enough to overlap one entry's fsync with the next one's append. */
    static final int MAX_IN_FLIGHT = 4;
    static final int MAX_ENTRY_BYTES = 1 << 20;

    /** Where a command's outcome goes; {@link #applied} runs on the leader's apply thread, in log order. */
    interface Answer {
        void applied(Applied applied);

        void failed(Throwable error);
    }

    private record Pending(byte[] command, Answer answer) {}

    private final Engine engine;
    /** Random per run, as the product's: only entries of this proposer complete its callers. */
    private final long incarnation = new SecureRandom().nextLong();
    private final ConcurrentHashMap<Long, List<Pending>> inFlightBatches = new ConcurrentHashMap<>();
    private final Object lock = new Object();
    /** Guarded by lock, as are the counters below. */
    private final ArrayDeque<Pending> queue = new ArrayDeque<>();
    private int inFlight;
    private long nextBatch;
    private long commandsSubmitted;

    Proposer(Engine engine) {
        this.engine = engine;
    }

    void propose(Command command, Answer answer) {
        Pending pending = new Pending(EntryCodec.encode(command), answer);
        synchronized (lock) {
            queue.add(pending);
        }
        flush();
    }

    /** Entries and commands submitted so far, for commands per entry. */
    long[] submitted() {
        synchronized (lock) {
            return new long[] {nextBatch, commandsSubmitted};
        }
    }

    /** The answers of the entry's callers in slot order, or null for an entry this proposer did not submit. */
    List<Answer> callersOf(Entry entry) {
        if (entry.proposer() != incarnation) {
            return null;
        }
        List<Pending> batch = inFlightBatches.remove(entry.batch());
        return batch == null ? null : batch.stream().map(Pending::answer).toList();
    }

    private void flush() {
        while (true) {
            List<Pending> batch = new ArrayList<>();
            long seq;
            synchronized (lock) {
                if (inFlight >= MAX_IN_FLIGHT || queue.isEmpty()) {
                    return;
                }
                int bytes = 0;
                while (!queue.isEmpty() && batch.size() < Entry.MAX_COMMANDS
                        && (batch.isEmpty() || bytes + queue.peek().command.length <= MAX_ENTRY_BYTES)) {
                    Pending p = queue.poll();
                    bytes += p.command.length;
                    batch.add(p);
                }
                inFlight++;
                seq = nextBatch++;
                commandsSubmitted += batch.size();
            }
            submit(seq, batch);
        }
    }

    private void submit(long seq, List<Pending> batch) {
        inFlightBatches.put(seq, batch);
        CompletableFuture<Void> committed;
        try {
            committed = engine.submit(EntryCodec.encode(incarnation, seq, engine.term(), batch.stream().map(Pending::command).toList()));
        } catch (RuntimeException e) {
            committed = CompletableFuture.failedFuture(e);
        }
        committed.whenComplete((ok, error) -> {
            synchronized (lock) {
                inFlight--;
            }
            // Committed entries were answered when applied; what is left here was not committed.
            List<Pending> unapplied = inFlightBatches.remove(seq);
            if (unapplied != null) {
                Throwable failure = error != null ? error : new IllegalStateException("entry " + seq + " committed but not applied by the leader");
                unapplied.forEach(p -> p.answer.failed(failure));
            }
            flush();
        });
    }
}
