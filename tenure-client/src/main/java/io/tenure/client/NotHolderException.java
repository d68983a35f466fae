package io.tenure.client;

/**
 * The server refused an operation that requires holding a lock ({@code FAILED_PRECONDITION}):
 * the (key, lease, fencing token) triple does not name the current holder, so the request was
 * stale or foreign and changed nothing.
 */
public class NotHolderException extends FailedPreconditionException {
    public NotHolderException(String message, Throwable cause) {
        super(message, cause);
    }
}
