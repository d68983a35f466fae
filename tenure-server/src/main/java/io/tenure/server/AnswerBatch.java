package io.tenure.server;

import java.util.ArrayList;
import java.util.List;

/**
 * The answers of one applied log entry, sent together. While a member answers the commands of an
 * entry (and wakes the calls they granted), a front end that carries many calls on one stream
 * defers its write to the end of the entry, so that one message carries every answer the entry
 * gave that stream, instead of one message each.
 */
public final class AnswerBatch {
    /** The batch of each thread, reused: the apply thread opens one per entry. */
    private static final ThreadLocal<AnswerBatch> OF_THREAD = ThreadLocal.withInitial(AnswerBatch::new);

    private final List<Runnable> writes = new ArrayList<>();
    private boolean open;

    private AnswerBatch() {}

    /** Runs {@code answering}; the writes deferred meanwhile on this thread run after it, in order. */
    public static void run(Runnable answering) {
        AnswerBatch batch = OF_THREAD.get();
        if (batch.open) {
            answering.run(); // nested: the outer batch writes
            return;
        }
        batch.open = true;
        try {
            answering.run();
        } finally {
            batch.open = false; // a write may not defer another: the batch is closed
            try {
                for (int i = 0; i < batch.writes.size(); i++) {
                    batch.writes.get(i).run();
                }
            } finally {
                batch.writes.clear();
            }
        }
    }

    /**
     * Defers {@code write} to the end of the batch open on this thread.
     *
     * @return false when no batch is open here: the caller writes now
     */
    public static boolean defer(Runnable write) {
        AnswerBatch batch = OF_THREAD.get();
        if (!batch.open) {
            return false;
        }
        batch.writes.add(write);
        return true;
    }
}
