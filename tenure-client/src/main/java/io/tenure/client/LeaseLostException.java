package io.tenure.client;

import java.util.Objects;

/**
 * An operation needed a lease that this client no longer trusts: it was lost (see
 * {@link Lease#lost()}) before or while the operation ran. Work bound to the lease must stop.
 */
public class LeaseLostException extends TenureException {
    private final transient LeaseLoss loss;

    public LeaseLostException(long leaseId, LeaseLoss loss) {
        super("lease " + leaseId + " is lost (" + loss.reason() + "): " + loss.message());
        this.loss = Objects.requireNonNull(loss, "loss");
    }

    /** Why the lease was lost. */
    public LeaseLoss loss() {
        return loss;
    }
}
