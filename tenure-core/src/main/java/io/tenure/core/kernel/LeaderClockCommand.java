package io.tenure.core.kernel;

/**
 * A command the leader proposes from its own monotonic clock (an expiry): it stands only for the
 * term it was proposed in. A copy carried into a later term by the log is not applied, since its
 * view of the deadline is not the new leader's (RATIS.md); the Raft adapter skips it by the
 * proposer's term it records with each entry.
 */
public interface LeaderClockCommand extends Command {
}
