package io.tenure.core.barrier;

/**
 * A lease leaves double barrier {@code key}: a party inside leaves and, with {@code queue}, waits
 * until every party has left; without, it does not wait (or stops waiting, when it waited
 * already: the withdrawal of a leave that timed out). A lease still waiting to enter withdraws
 * its entry; a lease that is no party has nothing to wait for.
 */
public record DoubleBarrierLeave(String key, long leaseId, boolean queue) implements DoubleBarrierCommand {}
