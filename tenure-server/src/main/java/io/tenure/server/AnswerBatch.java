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
    private static final ThreadLocal<List<Runnable>> OPEN = new ThreadLocal<>();

    private AnswerBatch() {}

    /** Runs {@code answering}; the writes deferred meanwhile on this thread run after it, in order. */
    public static void run(Runnable answering) {
        if (OPEN.get() != null) {
            answering.run(); // nested: the outer batch writes
            return;
        }
        List<Runnable> writes = new ArrayList<>();
        OPEN.set(writes);
        try {
            answering.run();
        } finally {
            OPEN.remove();
            for (int i = 0; i < writes.size(); i++) { // a write may not defer another: the batch is closed
                writes.get(i).run();
            }
        }
    }

    /**
     * Defers {@code write} to the end of the batch open on this thread.
     *
     * @return false when no batch is open here: the caller writes now
     */
    public static boolean defer(Runnable write) {
        List<Runnable> open = OPEN.get();
        if (open == null) {
            return false;
        }
        open.add(write);
        return true;
    }
}
