package io.tenure.core.kernel;

import io.tenure.core.Limits;
import io.tenure.core.SnapshotFormatException;
import io.tenure.core.kernel.Result.Code;
import io.tenure.core.kernel.TxnCompare.Relation;
import io.tenure.core.kernel.TxnCompare.Target;

import java.io.DataInput;
import java.io.DataInputStream;
import java.io.DataOutput;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.zip.CRC32C;

/**
 * Applies {@link Txn}s over the primitives that take part in them ({@link Transactional}), without
 * naming any: a comparison goes to the primitive of its kind, an operation to the primitive that
 * owns its command type.
 *
 * <p><b>All or nothing.</b> A transaction is checked whole before anything changes: its size, then
 * every comparison and every operation of both branches for its form, then, once the comparisons
 * have chosen a branch, every operation of that branch against the state (each primitive sees its
 * own operations together, in order, so that two increments of one counter or two new keys are
 * judged together). Any refusal refuses the transaction, naming the comparison or operation by
 * its branch and index and the field at fault, and nothing changes. Otherwise the branch's
 * operations are applied in order, at the transaction's log position: each change gets its own
 * stamp (its revision), strictly increasing, with its usual watch event.
 *
 * <p><b>Retries.</b> A transaction that names its request is applied once: a retry (after a lost
 * answer, or a failover) gets the first copy's answer, among the last {@value #RECENT_REQUESTS}.
 * A retry is the same transaction with the same request id; another transaction that happens to
 * carry a remembered id is applied as a new one.
 * A refused transaction is not remembered: nothing changed, and its retry is judged afresh.
 *
 * <p>The kernel adds this to the end of the primitives, for its snapshot section (the remembered
 * answers, under {@value #NAME}); it holds no resources and watches see nothing of its own.
 */
public final class Transactions implements Primitive {
    /** The most comparisons in one transaction. */
    public static final int MAX_COMPARES = 128;
    /** The most operations in each branch of one transaction. */
    public static final int MAX_OPERATIONS = 128;
    /** How many transactions are remembered with their answers, for their retries. */
    public static final int RECENT_REQUESTS = 4_096;
    /** Its snapshot section's name. Never changes. */
    public static final String NAME = "txn";
    /** The log tag of {@link Txn} (never reuse it). */
    public static final int TAG = 70;
    /** The bound on a count read from the log: above every valid one, so that apply refuses an oversized transaction clearly. */
    private static final int MAX_DECLARED = 1 << 12;
    private static final int MAX_FIELD_BYTES = 1 << 20;
    private static final Kind KIND = new Kind(NAME, List.of());

    /**
     * One transaction of one client: its request id, and a checksum of the whole transaction as
     * written to the log, so that another transaction sent with the same id (two HTTP clients that
     * both chose 17) is not answered as the first. A retry sends the same transaction.
     */
    private record Request(long requestId, int fingerprint) {}

    private final List<Primitive> primitives;
    private final Function<Class<?>, Primitive> owners;
    private final CommandCodec codec;
    private final RetryMemo<Request, TxnResult> recentRequests = new RetryMemo<>(RECENT_REQUESTS);

    /**
     * @param primitives the state's primitives, in their fixed order
     * @param owners     command class → the primitive that applies it (null for none)
     * @param codec      the log encoding of the commands of {@code primitives}, for the requests' checksums
     */
    Transactions(List<Primitive> primitives, Function<Class<?>, Primitive> owners, CommandCodec codec) {
        this.primitives = List.copyOf(primitives);
        this.owners = owners;
        this.codec = codec;
    }

    /**
     * The log encoding of {@link Txn}: its comparisons, then each branch's operations written by
     * {@code codec} (tag and fields, as on their own), then its request id.
     */
    static CommandType<Txn> commandType(Supplier<CommandCodec> codec) {
        return new CommandType<>(TAG, Txn.class, (c, out) -> {
            out.writeInt(c.compares().size());
            for (TxnCompare compare : c.compares()) {
                Wire.writeString(out, compare.kind());
                Wire.writeString(out, compare.key());
                out.writeByte(compare.target() == null ? -1 : compare.target().ordinal());
                out.writeByte(compare.relation() == null ? -1 : compare.relation().ordinal());
                out.writeLong(compare.number());
                out.writeBoolean(compare.value() != null);
                if (compare.value() != null) {
                    Wire.writeBytes(out, compare.value());
                }
            }
            writeOperations(codec.get(), c.success(), out);
            writeOperations(codec.get(), c.failure(), out);
            out.writeLong(c.requestId());
        }, in -> {
            int n = declared(in, "comparisons");
            List<TxnCompare> compares = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                String kind = Wire.readString(in, 256);
                String key = Wire.readString(in, MAX_FIELD_BYTES);
                Target target = enumOf(Target.values(), in.readByte(), "target");
                Relation relation = enumOf(Relation.values(), in.readByte(), "relation");
                long number = in.readLong();
                byte[] value = in.readBoolean() ? Wire.readBytes(in, MAX_FIELD_BYTES) : null;
                compares.add(new TxnCompare(kind, key, target, relation, number, value));
            }
            List<Command> success = readOperations(codec.get(), in);
            List<Command> failure = readOperations(codec.get(), in);
            return new Txn(compares, success, failure, in.readLong());
        });
    }

    private static void writeOperations(CommandCodec codec, List<Command> operations, DataOutput out) throws IOException {
        out.writeInt(operations.size());
        for (Command operation : operations) {
            if (operation instanceof Txn) {
                throw new IllegalArgumentException("a transaction cannot contain a transaction");
            }
            codec.write(operation, out);
        }
    }

    private static List<Command> readOperations(CommandCodec codec, DataInput in) throws IOException {
        int n = declared(in, "operations");
        List<Command> operations = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            Command operation = codec.read(in);
            if (operation instanceof Txn) {
                throw new CommandFormatException("a transaction contains a transaction");
            }
            operations.add(operation);
        }
        return operations;
    }

    private static int declared(DataInput in, String what) throws IOException {
        int n = in.readInt();
        if (n < 0 || n > MAX_DECLARED) {
            throw new CommandFormatException("transaction declares " + n + " " + what);
        }
        return n;
    }

    private static <E extends Enum<E>> E enumOf(E[] values, byte ordinal, String what) throws CommandFormatException {
        if (ordinal == -1) {
            return null;
        }
        if (ordinal < 0 || ordinal >= values.length) {
            throw new CommandFormatException("transaction comparison " + what + " " + ordinal + " is unknown");
        }
        return values[ordinal];
    }

    /** A transaction's changes are its operands' own events, of their kinds; it has none of its own. */
    @Override
    public boolean watched() {
        return false;
    }

    @Override
    public Kind kind() {
        return KIND;
    }

    @Override
    public Result apply(ApplyContext context, Command command) {
        if (!(command instanceof Txn txn)) {
            throw new IllegalArgumentException("not a transaction: " + command.getClass().getName());
        }
        String problem = problem(txn);
        if (problem != null) {
            return new Result.Rejected(Code.INVALID_ARGUMENT, problem);
        }
        Request request = txn.requestId() == 0 ? null : new Request(txn.requestId(), fingerprint(txn));
        TxnResult before = request == null ? null : recentRequests.recall(request);
        if (before != null) {
            return before;
        }
        boolean succeeded = true;
        for (TxnCompare compare : txn.compares()) {
            if (!((Transactional) ofKind(compare.kind())).compare(compare)) {
                succeeded = false;
                break;
            }
        }
        List<Command> chosen = succeeded ? txn.success() : txn.failure();
        Result.Rejected refused = admit(chosen, succeeded ? "success" : "failure");
        if (refused != null) {
            return refused;
        }
        List<TxnResult.Done> done = new ArrayList<>(chosen.size());
        for (Command operation : chosen) {
            done.add(((Transactional) owners.apply(operation.getClass())).applyOperation(context, operation));
        }
        TxnResult result = new TxnResult(succeeded, Math.max(context.position(), context.lastStamp()), done);
        if (request != null) {
            recentRequests.remember(request, result);
        }
        return result;
    }

    /** A checksum of the well-formed {@code txn} as the log writes it: the same bytes on every member. */
    private int fingerprint(Txn txn) {
        CRC32C crc = new CRC32C();
        crc.update(codec.encode(txn));
        return (int) crc.getValue();
    }

    /**
     * Null when {@code txn} is well formed (its size, and the form of each comparison and of each
     * operation of both branches), else a message naming the comparison or operation and the field
     * at fault. Changes nothing and reads no state: the front ends call it before proposing.
     */
    public String problem(Txn txn) {
        if (txn.compares().size() > MAX_COMPARES) {
            return "compare: at most " + MAX_COMPARES + " comparisons in a transaction, got " + txn.compares().size();
        }
        for (int i = 0; i < txn.compares().size(); i++) {
            String problem = problem(txn.compares().get(i), "compare[" + i + "]");
            if (problem != null) {
                return problem;
            }
        }
        String problem = problem(txn.success(), "success");
        return problem != null ? problem : problem(txn.failure(), "failure");
    }

    private String problem(TxnCompare compare, String at) {
        if (compare == null) {
            return at + " is missing";
        }
        if (!(ofKind(compare.kind()) instanceof Transactional kind)) {
            return at + ".kind must be one of " + transactionalKinds() + ", got '" + compare.kind() + "'";
        }
        String problem = Limits.checkKey(at + ".key", compare.key());
        if (problem != null) {
            return problem;
        }
        if (compare.target() == null) {
            return at + ".target must be one of " + List.of(Target.values());
        }
        if (compare.relation() == null) {
            return at + ".relation must be one of " + List.of(Relation.values());
        }
        problem = kind.checkCompare(compare);
        return problem == null ? null : at + ": " + problem;
    }

    private String problem(List<Command> operations, String branch) {
        if (operations.size() > MAX_OPERATIONS) {
            return branch + ": at most " + MAX_OPERATIONS + " operations in a branch of a transaction, got " + operations.size();
        }
        for (int i = 0; i < operations.size(); i++) {
            Command operation = operations.get(i);
            String at = branch + "[" + i + "]";
            if (operation == null) {
                return at + " is missing";
            }
            if (operation instanceof Txn) {
                return at + ": a transaction cannot contain a transaction";
            }
            if (!(owners.apply(operation.getClass()) instanceof Transactional owner)) {
                return at + ": a " + operation.getClass().getSimpleName() + " cannot be part of a transaction (only operations of "
                        + transactionalKinds() + ")";
            }
            String problem = owner.checkOperation(operation);
            if (problem != null) {
                return at + " (" + operation.getClass().getSimpleName() + "): " + problem;
            }
        }
        return null;
    }

    /** Each primitive admits its own operations, together, in the transaction's order; the refusal of the lowest index wins. */
    private Result.Rejected admit(List<Command> operations, String branch) {
        // Insertion-ordered: the primitives in the order their first operation comes (I8).
        Map<Primitive, List<Integer>> byOwner = new LinkedHashMap<>();
        for (int i = 0; i < operations.size(); i++) {
            byOwner.computeIfAbsent(owners.apply(operations.get(i).getClass()), p -> new ArrayList<>()).add(i);
        }
        int refusedAt = Integer.MAX_VALUE;
        Result.Rejected why = null;
        for (Map.Entry<Primitive, List<Integer>> e : byOwner.entrySet()) {
            List<Command> own = new ArrayList<>(e.getValue().size());
            e.getValue().forEach(i -> own.add(operations.get(i)));
            Transactional.Refusal refusal = ((Transactional) e.getKey()).admit(own);
            if (refusal != null && e.getValue().get(refusal.index()) < refusedAt) {
                refusedAt = e.getValue().get(refusal.index());
                why = refusal.why();
            }
        }
        if (why == null) {
            return null;
        }
        return new Result.Rejected(why.code(), branch + "[" + refusedAt + "] (" + operations.get(refusedAt).getClass().getSimpleName()
                + "): " + why.message());
    }

    private Primitive ofKind(String kind) {
        for (Primitive p : primitives) {
            if (p.kind().name().equals(kind)) {
                return p;
            }
        }
        return null;
    }

    private List<String> transactionalKinds() {
        return primitives.stream().filter(p -> p instanceof Transactional).map(p -> p.kind().name()).toList();
    }

    // ---- snapshot section ------------------------------------------------------------------------

    /** The remembered transactions, oldest first: request id and checksum, outcome, revision, and each operation's answer. */
    @Override
    public void writeSnapshot(DataOutputStream out) throws IOException {
        out.writeInt(recentRequests.size());
        for (Map.Entry<Request, TxnResult> e : recentRequests.entries().entrySet()) {
            TxnResult result = e.getValue();
            out.writeLong(e.getKey().requestId());
            out.writeInt(e.getKey().fingerprint());
            out.writeBoolean(result.succeeded());
            out.writeLong(result.revision());
            out.writeInt(result.operations().size());
            for (TxnResult.Done done : result.operations()) {
                out.writeLong(done.revision());
                out.writeBoolean(done.changed());
                out.writeLong(done.previous());
                out.writeLong(done.value());
            }
        }
    }

    /** Snapshots written before transactions have no section for them: nothing is remembered. */
    @Override
    public void readSnapshot(DataInputStream in, int formatVersion, Leases leases) throws IOException {
        if (formatVersion < 3) {
            return; // unframed: written long before transactions
        }
        int count = Wire.count(in, "transaction");
        for (int i = 0; i < count; i++) {
            long requestId = in.readLong();
            int fingerprint = in.readInt();
            boolean succeeded = in.readBoolean();
            long revision = in.readLong();
            int n = Wire.count(in, "transaction operation");
            if (requestId == 0 || n > MAX_OPERATIONS) {
                throw new SnapshotFormatException("snapshot is corrupt: remembered transaction " + requestId + " with " + n + " operations");
            }
            List<TxnResult.Done> done = new ArrayList<>(n);
            for (int j = 0; j < n; j++) {
                done.add(new TxnResult.Done(in.readLong(), in.readBoolean(), in.readLong(), in.readLong()));
            }
            recentRequests.remember(new Request(requestId, fingerprint), new TxnResult(succeeded, revision, done));
        }
    }
}
