package io.tenure.core.latch;

import io.tenure.core.kernel.Result;

/** What a latch command did. */
public sealed interface LatchResult extends Result {

    /**
     * A set-count: {@code set} when the latch did not exist and now has {@code count}; otherwise it
     * exists with {@code count}, unchanged.
     */
    record CountSet(String key, boolean set, int count, long revision) implements LatchResult {}

    /**
     * A count-down: the latch's count after it ({@code 0} when it reached zero, or did not exist).
     * {@code applied} is false when the latch did not exist, so nothing changed.
     */
    record CountedDown(String key, int count, boolean applied) implements LatchResult {}

    /**
     * The count is zero: the latch released its waiters at {@code revision} (the same for every
     * waiter), or, for an await of a latch that did not exist, the revision it was read at.
     */
    record Open(String key, long leaseId, long revision) implements LatchResult {}

    /** The lease waits at the latch, whose count is {@code count}. */
    record Waiting(String key, long leaseId, int count) implements LatchResult {}

    /** An await that does not wait found the count at {@code count}, above zero: nothing changed. */
    record NotYet(String key, int count) implements LatchResult {}

    /** The lease no longer waits at the latch (or did not); its count is {@code count}. */
    record Left(String key, long leaseId, int count) implements LatchResult {}
}
