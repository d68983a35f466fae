package io.tenure.core.signal;

/**
 * Registers listener {@code listenerId} (chosen by the member that received the listen, never
 * 0), bound to lease {@code leaseId}, for the signals of the channels that {@code pattern}
 * matches. With a {@code group} (empty = none) it is one of the group's members: each signal goes
 * to one member of a group, in turn. {@code replaces} (0 = none) is the listener this one takes
 * over from, when its client moved to another member: that one goes, if it is still there and
 * the lease's, after this one is registered (so a group keeps its turn).
 */
public record SignalListen(long listenerId, long leaseId, String pattern, String group, long replaces) implements SignalCommand {
    public SignalListen {
        group = group == null ? "" : group;
    }
}
