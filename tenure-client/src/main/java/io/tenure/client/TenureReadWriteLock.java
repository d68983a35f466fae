package io.tenure.client;

import java.util.concurrent.CompletableFuture;

/**
 * A read/write lock, as {@link TenureClient#readWriteLock(String)} hands it out: one lock name
 * held either by one writer or by any number of readers. Its {@link #readLock()} and
 * {@link #writeLock()} are {@link TenureLock}s with every acquire form a lock has (blocking,
 * {@code ...Async}, try, two-phase, with retries), each grant with its own fencing token.
 *
 * <pre>{@code
 * TenureReadWriteLock catalog = client.readWriteLock("catalog");
 * try (LockHandle reading = catalog.readLock().acquire(Duration.ofSeconds(5))) {
 *     serve(catalog.read(), reading.fencingToken());
 * }
 * try (LockHandle writing = catalog.writeLock().acquire(Duration.ofSeconds(30))) {
 *     rebuild(writing.fencingToken());
 *     writing.downgrade();             // keep reading what was written, let other readers in
 *     verify();
 * }
 * }</pre>
 *
 * <p>Fair: waiters are granted in the order they joined. A queued writer holds back the readers
 * that come after it (no writer starvation); when a writer releases, the readers queued right
 * behind it are granted together. A writer's token is above every token granted before it on
 * this lock, so a fenced resource that has seen a reader's token still accepts the next writer's.
 * A lease that holds the read lock and asks for the write lock is refused
 * ({@link FailedPreconditionException}): release the read lock first.
 *
 * <p>The lock shares its name with plain locks: {@code client.lock(name)} is this lock's write
 * lock. Immutable and thread-safe.
 */
public final class TenureReadWriteLock {
    private final TenureLock read;
    private final TenureLock write;

    TenureReadWriteLock(TenureLock read, TenureLock write) {
        this.read = read;
        this.write = write;
    }

    /** The lock's name. */
    public String name() {
        return write.name();
    }

    /** The read (shared) side: granted beside other readers, never beside a writer. */
    public TenureLock readLock() {
        return read;
    }

    /** The write (exclusive) side: granted alone. */
    public TenureLock writeLock() {
        return write;
    }

    /** Who holds the lock, in which mode, and who waits, read linearizably. */
    public LockDescription describe() {
        return write.describe();
    }

    /** The asynchronous form of {@link #describe()}. */
    public CompletableFuture<LockDescription> describeAsync() {
        return write.describeAsync();
    }

    @Override
    public String toString() {
        return "TenureReadWriteLock{name='" + name() + "'}";
    }
}
