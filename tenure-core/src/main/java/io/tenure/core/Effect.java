package io.tenure.core;

import io.tenure.core.watch.WatchEvent;

/**
 * A consequence of a command for someone other than its proposer: a parked waiter to wake,
 * a wait to end, a watch event to deliver. The server acts on them after apply.
 */
public sealed interface Effect {

    /** A queued lease now holds the lock: exactly one waiter wakes per hand-off. */
    record WaiterGranted(String key, long leaseId, long fencingToken) implements Effect {}

    /** A lease's wait ended without a grant because the lease ended. */
    record WaitEnded(String key, long leaseId) implements Effect {}

    /** A change on a lock key, already appended to the event log. */
    record Watched(WatchEvent event) implements Effect {}
}
