package io.tenure.client;

/**
 * The server refused to create something that exists already ({@code ALREADY_EXISTS}): a member
 * name or peer address that is taken, or a lease id that another grant holds. Not retryable as it is.
 */
public class AlreadyExistsException extends TenureException {
    public AlreadyExistsException(String message, Throwable cause) {
        super(message, cause);
    }
}
