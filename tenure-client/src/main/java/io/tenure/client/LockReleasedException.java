package io.tenure.client;

/** A {@link LockHandle} was used after it was released: the lock may already belong to someone else. */
public class LockReleasedException extends TenureException {
    public LockReleasedException(String key, long fencingToken) {
        super("lock '" + key + "' (fencing token " + fencingToken + ") was released by this handle; acquire it again");
    }
}
