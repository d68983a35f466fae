package io.tenure.client;

/**
 * The root of the client's unchecked exceptions. A server refusal arrives as one of the
 * subclasses, whose message is the server's own text; this class itself is used for failures
 * that fit none of them (an unexpected status, an interrupted wait).
 */
public class TenureException extends RuntimeException {
    public TenureException(String message) {
        super(message);
    }

    public TenureException(String message, Throwable cause) {
        super(message, cause);
    }
}
