package io.tenure.bench.peers;

/**
 * A peer with a read/write lock recipe that W7 can load: every client takes the read or the
 * write lock of one shared name at a time, holds it for no time and releases it.
 *
 * <p>etcd has none: jetcd's concurrency package offers a lock and an election but no read/write
 * lock, so the etcd driver does not implement this and W7 is not run on etcd.
 */
public interface ReadWriteLockTarget {

    /**
     * The lock owner of benchmark client {@code client}; called once per client, on that client's
     * thread, before the warm-up. Owners are distinct even when they share one connection.
     */
    Owner readWrite(int client) throws Exception;

    /** The {@code recipe} printed with W7's figures, in place of the lock's. */
    String readWriteRecipe();

    /** One client's side of a read/write lock. Used by one thread only. */
    interface Owner extends AutoCloseable {

        /**
         * Its {@link PeerTarget.Locker#lock(String) lock(name)} blocks until this owner holds the
         * read lock of {@code name} (shared with other readers, never with a writer); the handle
         * it returns releases it.
         */
        PeerTarget.Locker reader();

        /**
         * Its {@link PeerTarget.Locker#lock(String) lock(name)} blocks until this owner holds the
         * write lock of {@code name} (shared with no one); the handle it returns releases it.
         */
        PeerTarget.Locker writer();

        @Override
        default void close() throws Exception {}
    }
}
