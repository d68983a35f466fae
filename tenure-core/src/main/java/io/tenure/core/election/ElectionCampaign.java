package io.tenure.core.election;

/**
 * Stands a lease for leader of election {@code key} with {@code value} (what observers see while
 * it leads). With no leader it is elected at once; otherwise, with {@code queue}, it joins the
 * candidates in FIFO order, and without, it fails without a change. Campaigning again while
 * leading returns the same leadership (the value is changed by {@link ElectionProclaim}); while a
 * candidate, it keeps the place. {@code requestId} (0 = none) names one campaign of its client,
 * as {@link io.tenure.core.lock.LockAcquire#requestId()} does for a lock.
 */
public record ElectionCampaign(String key, long leaseId, byte[] value, boolean queue, long requestId) implements ElectionCommand {}
