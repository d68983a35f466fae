package io.tenure.core.kernel;

/**
 * Changes nothing, not even the revision. A member that has applied it has applied everything
 * committed before it was proposed: the read barrier of a linearizable read. Its commit needs a
 * majority that accepts the proposing leader's term, so a leader cut off from the majority cannot
 * pass it.
 */
public record ReadBarrier() implements Command {
    /** The one instance; the record has no state. */
    public static final ReadBarrier INSTANCE = new ReadBarrier();
}
