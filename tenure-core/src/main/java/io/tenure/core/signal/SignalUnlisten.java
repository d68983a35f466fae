package io.tenure.core.signal;

/** Removes listener {@code listenerId} of lease {@code leaseId}; a listener already gone (or never there) is no error. */
public record SignalUnlisten(long listenerId, long leaseId) implements SignalCommand {
}
