package io.tenure.client;

/**
 * The member refused the request because it would go over one of its limits (leases or locks
 * per client, waiters per lock, connections, request rate); the message names the limit. The
 * member keeps serving others; the same request may succeed once there is room.
 */
public class LimitExceededException extends TenureException {
    public LimitExceededException(String message, Throwable cause) {
        super(message, cause);
    }
}
