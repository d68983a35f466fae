package io.tenure.core.kernel;

/**
 * What one lease asks of a resource, or holds of it: a lock's holder with its metadata, later a
 * semaphore's permits, a read or write mode, a path or byte range. Always bound to a lease.
 */
public interface Claim {
    long leaseId();

    /**
     * What its {@link GrantQueue} knows it by: the lease, where a lease holds or waits at most
     * once per queue (a lock, a semaphore); a claim's own id where one lease may hold several
     * claims of one queue (lock scopes: several byte ranges of one file).
     */
    default long id() {
        return leaseId();
    }
}
