package io.tenure.client.fence;

import io.tenure.client.TenureException;

/**
 * A guarded resource refused a write, and accepted nothing: the writer must stop, and retrying
 * with the same token cannot succeed. Either the token is older than one already accepted
 * ({@link StaleTokenException}: the lock has moved on), or the write lies outside the scopes the
 * token was granted for ({@link LockScopeMismatchException}: a bug in the writer). Catch this
 * class to roll back on either.
 */
public abstract class FenceRefusedException extends TenureException {
    protected FenceRefusedException(String message) {
        super(message);
    }
}
