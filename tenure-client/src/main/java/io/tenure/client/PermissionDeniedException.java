package io.tenure.client;

/**
 * The member refused the call for who made it ({@code PERMISSION_DENIED}): the principal may not
 * (managing users and roles needs the role root while authentication is on); the message names
 * the user and what it needs. Not retryable as that principal.
 */
public class PermissionDeniedException extends TenureException {
    public PermissionDeniedException(String message, Throwable cause) {
        super(message, cause);
    }
}
