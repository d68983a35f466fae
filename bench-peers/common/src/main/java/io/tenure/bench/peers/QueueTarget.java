package io.tenure.bench.peers;

/**
 * A peer with a queue that W10 can load: producers offer items at its tail, consumers wait for
 * items at its head, every item to exactly one consumer.
 */
public interface QueueTarget {

    /** Empties queue {@code name} (before the clients start). */
    void resetQueue(String name) throws Exception;

    /** The producer of benchmark producer {@code client}; called once, on its thread, before the warm-up. */
    Producer producer(int client, String name) throws Exception;

    /** The consumer of benchmark consumer {@code client}; called once, on its thread, before the warm-up. */
    Consumer consumer(int client, String name) throws Exception;

    /** The {@code recipe} printed with W10's figures: which calls offer and take, and how a consumer waits. */
    String queueRecipe();

    /** One producer's offers. Used by one thread only. */
    interface Producer {
        /** Adds {@code item} at the tail; returns once the peer acknowledged it. */
        void offer(byte[] item) throws Exception;
    }

    /** One consumer's takes. Used by one thread only. */
    interface Consumer extends AutoCloseable {
        /** The head item, waiting up to {@code timeoutMs} for one; null when none came. */
        byte[] poll(long timeoutMs) throws Exception;

        @Override
        default void close() throws Exception {
        }
    }
}
