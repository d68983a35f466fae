package io.tenure.server;

/**
 * A call its principal may not make (a management call by a user without the role root): gRPC
 * {@code PERMISSION_DENIED}, HTTP 403. The message names the user and what it would need.
 */
public final class PermissionDenied extends RuntimeException {
    public PermissionDenied(String message) {
        super(message);
    }
}
