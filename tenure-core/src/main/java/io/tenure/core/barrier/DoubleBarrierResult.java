package io.tenure.core.barrier;

import io.tenure.core.kernel.Result;

/** What a double barrier command did. */
public sealed interface DoubleBarrierResult extends Result {

    /** The lease is inside: its generation of {@code parties} entered together at {@code revision} (the same for every party). */
    record Entered(String key, long leaseId, int parties, long revision) implements DoubleBarrierResult {}

    /**
     * The lease waits to enter, with {@code entering} leases waiting (itself included); {@code inside}
     * is the number of parties of a generation still inside (0 when none), whose leaving it waits for first.
     */
    record Entering(String key, long leaseId, int entering, int inside, int parties) implements DoubleBarrierResult {}

    /** The lease is not inside and does not wait to enter (an enter that does not wait, or a withdrawn wait); {@code entering} wait. */
    record NotEntered(String key, long leaseId, int entering, int parties) implements DoubleBarrierResult {}

    /**
     * Every party of the lease's generation has left, at {@code revision} (the same for every
     * party), and the generation is over; revision 0 when the lease was no party, with nothing to
     * wait for.
     */
    record Left(String key, long leaseId, int parties, long revision) implements DoubleBarrierResult {}

    /** The lease has left and waits for the {@code inside} parties still inside. */
    record Leaving(String key, long leaseId, int inside, int parties) implements DoubleBarrierResult {}

    /** The lease has left but does not wait (a leave that does not wait, or a withdrawn wait); {@code inside} are still inside. */
    record NotLeft(String key, long leaseId, int inside, int parties) implements DoubleBarrierResult {}
}
