package io.tenure.core.counter;

import io.tenure.core.kernel.Result;

/** What a counter command did. */
public sealed interface CounterResult extends Result {

    /**
     * The counter went from {@code previous} to {@code value} at {@code revision} (an add of 0, or
     * a set to the value it had, changes it too: its revision and version move, as etcd's put of
     * the same value does).
     */
    record Changed(String key, long previous, long value, long revision) implements CounterResult {}

    /** A compare-and-set whose counter was not the expected value: it is {@code value}, unchanged. */
    record CompareFailed(String key, long value) implements CounterResult {}
}
