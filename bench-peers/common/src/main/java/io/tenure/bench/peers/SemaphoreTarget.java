package io.tenure.bench.peers;

/**
 * A peer with a counting-semaphore recipe that W6 can load: every client takes one permit of one
 * semaphore at a time, holds it for no time and gives it back.
 *
 * <p>etcd has none: jetcd's concurrency package offers a lock and an election but no semaphore,
 * so the etcd driver does not implement this and W6 is not run on etcd.
 */
public interface SemaphoreTarget {

    /**
     * The permit owner of benchmark client {@code client}; called once per client, on that
     * client's thread, before the warm-up. Its {@link PeerTarget.Locker#lock(String) lock(name)}
     * blocks until this owner holds one permit of the semaphore {@code name} of {@code limit}
     * permits, and the handle it returns gives that permit back.
     */
    PeerTarget.Locker permits(int client, int limit) throws Exception;

    /** The {@code recipe} printed with W6's figures, in place of the lock's. */
    String semaphoreRecipe();
}
