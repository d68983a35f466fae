package io.tenure.spike.engine;

import io.tenure.core.TenureState;
import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.Command;
import io.tenure.server.raft.Entry;
import io.tenure.server.raft.EntryCodec;

import java.io.IOException;
import java.util.List;

/**
 * One member's copy of Tenure's state, {@link TenureState} (the {@code Kernel} over the product's
 * primitives: the lock table and member endpoints), fed by its engine's apply thread with each
 * committed entry as {@code TenureStateMachine} feeds it: command {@code slot} of the entry at
 * Raft index {@code index} applies at {@link Entry#position}. The member that serves the clients
 * (the leader) then answers the entry's callers and hands out its wake-ups, slot by slot, as
 * {@code Member.applied} does.
 */
final class Replica {
    private final TenureState state = new TenureState();
    private volatile Proposer proposer;
    private volatile Locks locks;
    /** The Raft index of the last entry applied; written after the state, so a reader that sees it sees the state. */
    private volatile long appliedIndex;

    /** From now on this member answers the clients. */
    void serve(Proposer proposer, Locks locks) {
        this.proposer = proposer;
        this.locks = locks;
    }

    /** Applies one committed entry; on the engine's apply thread only. */
    void apply(long index, byte[] data) {
        Entry entry;
        try {
            entry = EntryCodec.decode(data);
        } catch (IOException e) {
            throw new IllegalStateException("cannot decode log entry " + index + ": " + e.getMessage(), e);
        }
        Proposer p = proposer;
        List<Proposer.Answer> callers = p == null ? null : p.callersOf(entry);
        List<Command> commands = entry.commands();
        for (int slot = 0; slot < commands.size(); slot++) {
            Applied applied = state.apply(Entry.position(index, slot), commands.get(slot));
            if (callers != null) {
                callers.get(slot).applied(applied);
            }
            if (p != null && !applied.effects().isEmpty()) {
                locks.wake(applied.effects());
            }
        }
        appliedIndex = index;
    }

    long appliedIndex() {
        return appliedIndex;
    }

    /** The state's revision and lease count; read only once no entry is being applied. */
    String fingerprint() {
        return "revision " + state.revision() + ", " + state.leaseCount() + " leases";
    }
}
