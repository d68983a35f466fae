package io.tenure.core.kernel;

/**
 * Names one wait: lease {@code leaseId} waiting on resource {@code key} of the primitive named
 * {@code kind} ({@link Primitive#name()}). A wait is keyed by lease, not by call, so a client
 * that re-sends its request to another member finds the same wait.
 */
public record WaitKey(String kind, String key, long leaseId) {}
