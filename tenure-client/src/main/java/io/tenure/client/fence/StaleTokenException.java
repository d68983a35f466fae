package io.tenure.client.fence;

import io.tenure.client.Scope;
import java.util.Optional;

/**
 * A guarded resource refused a write because its fencing token is older than one it has already
 * accepted (or, in {@link FenceGuard.Mode#STRICTLY_GREATER}, equal to it): the lock has passed to
 * another holder since this token was granted, so the writer must stop; retrying with the same
 * token cannot succeed. Nothing was accepted.
 *
 * <p>From a {@link ScopeFenceGuard} it names the written {@linkplain #region() region}, and the
 * highest token is the highest accepted for any region overlapping it.
 */
public class StaleTokenException extends FenceRefusedException {
    private final String resource;
    private final Scope region;
    private final long offeredToken;
    private final long highestAccepted;

    public StaleTokenException(String resource, long offeredToken, long highestAccepted) {
        super("resource '" + resource + "' refused fencing token " + offeredToken
                + (offeredToken == highestAccepted
                        ? ": it was already accepted once (each token is accepted only once)"
                        : ": the highest accepted token is " + highestAccepted));
        this.resource = resource;
        this.region = null;
        this.offeredToken = offeredToken;
        this.highestAccepted = highestAccepted;
    }

    /** A refusal of a write to {@code region} by a {@link ScopeFenceGuard}. */
    public StaleTokenException(Scope region, long offeredToken, long highestAccepted) {
        super("region " + region + " refused fencing token " + offeredToken
                + (offeredToken == highestAccepted
                        ? ": a region overlapping it already accepted this token (each token is accepted only once)"
                        : ": a region overlapping it accepted token " + highestAccepted));
        this.resource = String.valueOf(region);
        this.region = region;
        this.offeredToken = offeredToken;
        this.highestAccepted = highestAccepted;
    }

    /** The guarded resource that refused the token; for a region, the region as text ({@code "range 42:100-200"}). */
    public String resource() {
        return resource;
    }

    /** The region whose write was refused, when a {@link ScopeFenceGuard} refused it. */
    public Optional<Scope> region() {
        return Optional.ofNullable(region);
    }

    /** The token the writer offered. */
    public long offeredToken() {
        return offeredToken;
    }

    /**
     * The highest token the resource (or any region overlapping the written one) had accepted
     * when it refused; at least {@link #offeredToken()}.
     */
    public long highestAccepted() {
        return highestAccepted;
    }
}
