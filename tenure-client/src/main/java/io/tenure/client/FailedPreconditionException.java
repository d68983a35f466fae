package io.tenure.client;

/**
 * The server refused a request that is well formed but not allowed in the current state
 * ({@code FAILED_PRECONDITION}) and changed nothing: for lock calls a stale or foreign release
 * ({@link NotHolderException}), for cluster administration removing the last voting member.
 * Not retryable as it is.
 */
public class FailedPreconditionException extends TenureException {
    public FailedPreconditionException(String message, Throwable cause) {
        super(message, cause);
    }
}
