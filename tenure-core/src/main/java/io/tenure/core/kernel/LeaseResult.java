package io.tenure.core.kernel;

import java.util.List;

/** The results of the lease commands. */
public sealed interface LeaseResult extends Result {

    record LeaseGranted(long leaseId, long ttlMillis) implements LeaseResult {}

    /** Per renewed id, its TTL in milliseconds, or 0 when the lease does not exist (any more). */
    record LeasesRenewed(long[] leaseIds, long[] ttlMillis) implements LeaseResult {}

    /** The lease ended; what it held was released (these names), the waits it had were withdrawn. */
    record LeaseEnded(long leaseId, EndReason reason, List<String> released) implements LeaseResult {}

    enum EndReason { REVOKED, EXPIRED }
}
