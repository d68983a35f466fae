package io.tenure.core;

import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.Command;
import io.tenure.core.kernel.CommandCodec;
import io.tenure.core.kernel.Kernel;
import io.tenure.core.kernel.LeaseView;
import io.tenure.core.kernel.Leases;
import io.tenure.core.kernel.Names;
import io.tenure.core.kernel.Primitive;
import io.tenure.core.kernel.Transactions;
import io.tenure.core.kernel.Txn;
import io.tenure.core.barrier.BarrierTable;
import io.tenure.core.barrier.DoubleBarrierTable;
import io.tenure.core.election.ElectionTable;
import io.tenure.core.counter.CounterTable;
import io.tenure.core.kv.KvTable;
import io.tenure.core.list.ListTable;
import io.tenure.core.latch.LatchTable;
import io.tenure.core.lock.LockTable;
import io.tenure.core.member.MemberEndpoints;
import io.tenure.core.semaphore.SemaphoreTable;
import io.tenure.core.signal.SignalTable;
import io.tenure.core.watch.EventLog;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.List;

/**
 * The replicated state of Tenure: the {@link Kernel} (leases, stamps, the watch event log) over a
 * fixed, ordered list of primitives. It changes only through {@link #apply(long, Command)},
 * called on every member with the same commands at the same log positions, so every member holds
 * the same state (I8).
 *
 * <p>Not thread-safe: the server applies from one thread and guards reads.
 */
public final class TenureState {
    /** Default number of watch events kept for replay. */
    public static final int DEFAULT_EVENT_LOG_CAPACITY = 65_536;

    /**
     * The primitives, in the order in which a lease's end reaches them and their snapshot sections
     * are written. A new primitive is one more line here; never reorder (the order decides stamps).
     * Locks, semaphores and elections share the kernel's namespace; barriers and double barriers
     * have one of their own (seed 004: barriers never clash with a lock of the same name), and
     * count-down latches another, counters another (each namespace made from the kernel's shares
     * its idle names, so an idle counter is forgotten as an idle semaphore is).
     */
    private static List<Primitive> primitives(Leases leases, Names names) {
        Names barriers = names.newNamespace();
        Names latches = names.newNamespace();
        return List.of(
                new LockTable(leases, names),
                new MemberEndpoints(),
                new SemaphoreTable(leases, names),
                new ElectionTable(leases, names),
                new BarrierTable(leases, barriers),
                new DoubleBarrierTable(leases, barriers),
                new LatchTable(leases, latches),
                new CounterTable(names.newNamespace()),
                new KvTable(leases),
                new ListTable(leases, names.newNamespace()),
                new SignalTable(leases),
                new io.tenure.core.access.AccessTable(),
                new io.tenure.core.scope.ScopeTable(leases));
    }

    /** The log encoding of every command of the kernel and the primitives. */
    public static final CommandCodec CODEC = Kernel.codecOf(primitives(new Leases(), new Names()));

    private final Kernel kernel;

    public TenureState() {
        this(DEFAULT_EVENT_LOG_CAPACITY);
    }

    public TenureState(int eventLogCapacity) {
        this.kernel = new Kernel(eventLogCapacity, TenureState::primitives);
    }

    /**
     * Applies one committed command. Rejections are results, never exceptions: an exception here
     * would stop the member.
     *
     * @param position the command's log position, larger than every position applied before
     */
    public Applied apply(long position, Command command) {
        return kernel.apply(position, command);
    }

    /** The position of the latest applied command. */
    public long appliedPosition() {
        return kernel.appliedPosition();
    }

    /** The store revision: the latest stamp or applied position, whichever is larger. */
    public long revision() {
        return kernel.revision();
    }

    public EventLog events() {
        return kernel.events();
    }

    /** The kinds of resource a watch may name: those of the primitives whose changes are watch events ({@link Primitive#watched}). */
    public java.util.Set<String> watchedKinds() {
        java.util.Set<String> kinds = new java.util.TreeSet<>();
        for (Primitive p : kernel.primitives()) {
            if (p.watched()) {
                kinds.add(p.kind().name());
            }
        }
        return kinds;
    }

    /** The primitive of this class, for its own reads (for example {@code primitive(LockTable.class).lock(name)}). */
    public <P extends Primitive> P primitive(Class<P> type) {
        return kernel.primitive(type);
    }

    /**
     * Null when transaction {@code txn} is well formed, else a message naming the comparison or
     * operation and its field: what apply would refuse it for before reading any state, for the
     * front ends to refuse it before it goes to the log. Reads nothing of the state.
     */
    public String checkTransaction(Txn txn) {
        return kernel.primitive(Transactions.class).problem(txn);
    }

    // ---- idle names ------------------------------------------------------------------------------

    /** Names idle (no holder, no waiter, kept for the idle time) since a position after {@code position}, oldest first, at most {@code limit}. */
    public List<io.tenure.core.kernel.IdleName> idleAfter(long position, int limit) {
        return kernel.names().idleAfter(position, limit);
    }

    /** Whether {@code name} is still idle as {@code idle} says (same kind, since the same position). */
    public boolean stillIdle(io.tenure.core.kernel.IdleName idle) {
        return kernel.names().stillIdle(idle);
    }

    /** How many names are idle, over every kind. */
    public int idleCount() {
        return kernel.names().idleCount();
    }

    // ---- leases ------------------------------------------------------------------------------

    public int leaseCount() {
        return kernel.leases().size();
    }

    /** The live leases of client id {@code clientId}. */
    public int leaseCount(String clientId) {
        return kernel.leases().countOf(clientId);
    }

    /** The live leases owned by user {@code owner} ({@link io.tenure.core.kernel.LeaseGrant#owner}). */
    public int leaseCountOfOwner(String owner) {
        return kernel.leases().idsOwnedBy(owner).size();
    }

    /** What the leases owned by user {@code owner} hold and wait for, over every primitive. */
    public int holdsAndWaitsOfOwner(String owner) {
        return kernel.holdsAndWaitsOfOwner(owner);
    }

    /** What the leases of client id {@code clientId} hold and wait for, over every primitive. */
    public int holdsAndWaits(String clientId) {
        return kernel.holdsAndWaits(clientId);
    }

    /** The position of the lease's latest grant or renewal, or -1 when it does not exist. */
    public long renewedAt(long leaseId) {
        var lease = kernel.leases().get(leaseId);
        return lease == null ? -1 : lease.renewedAt();
    }

    /**
     * The user who owns the live lease {@code leaseId} ({@link io.tenure.core.kernel.LeaseGrant#owner}):
     * empty when it has none or does not exist.
     */
    public java.util.Optional<String> leaseOwner(long leaseId) {
        var lease = kernel.leases().get(leaseId);
        return lease == null || lease.owner().isEmpty() ? java.util.Optional.empty() : java.util.Optional.of(lease.owner());
    }

    /** The client id of the live lease {@code leaseId}, or null when it does not exist. */
    public String clientOf(long leaseId) {
        var lease = kernel.leases().get(leaseId);
        return lease == null ? null : lease.clientId();
    }

    /** What the lease holds and waits for, over every primitive: {@code lease(leaseId)}'s two lists' sizes, without building them. */
    public int tiesOf(long leaseId) {
        return kernel.tiesOf(leaseId);
    }

    /** The lease with what it holds and waits for, or null. */
    public LeaseView lease(long leaseId) {
        return kernel.lease(leaseId);
    }

    /** Every lease, ordered by id. */
    public List<LeaseView> leases() {
        return kernel.leaseViews();
    }

    // ---- snapshots -----------------------------------------------------------------------------

    /** Writes the whole state (not the watch event log) in the snapshot format, with its checksum. */
    public void writeSnapshot(OutputStream out) throws IOException {
        kernel.writeSnapshot(out);
    }

    /**
     * Reads a state written by {@link #writeSnapshot} (this build's format or an earlier one).
     * Watches may replay from the snapshot's revision onward only: the events before it were not kept.
     *
     * @throws SnapshotFormatException when the stream is not a snapshot, has an unknown format
     *                                 version, is truncated or fails its checksum
     */
    public static TenureState readSnapshot(InputStream in, int eventLogCapacity) throws IOException {
        TenureState state = new TenureState(eventLogCapacity);
        state.kernel.readSnapshot(in);
        return state;
    }
}
