package io.tenure.server.http;

/**
 * The {@code recommended_retry_ms} of a 409 {@code held} answer: when a try is next worth making.
 *
 * <p>The lock can become free no later than when its holder's lease runs out (if the holder
 * stops renewing), and every waiter ahead holds it in turn. The only duration the server knows
 * for a hold is a lease's TTL, which is what its client chose as "how long I may go silent", so:
 *
 * <pre>  hint = holder's remaining TTL + waiters × holder's granted TTL, within [MIN_MS, MAX_MS]</pre>
 *
 * It has no jitter: it is a deterministic function of the state, so equal callers get equal
 * hints; clients add their own jitter. A caller that wants the lock as soon as it is free should
 * acquire with {@code wait_ms} and take its place in the FIFO queue instead.
 */
final class RetryHint {
    /** The floor: the leader checks for expired leases every 50 ms, so sooner is pointless. */
    static final long MIN_MS = 50;
    /** The ceiling: look again at least once a minute, even behind a long queue of long leases. */
    static final long MAX_MS = 60_000;

    private RetryHint() {}

    static long recommend(long holderRemainingMs, int waiters, long typicalHoldMs) {
        // Each term is capped first, so the sum cannot overflow whatever the inputs.
        long remaining = Math.min(MAX_MS, Math.max(0, holderRemainingMs));
        long queue = Math.min(MAX_MS, Math.max(0, waiters)) * Math.min(MAX_MS, Math.max(0, typicalHoldMs));
        return Math.max(MIN_MS, Math.min(MAX_MS, remaining + queue));
    }
}
