package io.tenure.core.election;

/** The leader (lease, fencing token) announces a new value without a new election. */
public record ElectionProclaim(String key, long leaseId, long fencingToken, byte[] value) implements ElectionCommand {}
