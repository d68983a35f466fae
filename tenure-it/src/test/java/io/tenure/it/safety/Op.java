package io.tenure.it.safety;

/**
 * One operation of a safety run, as a client process records it: one JSON object per line in its
 * history file, written when the operation completes (or, for one still open when the process
 * ends, as {@link Outcome#INFO} at the end). Times are {@link System#nanoTime()} readings, which on
 * Linux is CLOCK_MONOTONIC, one clock shared by every process on the machine, so histories of
 * several processes can be merged and ordered.
 *
 * @param id            unique within the run (the process's number in the high bits)
 * @param process       the client process's name, e.g. {@code c3}
 * @param kind          what was done
 * @param key           the lock, semaphore or election, and the fenced resource it protects; RANGE_*: the byte range
 *                      ({@code inode:start-end}); null for lease operations
 * @param leaseId       the lease used or granted; 0 when none
 * @param token         ACQUIRE, SEM_ACQUIRE, CAMPAIGN: the fencing token granted; RELEASE, WRITE, SEM_WRITE,
 *                      SEM_RELEASE, LEAD_WRITE, PROCLAIM, RESIGN: the token used; WATCH: the event's revision
 * @param value         INCR: the counter's value answered; READ: the value read; WRITE: the value written; WATCH: 1 for PUT, 0 for DELETE;
 *                      SEM_ACQUIRE, SEM_WRITE, SEM_RELEASE: the grant's permits
 * @param ttlMillis     GRANT, KEEPALIVE: the TTL the server acknowledged
 * @param invokeNanos   when the operation was invoked
 * @param completeNanos when its outcome was known (for INFO: when the process gave up on it)
 * @param outcome       OK, FAIL (definitely did not happen), INFO (may or may not have happened)
 * @param position      the log position the answer named (a grant's token, a proclaim's revision, a header revision); 0 when none
 * @param error         the failure's text, or null
 * @param member        the endpoint that answered, or null
 * @param stream        WATCH: which watch stream delivered it (its events must be gapless and ordered); else null
 */
public record Op(long id, String process, Kind kind, String key, long leaseId, long token, long value, long ttlMillis,
                 long invokeNanos, long completeNanos, Outcome outcome, long position, String error, String member,
                 String stream) {

    public enum Kind {
        /** A lease was granted ({@code leaseId}, {@code ttlMillis}). */
        GRANT,
        /** A keep-alive of {@code leaseId} sent at {@code invokeNanos} was acknowledged at {@code completeNanos}. */
        KEEPALIVE,
        /** The client declared {@code leaseId} lost at {@code completeNanos} (its SDK's safe deadline). */
        LEASE_LOST,
        /** A lock was acquired: {@code token} is the grant's fencing token. */
        ACQUIRE,
        /** A lock was released with {@code token}. */
        RELEASE,
        /** A lease was revoked. */
        REVOKE,
        /** The fenced resource of {@code key} was read under the lock: {@code value}. */
        READ,
        /** The fenced resource of {@code key} was written with {@code token}: {@code value}; FAIL when refused as stale. */
        WRITE,
        /** A watch event delivered on {@code stream}: revision {@code token}, PUT (1) or DELETE (0), holder lease {@code leaseId}. */
        WATCH,
        /** {@code value} permits of semaphore {@code key} were acquired: {@code token} is the grant's fencing token. */
        SEM_ACQUIRE,
        /**
         * The fenced resource of semaphore {@code key} was written under the grant with {@code token}
         * and {@code value} permits; FAIL when the resource refused it ({@link PermitFence}).
         */
        SEM_WRITE,
        /** The grant of semaphore {@code key} with {@code token} ({@code value} permits) was released. */
        SEM_RELEASE,
        /** Election {@code key} was won: {@code token} is the leadership's fencing token. */
        CAMPAIGN,
        /**
         * The fenced resource of election {@code key} was written by its leader with {@code token}; FAIL
         * when the resource refused it (a newer leader had written, or this leadership's holding ended).
         */
        LEAD_WRITE,
        /** The leader of election {@code key} with {@code token} proclaimed a new value; {@code position} is its revision. */
        PROCLAIM,
        /** The leadership of election {@code key} with {@code token} was resigned. */
        RESIGN,
        /** Counter {@code key} was incremented by one: {@code value} is the value answered (OK only). */
        INCR,
        /** Key {@code key} was read: {@code value} its value (a number unique to the write that made it; 0: absent), {@code token} its mod revision. */
        KV_READ,
        /**
         * Key {@code key} was compare-and-set to {@code value} (unique to this op) if its mod revision was {@code token}
         * (0: if absent). OK: set, {@code position} the put's revision (0 when the answer does not say); FAIL: not
         * set, {@code position} the key's mod revision then (0 when unknown); INFO: unknown.
         */
        KV_CAS,
        /**
         * Byte ranges of the run's inode were acquired as lock scopes ({@link RangeWorker}): {@code key} the range
         * ({@code 7:0-8192}), {@code value} 1 for exclusive and 0 for shared, {@code token} the grant's fencing token.
         */
        RANGE_ACQUIRE,
        /**
         * The fenced resource's inode was written under the grant with {@code token}: {@code key} the region written
         * ({@code 7:4096-8192}, inside the grant's range), {@code value} its mode as for RANGE_ACQUIRE; FAIL when the
         * resource refused it ({@link RangeHoldings}).
         */
        RANGE_WRITE,
        /** The grant of the range {@code key} with {@code token} ({@code value} its mode) was released. */
        RANGE_RELEASE
    }

    public enum Outcome { OK, FAIL, INFO }
}
