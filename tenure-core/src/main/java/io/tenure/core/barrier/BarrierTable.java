package io.tenure.core.barrier;

import io.tenure.core.Limits;
import io.tenure.core.SnapshotFormatException;
import io.tenure.core.barrier.BarrierResult.Left;
import io.tenure.core.barrier.BarrierResult.NotYet;
import io.tenure.core.barrier.BarrierResult.Released;
import io.tenure.core.barrier.BarrierResult.Waiting;
import io.tenure.core.kernel.ApplyContext;
import io.tenure.core.kernel.Arrivals;
import io.tenure.core.kernel.Claim;
import io.tenure.core.kernel.Command;
import io.tenure.core.kernel.CommandType;
import io.tenure.core.kernel.EndedAcquires;
import io.tenure.core.kernel.GrantQueue;
import io.tenure.core.kernel.GrantRule;
import io.tenure.core.kernel.Hold;
import io.tenure.core.kernel.Lease;
import io.tenure.core.kernel.Leases;
import io.tenure.core.kernel.Names;
import io.tenure.core.kernel.Primitive;
import io.tenure.core.kernel.Result;
import io.tenure.core.kernel.Result.Code;
import io.tenure.core.kernel.Ties;
import io.tenure.core.kernel.WaitKey;
import io.tenure.core.kernel.Waiter;
import io.tenure.core.kernel.Wire;
import io.tenure.core.watch.KeyValue;
import io.tenure.core.watch.WatchEvent;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.SortedSet;
import java.util.TreeMap;

/**
 * Barriers: {@code parties} leases arrive at a name and are released together when the last one
 * arrives. A barrier is a grant queue whose rule admits nobody: its parties wait in arrival
 * order, and the last arrival releases them all in one command, each woken with the same
 * revision. The number of parties is fixed while anyone waits; a party whose lease ends leaves,
 * and so does one whose wait is withdrawn. Once released (or left by everyone) the barrier is
 * gone, and the next arrival starts a new round. Barriers have a namespace of their own
 * ({@link Names}, not the locks'): a barrier may have the name of a lock, a semaphore or an
 * election, as in seed 004, where barriers never clash with locks.
 *
 * <p>Watches see a PUT for every arrival (its lease; {@code version} is the parties arrived) and a
 * DELETE when the barrier releases or empties, each of kind {@value #NAME}.
 */
public final class BarrierTable implements Primitive {
    /** The most parties a barrier may have. */
    public static final int MAX_PARTIES = 100_000;
    private static final int MAX_FIELD_BYTES = 1 << 20;

    /** Its name: the kind of its waits and names, and its snapshot section. */
    public static final String NAME = "barrier";
    /** Its commands' log tags (never reuse one). */
    public static final Kind KIND = new Kind(NAME, List.of(
            new CommandType<>(21, BarrierAwait.class, (c, out) -> {
                Wire.writeString(out, c.key());
                out.writeLong(c.leaseId());
                out.writeInt(c.parties());
                out.writeBoolean(c.queue());
                out.writeLong(c.requestId());
            }, in -> new BarrierAwait(Wire.readString(in, MAX_FIELD_BYTES), in.readLong(), in.readInt(), in.readBoolean(), in.readLong())),
            new CommandType<>(22, BarrierCancel.class, (c, out) -> {
                Wire.writeString(out, c.key());
                out.writeLong(c.leaseId());
                out.writeLong(c.requestId());
            }, in -> new BarrierCancel(Wire.readString(in, MAX_FIELD_BYTES), in.readLong(), in.readLong()))));

    /** A party: its lease and the await that brought it (0 = none). */
    record Party(long leaseId, long requestId) implements Claim {}

    /** Nobody holds a barrier: every party waits until the round is complete. */
    private static final GrantRule<Party> NOBODY_HOLDS = new GrantRule<>() {
        @Override
        public boolean fits(Collection<Hold<Party>> holders, Party claim) {
            return false;
        }

        @Override
        public boolean mustFollow(Party earlier, Party later) {
            return true;
        }

        @Override
        public boolean conflicts(Party held, Party claim) {
            return true;
        }

        @Override
        public boolean strictlyFifo() {
            return true;
        }
    };

    private static final class Barrier {
        final String key;
        final int parties;
        final long createRevision;
        final GrantQueue<Party> queue;

        Barrier(String key, int parties, long createRevision, Ties ties) {
            this.key = key;
            this.parties = parties;
            this.createRevision = createRevision;
            this.queue = new GrantQueue<>(key, NOBODY_HOLDS, ties);
        }
    }

    private final Leases leases;
    private final Names names;
    private final TreeMap<String, Barrier> barriers = new TreeMap<>();
    private final Ties ties;
    private final EndedAcquires endedAwaits = new EndedAcquires();
    private final Arrivals arrivals;

    /** @param names the barriers' own namespace */
    public BarrierTable(Leases leases, Names names) {
        this.leases = leases;
        this.ties = new Ties(leases);
        this.names = names;
        this.arrivals = new Arrivals(NAME, names, endedAwaits);
    }

    @Override
    public Kind kind() {
        return KIND;
    }

    @Override
    public Result apply(ApplyContext context, Command command) {
        if (command instanceof BarrierAwait c) {
            return await(context, c);
        } else if (command instanceof BarrierCancel c) {
            return cancel(context, c);
        }
        throw new IllegalArgumentException("not a barrier command: " + command.getClass().getName());
    }

    private Result await(ApplyContext context, BarrierAwait c) {
        String problem = Limits.checkKey("name", c.key());
        if (problem == null) {
            problem = checkParties(c.parties());
        }
        Lease lease = leases.get(c.leaseId());
        Result.Rejected refused = arrivals.refusal(problem, lease, c.key(), c.leaseId(), c.requestId());
        if (refused != null) {
            return refused;
        }
        Barrier barrier = barriers.get(c.key());
        String otherParties = partiesMismatch(barrier, c.parties());
        if (otherParties != null) {
            return new Result.Rejected(Code.FAILED_PRECONDITION, otherParties);
        }
        if (barrier != null && barrier.queue.waiter(lease.id()) != null) {
            return new Waiting(c.key(), lease.id(), barrier.queue.waiterCount(), barrier.parties);
        }
        int arrived = (barrier == null ? 0 : barrier.queue.waiterCount()) + 1;
        if (arrived < c.parties() && !c.queue()) {
            return new NotYet(c.key(), arrived - 1, c.parties());
        }
        if (barrier == null) {
            barrier = new Barrier(c.key(), c.parties(), context.position(), ties);
            barriers.put(c.key(), barrier);
            names.take(c.key(), NAME);
        }
        barrier.queue.enqueue(new Party(lease.id(), c.requestId()), context.position());
        long arrival = context.stamp();
        context.emit(new WatchEvent(arrival, WatchEvent.Type.PUT, new KeyValue(barrier.key, lease.clientId(), new byte[0], lease.id(),
                barrier.createRevision, arrival, arrived), null, NAME));
        if (arrived < barrier.parties) {
            return new Waiting(c.key(), lease.id(), arrived, barrier.parties);
        }
        return release(context, barrier, lease.id());
    }

    /** The last party arrived: every party leaves the queue, released with one revision; the barrier is gone. */
    private Released release(ApplyContext context, Barrier barrier, long lastArrival) {
        long revision = context.stamp();
        for (Waiter<Party> party : List.copyOf(barrier.queue.waiters())) {
            barrier.queue.withdraw(party.leaseId());
            endedAwaits.ended(context, barrier.key, party.leaseId(), party.claim().requestId());
            if (party.leaseId() != lastArrival) {
                context.wake(new WaitKey(NAME, barrier.key, party.leaseId()), new Released(barrier.key, party.leaseId(), barrier.parties, revision));
            }
        }
        remove(context, barrier, revision);
        return new Released(barrier.key, lastArrival, barrier.parties, revision);
    }

    private Result cancel(ApplyContext context, BarrierCancel c) {
        String problem = Limits.checkKey("name", c.key());
        if (problem != null) {
            return new Result.Rejected(Code.INVALID_ARGUMENT, problem);
        }
        endedAwaits.ended(context, c.key(), c.leaseId(), c.requestId());
        Barrier barrier = barriers.get(c.key());
        if (barrier == null) {
            return new Left(c.key(), c.leaseId(), 0, 0);
        }
        Waiter<Party> left = barrier.queue.withdraw(c.leaseId());
        Left answer = new Left(c.key(), c.leaseId(), barrier.queue.waiterCount(), barrier.parties);
        if (left != null) {
            endedAwaits.ended(context, c.key(), c.leaseId(), left.claim().requestId());
            context.wake(new WaitKey(NAME, c.key(), c.leaseId()), answer);
            removeIfEmpty(context, barrier);
        }
        return answer;
    }

    @Override
    public void leaseEnded(ApplyContext context, long leaseId, List<String> released) {
        for (String key : List.copyOf(ties.waitedBy(leaseId))) {
            Barrier barrier = barriers.get(key);
            barrier.queue.withdraw(leaseId);
            context.wake(new WaitKey(NAME, key, leaseId), new Result.Rejected(Code.NOT_FOUND,
                    "lease " + leaseId + " ended (expired or revoked) while waiting at barrier '" + key + "'"));
            removeIfEmpty(context, barrier);
        }
    }

    private void removeIfEmpty(ApplyContext context, Barrier barrier) {
        if (barrier.queue.isEmpty()) {
            remove(context, barrier, context.stamp());
        }
    }

    private void remove(ApplyContext context, Barrier barrier, long revision) {
        barriers.remove(barrier.key);
        names.free(barrier.key, NAME);
        context.emit(new WatchEvent(revision, WatchEvent.Type.DELETE, KeyValue.deleted(barrier.key, revision), null, NAME));
    }

    /** Null when {@code parties} is 1 to {@value #MAX_PARTIES}, else a message naming the field. */
    public static String checkParties(int parties) {
        return parties >= 1 && parties <= MAX_PARTIES ? null : "parties must be between 1 and " + MAX_PARTIES + ", got " + parties;
    }

    private static String partiesMismatch(Barrier barrier, int parties) {
        if (barrier == null || barrier.parties == parties) {
            return null;
        }
        return "barrier '" + barrier.key + "' has " + barrier.parties + " parties, not " + parties
                + " (the number of parties is fixed while anyone waits at it)";
    }

    // ---- reads ---------------------------------------------------------------------------------

    @Override
    public SortedSet<String> waitedBy(long leaseId) {
        return ties.waitedBy(leaseId);
    }

    @Override
    public Ties ties() {
        return ties;
    }

    /** The barrier, or null when nobody waits at it. */
    public BarrierView barrier(String key) {
        Barrier barrier = barriers.get(key);
        return barrier == null ? null : view(barrier);
    }

    /** Barriers anyone waits at whose name starts with {@code prefix}, in name order, at most {@code limit}. */
    public List<BarrierView> barriers(String prefix, int limit) {
        return Ties.prefixed(barriers, prefix, limit, this::view);
    }

    public int barrierCount() {
        return barriers.size();
    }

    /** Leases waiting at barrier {@code key}. */
    public int waiting(String key) {
        Barrier barrier = barriers.get(key);
        return barrier == null ? 0 : barrier.queue.waiterCount();
    }

    /** Leases waiting, over every barrier. */
    public int waiting() {
        int waiting = 0;
        for (Barrier barrier : barriers.values()) {
            waiting += barrier.queue.waiterCount();
        }
        return waiting;
    }

    private BarrierView view(Barrier barrier) {
        List<BarrierView.Party> waiting = new ArrayList<>(barrier.queue.waiterCount());
        for (Waiter<Party> w : barrier.queue.waiters()) {
            waiting.add(new BarrierView.Party(w.leaseId(), leases.get(w.leaseId()).clientId(), w.joinedAt()));
        }
        return new BarrierView(barrier.key, barrier.parties, List.copyOf(waiting), barrier.createRevision);
    }

    // ---- snapshot section ------------------------------------------------------------------------

    /** Barriers by name (parties, creation, waiting parties in arrival order with their awaits), then the ended awaits. */
    @Override
    public void writeSnapshot(DataOutputStream out) throws IOException {
        out.writeInt(barriers.size());
        for (Barrier barrier : barriers.values()) {
            Wire.writeString(out, barrier.key);
            out.writeInt(barrier.parties);
            out.writeLong(barrier.createRevision);
            out.writeInt(barrier.queue.waiterCount());
            for (Waiter<Party> w : barrier.queue.waiters()) {
                out.writeLong(w.leaseId());
                out.writeLong(w.claim().requestId());
                out.writeLong(w.joinedAt());
            }
        }
        endedAwaits.write(out);
    }

    @Override
    public void readSnapshot(DataInputStream in, int formatVersion, Leases leases) throws IOException {
        if (formatVersion < 5) {
            return; // barriers came with format 5
        }
        int count = Wire.count(in, "barrier");
        for (int i = 0; i < count; i++) {
            String key = Wire.readString(in, Limits.MAX_METADATA_BYTES);
            int parties = in.readInt();
            Barrier barrier = new Barrier(key, parties, in.readLong(), ties);
            int waiting = Wire.count(in, "party");
            for (int w = 0; w < waiting; w++) {
                long lease = in.readLong();
                if (leases.get(lease) == null) {
                    throw new SnapshotFormatException("snapshot is corrupt: barrier '" + key + "' refers to unknown lease " + lease);
                }
                barrier.queue.enqueue(new Party(lease, in.readLong()), in.readLong());
            }
            if (waiting == 0 || waiting >= parties) {
                throw new SnapshotFormatException("snapshot is corrupt: barrier '" + key + "' has " + waiting + " of " + parties + " parties");
            }
            barriers.put(key, barrier);
            names.take(key, NAME);
        }
        endedAwaits.read(in);
    }
}
