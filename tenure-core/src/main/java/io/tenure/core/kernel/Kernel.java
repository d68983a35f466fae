package io.tenure.core.kernel;

import io.tenure.core.watch.EventLog;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;

/**
 * What every primitive shares, and the dispatch to them: the lease table, the applied position
 * and stamps, the watch event log, and a fixed, ordered list of primitives. A command goes to the
 * lease table or to the one primitive that declared its type, a {@link Txn} to {@link Transactions}
 * (added after the primitives given, and routing to them); a lease's end goes to every
 * primitive, in order; a snapshot is the kernel's part followed by each primitive's section.
 *
 * <p>Changes only through {@link #apply}; reads no clock, makes no random choice and iterates only
 * ordered collections while applying, so the same log gives the same state everywhere (I8).
 * Not thread-safe: the server applies from one thread and guards reads.
 */
public final class Kernel {
    /** The kernel's own commands; their tags are never reused (nor {@link Transactions#TAG}, which {@link #codecOf} adds). */
    static final List<CommandType<?>> COMMAND_TYPES = List.of(
            // Before owners (and still for leases without one, which older members read).
            CommandType.older(1, LeaseGrant.class, (c, out) -> {
                out.writeLong(c.leaseId());
                out.writeLong(c.ttlMillis());
                Wire.writeString(out, c.clientId());
            }, in -> new LeaseGrant(in.readLong(), in.readLong(), Wire.readString(in, 1 << 20)), c -> c.owner().isEmpty()),
            new CommandType<>(36, LeaseGrant.class, (c, out) -> {
                out.writeLong(c.leaseId());
                out.writeLong(c.ttlMillis());
                Wire.writeString(out, c.clientId());
                Wire.writeString(out, c.owner());
            }, in -> new LeaseGrant(in.readLong(), in.readLong(), Wire.readString(in, 1 << 20), Wire.readString(in, 256))),
            new CommandType<>(2, LeaseRenew.class, (c, out) -> {
                out.writeInt(c.leaseIds().length);
                for (long id : c.leaseIds()) {
                    out.writeLong(id);
                }
            }, in -> {
                int n = in.readInt();
                if (n < 0 || n > (1 << 24)) {
                    throw new CommandFormatException("lease renewal declares " + n + " leases");
                }
                long[] ids = new long[n];
                for (int i = 0; i < n; i++) {
                    ids[i] = in.readLong();
                }
                return new LeaseRenew(ids);
            }),
            new CommandType<>(3, LeaseRevoke.class, (c, out) -> out.writeLong(c.leaseId()), in -> new LeaseRevoke(in.readLong())),
            new CommandType<>(4, LeaseExpire.class, (c, out) -> {
                out.writeLong(c.leaseId());
                out.writeLong(c.renewedAt());
            }, in -> new LeaseExpire(in.readLong(), in.readLong())),
            new CommandType<>(35, LeaseRetime.class, (c, out) -> {
                out.writeLong(c.leaseId());
                out.writeLong(c.ttlMillis());
            }, in -> new LeaseRetime(in.readLong(), in.readLong())),
            new CommandType<>(9, ReadBarrier.class, (c, out) -> { }, in -> ReadBarrier.INSTANCE),
            new CommandType<>(31, IdleForget.class, (c, out) -> {
                out.writeInt(c.names().size());
                for (IdleName n : c.names()) {
                    Wire.writeString(out, n.kind());
                    Wire.writeString(out, n.name());
                    out.writeLong(n.since());
                }
            }, in -> {
                int n = in.readInt();
                if (n < 0 || n > (1 << 24)) {
                    throw new CommandFormatException("idle forget declares " + n + " names");
                }
                List<IdleName> names = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    names.add(new IdleName(Wire.readString(in, 256), Wire.readString(in, 1 << 20), in.readLong()));
                }
                return new IdleForget(names);
            }));

    private static final Applied READ_BARRIER_PASSED = Applied.of(new Result.Skipped("a read barrier changes nothing"));

    private final Leases leases = new Leases();
    private final Names names = new Names();
    private final EventLog events;
    private final ApplyContext context;
    private final List<Primitive> primitives;
    /** Those of {@link #primitives} whose leases hold or wait for names ({@link Primitive#tiesLeases}). */
    private final List<Primitive> tying;
    /**
     * Those of {@link #tying} whose ties the lease table does not count per client and per owner
     * ({@link Ties#countedBy}): the per-client and per-user counts visit each lease for these only.
     */
    private final List<Primitive> uncounted;
    /** Command class → the primitive that applies it. Looked up, never iterated. */
    private final Map<Class<?>, Primitive> owners = new HashMap<>();
    /** Kind name → its primitive, for {@link IdleForget}. Looked up, never iterated. */
    private final Map<String, Primitive> byKind = new HashMap<>();
    private long appliedPosition;

    /**
     * @param primitives makes the primitives, in their fixed order, over this kernel's lease table
     *                   and the grant-queue kinds' namespace
     */
    public Kernel(int eventLogCapacity, BiFunction<Leases, Names, List<Primitive>> primitives) {
        this.events = new EventLog(eventLogCapacity);
        this.context = new ApplyContext(leases, events);
        List<Primitive> made = new ArrayList<>(primitives.apply(leases, names));
        // Last, after every primitive it routes to: its section holds the transactions' retry memo.
        Transactions transactions = new Transactions(made, owners::get, codecOf(made));
        made.add(transactions);
        this.primitives = List.copyOf(made);
        this.tying = this.primitives.stream().filter(Primitive::tiesLeases).toList();
        this.uncounted = tying.stream().filter(p -> p.ties() == null || !p.ties().countedBy(leases)).toList();
        for (Primitive primitive : this.primitives) {
            byKind.put(primitive.kind().name(), primitive);
            for (CommandType<?> type : primitive.kind().commands()) {
                owners.put(type.type(), primitive);
            }
        }
        owners.put(Txn.class, transactions);
    }

    /** The log codec of the kernel's commands and those of {@code primitives}. */
    public static CommandCodec codecOf(List<Primitive> primitives) {
        List<CommandType<?>> types = new ArrayList<>(COMMAND_TYPES);
        primitives.forEach(p -> types.addAll(p.kind().commands()));
        // A transaction's operations are written by the codec it belongs to.
        CommandCodec[] codec = new CommandCodec[1];
        types.add(Transactions.commandType(() -> codec[0]));
        codec[0] = new CommandCodec(types);
        return codec[0];
    }

    /**
     * Applies one committed command. Rejections are results, never exceptions: an exception here
     * would stop the member.
     *
     * @param position the command's log position, larger than every position applied before
     * @throws IllegalArgumentException for a position not after the last one, or a command no primitive applies
     */
    public Applied apply(long position, Command command) {
        if (position <= appliedPosition) {
            throw new IllegalArgumentException("position " + position + " is not after the last applied " + appliedPosition);
        }
        if (command instanceof ReadBarrier) {
            // Not even the position moves: a read must not look like a change to a watcher, or
            // to anyone comparing revisions.
            return READ_BARRIER_PASSED;
        }
        if (command instanceof IdleForget forget) {
            appliedPosition = position;
            context.begin(position);
            Result result = forget(forget);
            List<Effect> effects = context.end();
            return effects.isEmpty() ? Applied.of(result) : new Applied(result, effects);
        }
        Primitive owner = null;
        if (!(command instanceof LeaseCommand)) {
            owner = owners.get(command.getClass());
            if (owner == null) {
                throw new IllegalArgumentException("unknown command " + command.getClass().getName());
            }
        }
        appliedPosition = position;
        context.begin(position);
        Result result = owner == null ? leases.apply(context, (LeaseCommand) command, primitives) : owner.apply(context, command);
        List<Effect> effects = context.end();
        return effects.isEmpty() ? Applied.of(result) : new Applied(result, effects);
    }

    /** Forgets, in the command's order, each name still idle since the position named; skips the others. */
    private Result forget(IdleForget command) {
        int forgotten = 0;
        for (IdleName entry : command.names()) {
            Primitive primitive = byKind.get(entry.kind());
            if (primitive != null && names.stillIdle(entry)) {
                primitive.forget(entry.name());
                names.free(entry.name(), entry.kind());
                forgotten++;
            }
        }
        return new Result.Forgotten(forgotten, command.names().size() - forgotten);
    }

    // ---- reads ---------------------------------------------------------------------------------

    /** The position of the latest applied command. */
    public long appliedPosition() {
        return appliedPosition;
    }

    /** The store revision: the latest stamp or applied position, whichever is larger. */
    public long revision() {
        return Math.max(appliedPosition, context.lastStamp());
    }

    long lastStamp() {
        return context.lastStamp();
    }

    public EventLog events() {
        return events;
    }

    public Leases leases() {
        return leases;
    }

    /** The grant-queue kinds' namespace, with the idle names the leader forgets after its idle time. */
    public Names names() {
        return names;
    }

    /** The primitives, in their fixed order. */
    public List<Primitive> primitives() {
        return primitives;
    }

    /** The primitive of this class. */
    public <P extends Primitive> P primitive(Class<P> type) {
        for (Primitive p : primitives) {
            if (type.isInstance(p)) {
                return type.cast(p);
            }
        }
        throw new IllegalArgumentException("no primitive " + type.getName());
    }

    /** The lease with what it holds and waits for, or null when it does not exist. */
    public LeaseView lease(long leaseId) {
        Lease lease = leases.get(leaseId);
        return lease == null ? null : view(lease);
    }

    /** Every lease, ordered by id. */
    public List<LeaseView> leaseViews() {
        List<LeaseView> views = new ArrayList<>(leases.size());
        for (Lease lease : leases.inIdOrder()) {
            views.add(view(lease));
        }
        return views;
    }

    /**
     * What the leases of client id {@code clientId} hold and wait for, over every primitive (for
     * the per-client limit): the lease table's running count, plus a visit of the client's leases
     * only for the primitives it does not count (lock scopes), which is quick when none are held.
     */
    public int holdsAndWaits(String clientId) {
        int count = leases.tiesOfClient(clientId);
        for (Primitive p : uncounted) {
            count += p.tiesOfAll(leases.idsOf(clientId));
        }
        return count;
    }

    /** What the leases owned by user {@code owner} hold and wait for, over every primitive. */
    public int holdsAndWaitsOfOwner(String owner) {
        int count = leases.tiesOfOwner(owner);
        for (Primitive p : uncounted) {
            count += p.tiesOfAll(leases.idsOwnedBy(owner));
        }
        return count;
    }

    /** What the lease holds and waits for, over every primitive: the sizes of its {@link LeaseView}'s lists, without building them. */
    public int tiesOf(long leaseId) {
        int count = 0;
        for (Primitive p : tying) {
            count += p.tiesOf(leaseId);
        }
        return count;
    }

    private LeaseView view(Lease lease) {
        List<String> held = new ArrayList<>();
        List<String> waiting = new ArrayList<>();
        for (Primitive p : primitives) {
            held.addAll(p.heldBy(lease.id()));
            waiting.addAll(p.waitedBy(lease.id()));
        }
        return new LeaseView(lease.id(), lease.ttlMillis(), lease.clientId(), lease.grantedAt(), lease.renewedAt(),
                List.copyOf(held), List.copyOf(waiting));
    }

    // ---- snapshots -----------------------------------------------------------------------------

    /** Writes the whole state (not the watch event log), with its checksum; see {@link SnapshotFormat}. */
    public void writeSnapshot(OutputStream out) throws IOException {
        SnapshotFormat.write(this, out);
    }

    /**
     * Reads a state written by {@link #writeSnapshot} (or by an earlier format version) into this
     * kernel, which must be new. Watches may replay from the snapshot's revision onward only.
     *
     * @throws io.tenure.core.SnapshotFormatException when the stream is not a snapshot, has an unknown format
     *                                 version or section, is truncated or fails its checksum
     */
    public void readSnapshot(InputStream in) throws IOException {
        if (appliedPosition != 0 || leases.size() != 0) {
            throw new IllegalStateException("a snapshot is read into a new state only");
        }
        SnapshotFormat.read(this, in);
        events.resetTo(revision() + 1);
    }

    void restorePositions(long appliedPosition, long lastStamp) {
        this.appliedPosition = appliedPosition;
        context.restoreLastStamp(lastStamp);
    }
}
