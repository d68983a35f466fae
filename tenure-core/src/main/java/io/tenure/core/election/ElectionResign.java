package io.tenure.core.election;

/** The leader (lease, fencing token) steps down: the next candidate leads, or there is no leader. */
public record ElectionResign(String key, long leaseId, long fencingToken) implements ElectionCommand {}
