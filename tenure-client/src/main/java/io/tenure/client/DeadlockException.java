package io.tenure.client;

/**
 * A set of scopes was refused because waiting for it would close a cycle of waits: the lease holds
 * what another lease waits for while waiting for what that lease holds (through any number of
 * leases), or it asks for a part overlapping one it holds itself. Nothing was queued. The message
 * is the member's, naming the leases and scopes of the cycle ({@code deadlock: ...}).
 *
 * <p>Ownership of scopes is the lease's, not a thread's: two threads of one client share its
 * session lease, so a thread asking for a scope that overlaps what another thread of the same
 * client holds gets this report rather than a wait. Give each worker that takes overlapping scopes
 * a lease (or a client) of its own. Not retryable as it is: release what the lease holds, or ask
 * for the parts in one set.
 */
public class DeadlockException extends FailedPreconditionException {
    public DeadlockException(String message, Throwable cause) {
        super(message, cause);
    }
}
