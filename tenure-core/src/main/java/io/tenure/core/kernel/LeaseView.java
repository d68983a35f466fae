package io.tenure.core.kernel;

import java.util.List;

/**
 * A lease as the replicated state knows it. It has no expiry instant: time is not replicated;
 * the leader expires a lease TTL after it applied {@code renewedAt} (see {@link io.tenure.core.lease.LeaseDeadlines}).
 *
 * @param grantedAt the log position of the grant
 * @param renewedAt the log position of the latest grant or renewal
 * @param held      what the lease holds, by name, sorted within each primitive, primitives in their order
 * @param waiting   what the lease waits for, likewise
 */
public record LeaseView(long leaseId, long ttlMillis, String clientId, long grantedAt, long renewedAt,
                        List<String> held, List<String> waiting) {}
