package io.tenure.core.signal;

/**
 * Registers listener {@code listenerId} (chosen by its client or by the member that received the
 * listen; never 0), bound to lease {@code leaseId}, for the signals of the channels that
 * {@code pattern} matches. With a {@code group} (empty = none) it is one of the group's members:
 * each signal goes to one member of a group, in turn. Listening again with the same id and lease
 * (after its client moved to another member) changes nothing but the pattern and group.
 */
public record SignalListen(long listenerId, long leaseId, String pattern, String group) implements SignalCommand {
    public SignalListen {
        group = group == null ? "" : group;
    }
}
