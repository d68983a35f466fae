package io.tenure.bench;

import io.tenure.client.TenureClient;
import io.tenure.client.TenureException;
import io.tenure.client.Watch;
import io.tenure.client.WatchEvent;
import io.tenure.client.WatchListener;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;

/**
 * W4: watchers on the prefix of W1's keys while W1 runs. Counts every event delivered to every
 * watcher, and for each PUT the delay from the moment the writer's acquire returned with that
 * revision (its fencing token) to the event's arrival; an event that arrives before the writer
 * heard of its grant counts as 0.
 */
final class Watches {
    static final String PREFIX = "bench/w4/";

    private Watches() {
    }

    static BenchResult run(Members members, BenchSettings s) throws Exception {
        Map<Long, Long> grantedAt = new ConcurrentHashMap<>();
        Histogram delay = new ConcurrentHistogram(60_000_000L, 3);
        LongAdder delivered = new LongAdder();
        AtomicReference<TenureException> watchFailure = new AtomicReference<>();
        // Written once by the writers' thread before any measured event; read by the gRPC threads.
        java.util.concurrent.atomic.AtomicLongArray bounds = new java.util.concurrent.atomic.AtomicLongArray(new long[] {Long.MAX_VALUE, Long.MAX_VALUE});
        WatchListener listener = new WatchListener() {
            @Override
            public void onEvent(WatchEvent event) {
                long now = System.nanoTime();
                if (now - bounds.get(0) < 0 || now - bounds.get(1) > 0) {
                    return;
                }
                delivered.increment();
                if (event.type() == WatchEvent.Type.PUT) {
                    Long at = grantedAt.get(event.revision());
                    Latencies.recordNanos(delay, at == null ? 0 : now - at);
                }
            }

            @Override
            public void onCompacted(long compactRevision) {
                watchFailure.compareAndSet(null, new TenureException("a watcher fell behind the compaction horizon " + compactRevision));
            }

            @Override
            public void onError(TenureException error) {
                watchFailure.compareAndSet(null, error);
            }
        };
        try (SdkClients sdks = new SdkClients(members, SdkClients.CLIENTS_PER_SDK * SdkClients.MAX_SDKS, "bench-w4-watch")) {
            List<Watch> watches = new ArrayList<>();
            for (int i = 0; i < s.watchers(); i++) {
                watches.add(sdks.get(i).watchPrefix(PREFIX, 0, listener));
            }
            for (Watch w : watches) {
                w.started().get(60, TimeUnit.SECONDS);
            }
            // Deliveries are counted over the writers' own measured window.
            BenchResult writers = Uncontended.run(members, s, PREFIX, new Uncontended.GrantListener() {
                @Override
                public void granted(String key, long revision, long completedNanos) {
                    grantedAt.put(revision, completedNanos);
                }

                @Override
                public void window(Window window) {
                    bounds.set(1, window.end);
                    bounds.set(0, window.start);
                }
            });
            watches.forEach(Watch::close);
            if (watchFailure.get() != null) {
                throw new IllegalStateException("a watch ended: " + watchFailure.get().getMessage(), watchFailure.get());
            }
            Map<String, Object> x = new LinkedHashMap<>(writers.extra());
            x.put("watchers", s.watchers());
            x.put("events_delivered", delivered.sum());
            x.put("events_per_sec", BenchResult.round(delivered.sum() / writers.seconds()));
            x.put("delivery_p50_ms", BenchResult.round(Latencies.ms(delay, 50)));
            x.put("delivery_p99_ms", BenchResult.round(Latencies.ms(delay, 99)));
            x.put("delivery_max_ms", BenchResult.round(Latencies.maxMs(delay)));
            return new BenchResult(s.label(), s.workload(), s.clients(), writers.seconds(), writers.ops(), writers.opsPerSec(),
                    writers.p50Ms(), writers.p99Ms(), writers.maxMs(), writers.overlaps(), x);
        }
    }
}
