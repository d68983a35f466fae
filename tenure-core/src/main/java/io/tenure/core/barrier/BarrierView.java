package io.tenure.core.barrier;

import java.util.List;

/**
 * A barrier some parties wait at: how many it releases together, and who waits, in arrival order.
 *
 * @param createRevision the revision of its first arrival
 */
public record BarrierView(String key, int parties, List<Party> waiting, long createRevision) {

    /** A lease waiting at the barrier; {@code arrivedAt} is the log position of its await. */
    public record Party(long leaseId, String clientId, long arrivedAt) {}
}
