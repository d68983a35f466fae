package io.tenure.client.fence;

import io.tenure.client.Scope;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;

/**
 * A fencing token together with the scopes of the grant that carries it: what a writer of
 * inodes, paths or byte ranges shows a {@link ScopeFenceGuard}, so that the guard refuses a write
 * outside those scopes ({@link LockScopeMismatchException}) as well as one with an older token
 * ({@link StaleTokenException}).
 *
 * <p>One grant of a set of scopes carries one token, above every token the cluster granted
 * before it, for every scope; so tokens of any two grants compare, whatever they hold.
 *
 * <p>A region is {@linkplain #covers covered} when every part of it is held:
 * <ul>
 *   <li>a byte range, when each of its bytes lies in a held range of its inode or the inode is
 *       held whole (adjacent held ranges together cover a write across their boundary);</li>
 *   <li>an inode, only when it is held whole (its ranges, even all of them, are not the inode);</li>
 *   <li>a path, when it or one of its ancestors is held ({@code /a} covers {@code /a/b}, not
 *       {@code /ab} nor {@code /b});</li>
 *   <li>a name, when it is held (though a named lock's writes are fenced per resource, with
 *       {@link FenceGuard}: a {@link ScopeFenceGuard} takes no named region).</li>
 * </ul>
 *
 * <p>Give the scopes the grant holds {@linkplain io.tenure.client.ScopeMode#EXCLUSIVE
 * exclusively}, which are the ones it may write: a scope held shared is held by other grants too,
 * and fencing orders their writes by token but cannot keep them apart. A grant of shared scopes
 * only has none to give, and every write under it is refused as a mismatch.
 *
 * @param token  the grant's fencing token, positive
 * @param scopes the scopes the grant holds for writing, possibly none; kept as an unmodifiable copy
 */
public record ScopedToken(long token, List<Scope> scopes) {

    /** @throws IllegalArgumentException if {@code token <= 0}, or {@code scopes} is null or holds null */
    public ScopedToken {
        FenceArguments.requireToken(token);
        if (scopes == null || scopes.stream().anyMatch(Objects::isNull)) { // not contains(null): List.of throws on it
            throw new IllegalArgumentException("scopes must not be null nor hold null, got " + scopes);
        }
        scopes = List.copyOf(scopes);
    }

    /** The token of a grant of {@code scopes}. */
    public static ScopedToken of(long token, Scope... scopes) {
        return new ScopedToken(token, scopes == null ? null : Arrays.asList(scopes));
    }

    /**
     * Whether a write to {@code region} lies inside this token's scopes (see the class comment).
     *
     * @throws IllegalArgumentException if {@code region} is null
     */
    public boolean covers(Scope region) {
        if (region == null) {
            throw new IllegalArgumentException("region must not be null");
        }
        if (region instanceof Scope.ByteRange range) {
            return coversRange(range);
        }
        if (region instanceof Scope.Path path) {
            return scopes.stream().anyMatch(s -> s instanceof Scope.Path held && PathFence.isAncestorOrSelf(held.path(), path.path()));
        }
        return scopes.contains(region); // an inode or a name: held as such
    }

    /** @throws LockScopeMismatchException if {@code region} is not covered */
    void requireCovers(Scope region) {
        if (!covers(region)) {
            throw new LockScopeMismatchException(this, region);
        }
    }

    /** Sweeps the held ranges of the inode by start: covered if they leave no gap up to the region's end. */
    private boolean coversRange(Scope.ByteRange region) {
        if (scopes.contains(Scope.inode(region.inode()))) {
            return true;
        }
        List<Scope.ByteRange> held = new ArrayList<>();
        for (Scope scope : scopes) {
            if (scope instanceof Scope.ByteRange range && range.inode() == region.inode()) {
                held.add(range);
            }
        }
        held.sort(Comparator.comparingLong(Scope.ByteRange::start));
        long reached = region.start();
        for (Scope.ByteRange range : held) {
            if (range.start() > reached) {
                return false;
            }
            reached = Math.max(reached, range.end());
            if (reached >= region.end()) {
                return true;
            }
        }
        return false;
    }

    @Override
    public String toString() {
        return "token " + token + " for " + scopes;
    }
}
