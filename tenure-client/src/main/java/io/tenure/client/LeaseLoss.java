package io.tenure.client;

import java.util.Objects;

/**
 * Why a {@link Lease} stopped being trusted, as delivered by {@link Lease#lost()}.
 *
 * @param reason  the kind of loss
 * @param message a human-readable account, including the server's text when it gave one
 */
public record LeaseLoss(Reason reason, String message) {
    public LeaseLoss {
        Objects.requireNonNull(reason, "reason");
        Objects.requireNonNull(message, "message");
    }

    public enum Reason {
        /** The server said the lease no longer exists (it expired, or was revoked elsewhere). */
        EXPIRED,
        /** This client revoked it. */
        REVOKED,
        /**
         * No keep-alive was acknowledged in time: the server may expire the lease soon, so the
         * client gave it up first. The server may still hold it until its TTL ends.
         */
        UNREACHABLE,
        /** The client was closed, so nothing keeps the lease alive any more. */
        CLOSED
    }
}
