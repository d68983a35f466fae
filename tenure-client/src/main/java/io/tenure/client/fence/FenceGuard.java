package io.tenure.client.fence;

/**
 * The storage side of fencing: a guarded resource accepts a write only if the holder's fencing
 * token is not older than the newest token it has already accepted for that resource.
 *
 * <p>Why: a lock holder can pause (GC, SIGSTOP, a swapped-out VM) past the end of its lease, and
 * the lock passes to another holder while it sleeps. No check made by the paused holder can
 * notice in time; only the resource can, because every grant of a lock carries a token
 * ({@link io.tenure.client.LockHandle#fencingToken()}) that strictly increases across grants of
 * that lock:
 *
 * <pre>
 *  T1  A acquires "invoices", token 458752      T4  B acquires, token 524288
 *  T2  A pauses                                 T5  B writes with 524288: accepted
 *  T3  A's lease expires                        T6  A wakes, writes with 458752: REFUSED
 * </pre>
 *
 * <p>A guard keeps, per resource, the highest token it has accepted ({@code 0} before the first).
 * In the default {@link Mode#AT_LEAST} a holder may write many times under one grant (an equal
 * token is accepted); {@link Mode#STRICTLY_GREATER} accepts each token once, so a replayed write
 * is refused as well. The resource is whatever the writes protect (a table, a file, an account),
 * usually named like the lock; tokens of one lock are comparable, tokens of different locks are
 * not, so guard one resource with one lock.
 *
 * <pre>{@code
 * // in the store, for each write a holder sends with its lock's token:
 * synchronized (invoices) {                       // one step: no other write between check and put
 *     guard.check("invoices", fencingToken);       // StaleTokenException once the lock has moved on
 *     invoices.put(invoice.id(), invoice);
 * }
 * }</pre>
 *
 * <p>A check alone only says that the token was current <em>at the check</em>: a holder that
 * pauses between the check and its write is exactly the case fencing exists for. The check and
 * the write must therefore be one atomic step: {@link InMemoryFenceGuard#write} runs the write
 * inside the check, and {@link JdbcFenceGuard} checks inside the caller's database transaction,
 * whose row lock holds off every other token until the write commits ({@link
 * JdbcFenceGuard#within} gives that transaction's guard as a {@code FenceGuard}).
 *
 * <p>Arguments are validated before anything is read or stored: a null or blank resource, or a
 * token that is not positive, throws {@link IllegalArgumentException} naming the argument.
 *
 * <p>Writes to parts of files under lock scopes (byte ranges, inodes, paths, granted as a set
 * with one token) are fenced by region instead, with {@link ScopeFenceGuard}; the package
 * comment shows byte-range writes fenced that way.
 */
public interface FenceGuard {

    /**
     * Accepts {@code token} for {@code resource}, making it the highest accepted.
     *
     * @throws StaleTokenException      if the mode does not admit the token: it names the resource,
     *                                  the token and the highest accepted one; nothing changes
     * @throws IllegalArgumentException if {@code resource} is null or blank, or {@code token <= 0}
     */
    void check(String resource, long token);

    /**
     * Like {@link #check}, but answers {@code false} instead of throwing when the token is stale.
     *
     * @throws IllegalArgumentException if {@code resource} is null or blank, or {@code token <= 0}
     */
    boolean tryAccept(String resource, long token);

    /**
     * The highest token accepted for {@code resource}, or {@code 0} if none was.
     *
     * @throws IllegalArgumentException if {@code resource} is null or blank
     */
    long highestAccepted(String resource);

    /** Which tokens a guard accepts, relative to the highest it has accepted for the resource. */
    enum Mode {
        /**
         * A token equal to or above the highest accepted: the holder of one grant may write many
         * times. The default.
         */
        AT_LEAST,
        /**
         * Only a token above the highest accepted: each token is accepted once, so a retried or
         * replayed write under the same grant is refused too. Each write then needs a fresh grant.
         */
        STRICTLY_GREATER;

        boolean admits(long token, long highestAccepted) {
            return this == AT_LEAST ? token >= highestAccepted : token > highestAccepted;
        }
    }
}
