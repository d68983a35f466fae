package io.tenure.client;

/** The server refused a request as malformed ({@code INVALID_ARGUMENT}); the message names the field. Not retryable. */
public class InvalidArgumentException extends TenureException {
    public InvalidArgumentException(String message, Throwable cause) {
        super(message, cause);
    }
}
