package io.tenure.core.kernel;

/**
 * What one lease asks of a resource, or holds of it: a lock's holder with its metadata, later a
 * semaphore's permits, a read or write mode, a path or byte range. Always bound to a lease.
 */
public interface Claim {
    long leaseId();
}
