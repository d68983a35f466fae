package io.tenure.client.fence;

import io.tenure.client.Scope;

/**
 * The storage side of fencing for lock scopes: a guarded store of files accepts a write to a
 * region (a byte range of an inode, a whole inode, a path) only if the region lies inside the
 * scopes the writer's token was granted for, and no overlapping region has accepted a newer token.
 *
 * <p>A lease holds a set of scopes, and one grant of a set carries one fencing token, above every
 * token granted before it for any scope. The writer shows the token with its scopes
 * ({@link ScopedToken}) and names the region each write touches:
 *
 * <pre>
 *  T1  A is granted {range 42:0-200}, token 40     T4  B is granted {range 42:100-300}, token 50
 *  T2  A writes 42:0-200 with 40: accepted         T5  B writes 42:100-300 with 50: accepted
 *  T3  A pauses; its lease expires                 T6  A wakes, writes 42:150-200 with 40: REFUSED (stale)
 *                                                  T7  A writes 42:0-100 with 40: accepted (B never wrote there)
 *                                                  T8  B writes 42:0-50 with 50: REFUSED (not its scope)
 * </pre>
 *
 * <p>A write is refused
 * <ul>
 *   <li>with {@link LockScopeMismatchException} when its region is not {@linkplain
 *       ScopedToken#covers covered} by the token's scopes, whatever the token;</li>
 *   <li>with {@link StaleTokenException} when a region overlapping it accepted a higher token
 *       (in {@link FenceGuard.Mode#STRICTLY_GREATER} also an equal one): for byte ranges exactly
 *       where they overlap (writes to disjoint ranges never refuse each other; an inode overlaps
 *       all its ranges), for paths when the path, an ancestor or a descendant did (not a
 *       sibling).</li>
 * </ul>
 * The check comes first and nothing is accepted on a refusal. Byte ranges and inodes are one
 * namespace, paths another: a path and an inode never overlap, even for the same file.
 *
 * <p>As with {@link FenceGuard}, a check fences only its own instant: the check and the write must
 * be one atomic step, {@link InMemoryScopeFenceGuard#write} in memory and the caller's transaction
 * with {@link JdbcScopeFenceGuard}.
 *
 * <p>Arguments are validated before anything is read or stored: a null token or region, or a named
 * region, throws {@link IllegalArgumentException} naming the argument ({@link ScopedToken} itself
 * refuses a token {@code <= 0} and empty scopes).
 */
public interface ScopeFenceGuard {

    /**
     * Accepts {@code token} for {@code region}: it becomes the highest accepted for every byte (or
     * the path) of the region.
     *
     * @throws LockScopeMismatchException if {@code region} is not covered by the token's scopes
     * @throws StaleTokenException        if an overlapping region accepted a token the mode does not
     *                                    admit this one after; it names the region, the token and
     *                                    the highest such token
     * @throws IllegalArgumentException   if {@code token} or {@code region} is null, or the region is named
     */
    void check(ScopedToken token, Scope region);

    /**
     * Like {@link #check}, but answers {@code false} instead of throwing when the token is stale.
     * A region outside the token's scopes still throws: that is the writer's bug, not a lost race.
     *
     * @throws LockScopeMismatchException if {@code region} is not covered by the token's scopes
     * @throws IllegalArgumentException   if {@code token} or {@code region} is null, or the region is named
     */
    boolean tryAccept(ScopedToken token, Scope region);

    /**
     * The highest token accepted for any region overlapping {@code region}, or {@code 0} if none was.
     *
     * @throws IllegalArgumentException if {@code region} is null or named
     */
    long highestAccepted(Scope region);
}
