package io.tenure.core.kernel;

/**
 * One replicated state change, applied on every member in log order by
 * {@link io.tenure.core.TenureState#apply(long, Command)}. None reads a clock or picks a random
 * number while applied: whatever varies (a lease id, the renewal point an expiry was computed
 * against) is chosen by the proposing member and carried in the command.
 *
 * <p>Each primitive declares its commands as one sealed family of records in its own package
 * ({@code LeaseCommand} here, {@code LockCommand} in {@code io.tenure.core.lock}), applied by one
 * exhaustive method. This base is open because the kernel must not name the primitives: a sealed
 * type's subtypes must share its package when the jar runs on the class path, and adding a
 * primitive must not touch the kernel.
 */
public interface Command {
}
