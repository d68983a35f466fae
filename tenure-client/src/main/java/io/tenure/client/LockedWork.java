package io.tenure.client;

/**
 * Work done while holding a lock ({@link TenureClient#withLock}). It receives the handle, whose
 * {@link LockHandle#fencingToken()} must go with every write the lock protects, and is
 * interrupted when the lease is lost: code that blocks should respond to interruption, and code
 * that loops should check {@link LockHandle#isValid()} or {@link Thread#isInterrupted()}.
 */
@FunctionalInterface
public interface LockedWork<T> {
    T run(LockHandle lock) throws Exception;
}
