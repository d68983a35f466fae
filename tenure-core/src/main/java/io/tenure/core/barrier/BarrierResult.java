package io.tenure.core.barrier;

import io.tenure.core.kernel.Result;

/** What a barrier command did. */
public sealed interface BarrierResult extends Result {

    /** The barrier released its {@code parties} together at {@code revision} (the same for every party). */
    record Released(String key, long leaseId, int parties, long revision) implements BarrierResult {}

    /** The lease waits at the barrier with {@code arrived} of its {@code parties}. */
    record Waiting(String key, long leaseId, int arrived, int parties) implements BarrierResult {}

    /** An await that does not wait found {@code arrived} of {@code parties}, too few to release: nothing changed. */
    record NotYet(String key, int arrived, int parties) implements BarrierResult {}

    /** The lease left the barrier (or was not at it); {@code arrived} remain. */
    record Left(String key, long leaseId, int arrived, int parties) implements BarrierResult {}
}
