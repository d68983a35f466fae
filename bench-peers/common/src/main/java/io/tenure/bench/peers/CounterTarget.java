package io.tenure.bench.peers;

/**
 * A peer with a counter that W8 can load: every client increments one counter in a loop, each
 * increment answered with the value it produced.
 */
public interface CounterTarget {

    /** Sets counter {@code name} to 0 (before the clients start). */
    void resetCounter(String name) throws Exception;

    /** The incrementer of benchmark client {@code client}; called once per client, on that client's thread, before the warm-up. */
    Incrementer incrementer(int client, String name) throws Exception;

    /** The counter's value now. */
    long counterValue(String name) throws Exception;

    /** The {@code recipe} printed with W8's figures: which call increments, and how contention is handled. */
    String counterRecipe();

    /** One client's increments. Used by one thread only. */
    interface Incrementer {
        /** Adds one and returns the value after it. */
        long increment() throws Exception;

        /** Attempts made so far, retries of a lost optimistic race included (= increments when the peer has no races). */
        default long attempts() {
            return 0;
        }
    }
}
