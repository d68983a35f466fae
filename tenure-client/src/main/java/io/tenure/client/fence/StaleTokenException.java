package io.tenure.client.fence;

import io.tenure.client.TenureException;

/**
 * A guarded resource refused a write because its fencing token is older than one it has already
 * accepted (or, in {@link FenceGuard.Mode#STRICTLY_GREATER}, equal to it): the lock has passed to
 * another holder since this token was granted, so the writer must stop; retrying with the same
 * token cannot succeed. Nothing was accepted.
 */
public class StaleTokenException extends TenureException {
    private final String resource;
    private final long offeredToken;
    private final long highestAccepted;

    public StaleTokenException(String resource, long offeredToken, long highestAccepted) {
        super("resource '" + resource + "' refused fencing token " + offeredToken
                + (offeredToken == highestAccepted
                        ? ": it was already accepted once (each token is accepted only once)"
                        : ": the highest accepted token is " + highestAccepted));
        this.resource = resource;
        this.offeredToken = offeredToken;
        this.highestAccepted = highestAccepted;
    }

    /** The guarded resource that refused the token. */
    public String resource() {
        return resource;
    }

    /** The token the writer offered. */
    public long offeredToken() {
        return offeredToken;
    }

    /** The highest token the resource had accepted when it refused; at least {@link #offeredToken()}. */
    public long highestAccepted() {
        return highestAccepted;
    }
}
