package io.tenure.server;

/**
 * This member cannot serve the request now (not the leader, no leader, shutting down, a write not
 * committed). Retryable; for a write, the outcome is unknown: it may have been applied.
 */
public final class NotServingException extends RuntimeException {
    public NotServingException(String message) {
        super(message);
    }

    public NotServingException(String message, Throwable cause) {
        super(message, cause);
    }
}
