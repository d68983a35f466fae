package io.tenure.core.kernel;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.List;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * One kind of replicated state beside the lease table: locks, and later semaphores, counters,
 * key-value, ... The state holds a fixed, ordered list of them; a primitive never imports
 * another, and learns of a lease's end only through {@link #leaseEnded}.
 *
 * <p>Four things make one: it applies its commands, reacts to a lease's end, writes and reads its
 * snapshot section, and encodes its commands. Apply is deterministic (no clock, no randomness, no
 * unordered iteration; I8) and never throws for a business error: a refusal is a
 * {@link Result.Rejected}.
 */
public interface Primitive {

    /**
     * What the primitive is called and how its commands are written: the part that never changes.
     *
     * @param name     a short stable name: the kind of its {@link WaitKey}s and the name of its
     *                 snapshot section; stored in snapshots, so it never changes
     * @param commands how its commands are written to the log: type tags unique across all
     *                 primitives (never reused: old logs name their commands by them), and their fields
     */
    record Kind(String name, List<CommandType<?>> commands) {
        public Kind {
            commands = List.copyOf(commands);
        }
    }

    Kind kind();

    /** Applies one of its commands (one of {@link Kind#commands()}) at {@code context.position()}. */
    Result apply(ApplyContext context, Command command);

    /**
     * Lease {@code leaseId} ended (revoked or expired; it is still in the lease table while this
     * runs): release everything it holds here, handing over to waiters, and withdraw its waits,
     * waking them. Appends the names it released to {@code released}. In a fixed order (by name),
     * since the order decides the stamps.
     */
    default void leaseEnded(ApplyContext context, long leaseId, List<String> released) {
    }

    /**
     * Forgets idle resource {@code name} (marked {@link Names#idle} by this primitive, still idle
     * since then): it goes, with whatever it kept (a semaphore's limit). The kernel frees the name
     * in its namespace after; a primitive with a namespace of its own ({@link Names#newNamespace})
     * frees it there itself. Only a primitive that marks names idle is ever asked.
     */
    default void forget(String name) {
        throw new IllegalStateException(kind().name() + " keeps no idle resources, asked to forget '" + name + "'");
    }

    /** Whether its changes are watch events of its own kind, so that a watch may name the kind (false for one that emits none). */
    default boolean watched() {
        return true;
    }

    /** The names of what the lease holds here, sorted. */
    default SortedSet<String> heldBy(long leaseId) {
        return EMPTY;
    }

    /** The names of what the lease waits for here, sorted. */
    default SortedSet<String> waitedBy(long leaseId) {
        return EMPTY;
    }

    /**
     * The index its grant queues keep of what each lease holds and waits for here, when it keeps
     * one; null otherwise. A primitive that returns one counts through it for the limits below, so
     * its {@link #heldBy} and {@link #waitedBy} must report that index (a queue that never grants,
     * as a barrier's, leaves its held side empty). Made with the state's lease table
     * ({@link Ties#Ties(Leases)}), the index keeps that table's per-client and per-owner counts.
     */
    default Ties ties() {
        return null;
    }

    /**
     * Whether leases hold or wait for names here: true exactly when it overrides {@link #heldBy}
     * or {@link #waitedBy}. The limits on every acquire count over these primitives only.
     */
    default boolean tiesLeases() {
        return ties() != null;
    }

    /**
     * How many names the lease holds here plus how many it waits for: the sizes of
     * {@link #heldBy} and {@link #waitedBy}, asked on every acquire (the per-lease and per-client
     * limits), counted without building either set where it can be.
     */
    default int tiesOf(long leaseId) {
        Ties ties = ties();
        return ties != null ? ties.heldCount(leaseId) + ties.waitCount(leaseId) : heldBy(leaseId).size() + waitedBy(leaseId).size();
    }

    /**
     * The sum of {@link #tiesOf(long)} over {@code leaseIds} (a client's or a user's leases, for
     * their limits), asked only of a primitive whose ties the lease table does not count (those
     * built on {@link Ties} are counted there); one with nothing tied may answer at once.
     */
    default int tiesOfAll(java.util.Set<Long> leaseIds) {
        int count = 0;
        for (long id : leaseIds) {
            count += tiesOf(id);
        }
        return count;
    }

    /** Whether {@code name} is in {@link #heldBy} or {@link #waitedBy} of the lease. */
    default boolean tiedTo(long leaseId, String name) {
        Ties ties = ties();
        return ties != null ? ties.holdsOrWaits(leaseId, name) : heldBy(leaseId).contains(name) || waitedBy(leaseId).contains(name);
    }

    /** Writes its whole state, in a fixed order: equal states give equal bytes. */
    void writeSnapshot(DataOutputStream out) throws IOException;

    /**
     * Reads what {@link #writeSnapshot} wrote into this empty primitive. {@code formatVersion} is
     * the snapshot's: before version 3 the primitives' parts were not framed, and a primitive
     * that did not exist in an older version reads nothing.
     */
    void readSnapshot(DataInputStream in, int formatVersion, Leases leases) throws IOException;

    SortedSet<String> EMPTY = java.util.Collections.unmodifiableSortedSet(new TreeSet<>());
}
