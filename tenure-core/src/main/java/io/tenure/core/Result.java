package io.tenure.core;

import java.util.List;

/** What a command did, for the caller that proposed it. Rejections are results, never exceptions. */
public sealed interface Result {

    /** The lock is held by the lease with this fencing token; {@code again} when it already held it. */
    record Granted(String key, long leaseId, long fencingToken, boolean again) implements Result {}

    /** The lease waits for the lock; {@code joinedAt} orders the queue, {@code ahead} waiters are before it. */
    record Queued(String key, long leaseId, long joinedAt, int ahead, String holder) implements Result {}

    /** A try-lock found the lock held by another lease. */
    record Busy(String key, String holder, long holderLeaseId, int waiters) implements Result {}

    /** The lock was released; {@code nextFencingToken} is the next holder's token, 0 when none waited. */
    record Released(String key, long nextFencingToken) implements Result {}

    /** The wait was withdrawn (or there was none). */
    record Cancelled(String key, long leaseId) implements Result {}

    record LeaseGranted(long leaseId, long ttlMillis) implements Result {}

    /** A member's client endpoint was recorded. */
    record EndpointRecorded(String member, String clientEndpoint) implements Result {}

    /** Per renewed id, its TTL in milliseconds, or 0 when the lease does not exist (any more). */
    record LeasesRenewed(long[] leaseIds, long[] ttlMillis) implements Result {}

    /** The lease ended; the keys it held were released, the waits it had were withdrawn. */
    record LeaseEnded(long leaseId, EndReason reason, List<String> released) implements Result {}

    /** A conditional command whose condition no longer held; nothing changed. */
    record Skipped(String why) implements Result {}

    record Rejected(Code code, String message) implements Result {}

    enum EndReason { REVOKED, EXPIRED }

    /** Why a command was refused. The front ends map each to one status code. */
    enum Code {
        /** The command is malformed (name, size, TTL). */
        INVALID_ARGUMENT,
        /** The lease does not exist: never granted, expired or revoked. */
        NOT_FOUND,
        /** The lease exists but does not hold the lock with that token. */
        FAILED_PRECONDITION,
        /** A lease id is taken by a lease of another client or TTL. */
        ALREADY_EXISTS
    }
}
