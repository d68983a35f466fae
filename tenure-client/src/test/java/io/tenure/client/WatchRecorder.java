package io.tenure.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/** A {@link WatchListener} that records every call, in order, and notices overlapping calls. */
final class WatchRecorder implements WatchListener {
    /** A recorded {@link #onCompacted} call. */
    record Compacted(long compactRevision) {}

    private final BlockingQueue<Object> calls = new LinkedBlockingQueue<>();
    private final AtomicInteger running = new AtomicInteger();
    final AtomicBoolean overlapped = new AtomicBoolean();
    /** When set, onEvent records the event and then throws. */
    volatile boolean throwOnEvent;

    @Override
    public void onEvent(WatchEvent event) {
        record(event);
        if (throwOnEvent) {
            throw new IllegalStateException("a listener bug");
        }
    }

    @Override
    public void onCompacted(long compactRevision) {
        record(new Compacted(compactRevision));
    }

    @Override
    public void onError(TenureException error) {
        record(error);
    }

    private void record(Object call) {
        if (running.incrementAndGet() > 1) {
            overlapped.set(true);
        }
        calls.add(call);
        running.decrementAndGet();
    }

    /** The next call, which must be an event, waiting a little for it. */
    WatchEvent nextEvent() throws InterruptedException {
        return next(WatchEvent.class);
    }

    /** The revisions of the next {@code count} calls, which must be events. */
    List<Long> nextRevisions(int count) throws InterruptedException {
        List<Long> revisions = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            revisions.add(nextEvent().revision());
        }
        return revisions;
    }

    long nextCompaction() throws InterruptedException {
        return next(Compacted.class).compactRevision();
    }

    TenureException nextError() throws InterruptedException {
        return next(TenureException.class);
    }

    /** Nothing was called beyond what the test took. */
    void assertNoMoreCalls() {
        assertThat(calls).as("listener calls not expected by the test").isEmpty();
        assertThat(overlapped).as("listener calls overlapped").isFalse();
    }

    private <T> T next(Class<T> kind) throws InterruptedException {
        Object call = calls.poll(5, TimeUnit.SECONDS);
        assertThat(call).as("the next listener call").isNotNull().isInstanceOf(kind);
        return kind.cast(call);
    }
}
