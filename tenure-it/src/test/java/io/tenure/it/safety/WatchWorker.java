package io.tenure.it.safety;

import io.tenure.client.TenureException;
import io.tenure.client.Watch;
import io.tenure.client.WatchEvent;
import io.tenure.client.WatchListener;
import io.tenure.it.safety.Op.Kind;

/**
 * The watcher role: two watches of every key under {@value #PREFIX}, each event a WATCH op naming
 * its stream.
 * <ul>
 *   <li>{@code <name>/all}: from revision 1, for the whole run; member failures are the SDK's to
 *       survive (it reconnects from the revision after the last delivered);</li>
 *   <li>{@code <name>/resumed}: from the revision after one read with Status (a described
 *       revision), closed every 10-20 s and opened again from the revision after the last event
 *       delivered, under the same stream id: a resumed stream must also be gapless.</li>
 * </ul>
 * A watch that ends with {@code onCompacted} is recorded as a WATCH INFO (its error names the
 * horizon) and started again from the horizon as a new stream ({@code .../all-2}); one that ends
 * with {@code onError} is recorded likewise and resumed from the revision after its last event
 * under the same stream id.
 */
final class WatchWorker {
    static final String PREFIX = "safety/";

    private final WorkerContext ctx;

    WatchWorker(WorkerContext ctx) {
        this.ctx = ctx;
    }

    void run() {
        new Stream(ctx.name + "/all", 1, 1).open();
        long described = 0;
        while (described == 0 && ctx.running) {
            try {
                described = ctx.client.status().getRevision() + 1;
            } catch (RuntimeException noLeaderYet) {
                ctx.pace(200, 500);
            }
        }
        Stream resumed = new Stream(ctx.name + "/resumed", 1, described);
        resumed.open();
        while (ctx.running) {
            ctx.pace(10_000, 20_000); // how long the resumable stream stays open
            resumed.reopen();
        }
    }

    /** One logical stream: the same id across reopenings, whose events must be gapless and ordered. */
    private final class Stream implements WatchListener {
        private final String id;
        private final int generation;
        private final long from;
        private volatile long last;
        private Watch watch; // guarded by this

        Stream(String id, int generation, long from) {
            this.id = id;
            this.generation = generation;
            this.from = from;
        }

        /** Opens (again) from the revision after the last event delivered, or from the start. */
        synchronized void open() {
            if (ctx.running) {
                watch = ctx.client.watchPrefix(PREFIX, last > 0 ? last + 1 : from, this);
            }
        }

        synchronized void reopen() {
            if (watch != null) {
                watch.close();
            }
            open();
        }

        @Override
        public void onEvent(WatchEvent event) {
            last = event.revision();
            ctx.history.invoke(Kind.WATCH, event.key()).token(event.revision()).position(event.revision())
                    .value(event.type() == WatchEvent.Type.PUT ? 1 : 0).leaseId(event.leaseId()).stream(id).ok();
        }

        @Override
        public void onCompacted(long compactRevision) {
            ctx.history.invoke(Kind.WATCH, null).token(compactRevision).stream(id)
                    .info("compacted: the oldest revision retained is " + compactRevision);
            String base = id.replaceAll("-\\d+$", "");
            Stream next = new Stream(base + "-" + (generation + 1), generation + 1, compactRevision);
            new Thread(next::open, "watch-restart").start();
        }

        @Override
        public void onError(TenureException error) {
            ctx.history.invoke(Kind.WATCH, null).token(last).stream(id).info("ended: " + WorkerContext.describe(error));
            new Thread(() -> {
                ctx.pace(200, 500);
                open();
            }, "watch-resume").start();
        }
    }
}
