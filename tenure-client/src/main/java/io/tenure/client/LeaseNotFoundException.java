package io.tenure.client;

/**
 * The server does not know the lease ({@code NOT_FOUND}): it was never granted, was revoked, or
 * expired. Every lock it held has been released. Not retryable with the same lease.
 */
public class LeaseNotFoundException extends NotFoundException {
    public LeaseNotFoundException(String message, Throwable cause) {
        super(message, cause);
    }
}
