package io.tenure.server;

/**
 * A call without a valid credential while authentication is on, or a failed authentication:
 * gRPC {@code UNAUTHENTICATED}, HTTP 401, the text protocol's {@code error_auth}. The message
 * says what to show, never which part of a credential was wrong.
 */
public final class Unauthenticated extends RuntimeException {
    public Unauthenticated(String message) {
        super(message);
    }
}
