package io.tenure.server.raft;

import io.tenure.core.kernel.Command;

import java.util.List;

/**
 * One Raft log entry of Tenure: the commands a member coalesced while its previous entry was in
 * flight (RATIS.md: Ratis's cost is per entry, so several commands share one).
 *
 * @param proposer     the numeric id of the member that proposed it; only that member completes the callers' futures
 * @param batch        the proposer's sequence number for the entry
 * @param proposerTerm the Raft term in which the proposer was leader; a lease's or a key's expiry in an entry
 *                     committed in another term (a deposed leader's proposal carried over) is skipped
 * @param commands     at most {@link #MAX_COMMANDS}; command i applies at position index * 2^16 + i
 */
public record Entry(long proposer, long batch, long proposerTerm, List<Command> commands) {
    /** Slot bits of a log position: index * 2^16 + slot (ARCHITECTURE.md, I2). */
    public static final int SLOT_BITS = 16;
    public static final int MAX_COMMANDS = 1 << SLOT_BITS;

    public Entry {
        commands = List.copyOf(commands);
        if (commands.isEmpty() || commands.size() > MAX_COMMANDS) {
            throw new IllegalArgumentException("an entry carries 1 to " + MAX_COMMANDS + " commands, got " + commands.size());
        }
    }

    /** The log position of the command in slot {@code slot} of the entry at Raft index {@code index}. */
    public static long position(long index, int slot) {
        return (index << SLOT_BITS) | slot;
    }
}
