package io.tenure.client;

import java.time.Duration;
import java.util.AbstractQueue;
import java.util.Collection;
import java.util.Iterator;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/** {@link TenureQueue#asBlockingQueue()}: a replicated list seen as a JDK {@link BlockingQueue}; see there for the differences. */
final class QueueView extends AbstractQueue<byte[]> implements BlockingQueue<byte[]> {
    private final TenureQueue queue;

    QueueView(TenureQueue queue) {
        this.queue = queue;
    }

    @Override
    public boolean offer(byte[] value) {
        Objects.requireNonNull(value, "value");
        try {
            queue.offer(value);
            return true;
        } catch (FailedPreconditionException full) {
            return false;
        }
    }

    @Override
    public void put(byte[] value) {
        add(value);
    }

    @Override
    public boolean offer(byte[] value, long timeout, TimeUnit unit) {
        return offer(value);
    }

    @Override
    public byte[] poll() {
        return queue.poll().orElse(null);
    }

    @Override
    public byte[] take() throws InterruptedException {
        return interruptibly(queue.takeAsync());
    }

    @Override
    public byte[] poll(long timeout, TimeUnit unit) throws InterruptedException {
        return interruptibly(queue.pollAsync(true, Duration.ofNanos(Math.max(0, unit.toNanos(timeout))))).orElse(null);
    }

    /** Waits for {@code pending}; an interrupt cancels it (which withdraws the wait) and is rethrown. */
    private static <T> T interruptibly(CompletableFuture<T> pending) throws InterruptedException {
        try {
            return pending.get();
        } catch (InterruptedException e) {
            pending.cancel(true);
            throw e;
        } catch (ExecutionException e) {
            throw e.getCause() instanceof RuntimeException r ? r : new TenureException(e.getCause().getMessage(), e.getCause());
        }
    }

    @Override
    public byte[] peek() {
        return queue.range(0, 0).values().stream().findFirst().orElse(null);
    }

    @Override
    public int size() {
        return queue.size();
    }

    @Override
    public int remainingCapacity() {
        return Math.max(0, TenureQueue.MAX_LENGTH - size());
    }

    /** Over a copy of the items read at once; its {@code remove} is not supported. */
    @Override
    public Iterator<byte[]> iterator() {
        return java.util.Collections.unmodifiableList(queue.range(0, -1).values()).iterator();
    }

    @Override
    public int drainTo(Collection<? super byte[]> into) {
        return drainTo(into, Integer.MAX_VALUE);
    }

    @Override
    public int drainTo(Collection<? super byte[]> into, int most) {
        if (into == this) {
            throw new IllegalArgumentException("cannot drain a queue into itself");
        }
        int n = 0;
        while (n < most) {
            Optional<byte[]> item = queue.poll();
            if (item.isEmpty()) {
                break;
            }
            into.add(item.get());
            n++;
        }
        return n;
    }

    @Override
    public boolean remove(Object o) {
        throw new UnsupportedOperationException("a replicated list takes items from its ends only");
    }

    @Override
    public boolean contains(Object o) {
        throw new UnsupportedOperationException("compare byte arrays from iterator() instead: arrays have no value equality");
    }

    @Override
    public String toString() {
        return "BlockingQueue view of " + queue;
    }
}
