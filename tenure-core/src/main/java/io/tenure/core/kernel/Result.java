package io.tenure.core.kernel;

/**
 * What a command did, for the caller that proposed it, or for a parked wait it ends
 * ({@link Effect.Wake}). Rejections are results, never exceptions: an exception in apply would
 * stop the member. Each primitive declares its own results as a sealed family; the two here are
 * shared by all.
 *
 * <p>The kernel's own results ({@link Forgotten}) are here too.
 */
public interface Result {

    /** A conditional command whose condition no longer held; nothing changed. */
    record Skipped(String why) implements Result {}

    /** An {@link IdleForget}: how many names went, and how many were used again since and stay. */
    record Forgotten(int forgotten, int stayed) implements Result {}

    /** The command was refused; nothing changed. */
    record Rejected(Code code, String message) implements Result {}

    /** Why a command was refused. The front ends map each to one status code. */
    enum Code {
        /** The command is malformed (name, size, TTL). */
        INVALID_ARGUMENT,
        /** The lease does not exist: never granted, expired or revoked. */
        NOT_FOUND,
        /** The lease exists but does not hold what the command needs (a lock, with that token). */
        FAILED_PRECONDITION,
        /** A lease id is taken by a lease of another client or TTL. */
        ALREADY_EXISTS
    }
}
