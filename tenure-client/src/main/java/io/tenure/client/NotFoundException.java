package io.tenure.client;

/**
 * The server does not know what the request names ({@code NOT_FOUND}): for lock and lease calls
 * the lease ({@link LeaseNotFoundException}), for cluster administration the member.
 */
public class NotFoundException extends TenureException {
    public NotFoundException(String message, Throwable cause) {
        super(message, cause);
    }
}
