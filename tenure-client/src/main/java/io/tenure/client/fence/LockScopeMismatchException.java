package io.tenure.client.fence;

import io.tenure.client.Scope;

/**
 * A guarded resource refused a write because the written region is not covered by the scopes
 * its token was granted for (seed 003's {@code LockScopeMismatch}): a byte range not inside the
 * held ranges or inode, an inode not held as a whole, a path neither held nor under a held path.
 * The token may well be current; the writer is writing what it does not hold, which is a bug in
 * the writer, so retrying cannot succeed. Nothing was accepted.
 */
public class LockScopeMismatchException extends FenceRefusedException {
    private final ScopedToken token;
    private final Scope region;

    public LockScopeMismatchException(ScopedToken token, Scope region) {
        super(region + " is not covered by the scopes " + token.scopes() + " of fencing token " + token.token()
                + ": a token fences only writes inside the scopes it was granted for");
        this.token = token;
        this.region = region;
    }

    /** The token the writer offered, with the scopes it was granted for. */
    public ScopedToken token() {
        return token;
    }

    /** The region the writer tried to write. */
    public Scope region() {
        return region;
    }
}
