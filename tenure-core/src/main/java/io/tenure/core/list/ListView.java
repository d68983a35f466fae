package io.tenure.core.list;

import java.util.List;

/**
 * A list that exists (it has items or waiters): its length and who waits to pop, in arrival order.
 *
 * @param createRevision the revision at which it came into being (its first push or wait)
 * @param modRevision    the revision of its latest change
 */
public record ListView(String key, int length, List<Waiter> waiting, long createRevision, long modRevision) {

    /** A lease waiting to pop; {@code arrivedAt} is the log position of its pop. */
    public record Waiter(long leaseId, String clientId, long arrivedAt) {}
}
