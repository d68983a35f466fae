package io.tenure.core.kernel;

/** Ends a lease at its holder's request: what it holds passes to the next waiters, its waits end. */
public record LeaseRevoke(long leaseId) implements LeaseCommand {}
