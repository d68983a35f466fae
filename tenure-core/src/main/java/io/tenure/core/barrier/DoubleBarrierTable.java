package io.tenure.core.barrier;

import io.tenure.core.Limits;
import io.tenure.core.SnapshotFormatException;
import io.tenure.core.barrier.DoubleBarrierResult.Entered;
import io.tenure.core.barrier.DoubleBarrierResult.Entering;
import io.tenure.core.barrier.DoubleBarrierResult.Leaving;
import io.tenure.core.barrier.DoubleBarrierResult.Left;
import io.tenure.core.barrier.DoubleBarrierResult.NotEntered;
import io.tenure.core.barrier.DoubleBarrierResult.NotLeft;
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
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Double barriers (Curator's DistributedDoubleBarrier): {@code parties} leases enter a name and
 * are let in together when the last of them enters; each then leaves, and the leavers are let go
 * together when the last party of that generation has left. Then the generation is over, and the
 * barrier is gone unless leases wait to enter the next one.
 *
 * <p>Two grant queues per name, neither of which grants by itself: {@code entering} holds the
 * parties inside (its holders, all with the generation's revision as their token) and queues the
 * leases waiting to enter, in arrival order; {@code leaving} holds the parties that have left
 * without waiting and queues those that wait for the others. A lease is in one place of one name
 * at a time, so its one {@link WaitKey} names its one wait, to enter or to leave.
 *
 * <ul>
 *   <li>An enter while a generation is inside waits for the next generation (the leases
 *       waiting then enter together, the first {@code parties} of them, once everyone inside has
 *       left); an enter by a party that has left and waits for the others is refused.</li>
 *   <li>A lease that ends leaves, in either phase: waiting to enter, its entry is withdrawn;
 *       inside, it counts as having left, so the others' leave completes without it.</li>
 *   <li>The number of parties is fixed while the barrier exists.</li>
 * </ul>
 *
 * <p>Watches see, on the name: a PUT {@code entering} for each lease that waits to enter (its
 * lease; {@code version} = leases waiting to enter), a PUT {@code in} when a generation enters
 * (the last entrant; {@code version} = parties), a PUT {@code leaving} for each party that leaves
 * ({@code version} = parties still inside), and when the last party has left, a DELETE, or, when
 * leases wait for the next generation, a PUT {@code out} ({@code version} = leases waiting to enter).
 */
public final class DoubleBarrierTable implements Primitive {
    /** The most parties a double barrier may have. */
    public static final int MAX_PARTIES = 1_000_000;
    private static final int MAX_FIELD_BYTES = 1 << 20;

    /** Its name: the kind of its waits and names, and its snapshot section. */
    public static final String NAME = "double barrier";
    /** Its commands' log tags (never reuse one; 30 is kept for the next). */
    public static final Kind KIND = new Kind(NAME, List.of(
            new CommandType<>(27, DoubleBarrierEnter.class, (c, out) -> {
                Wire.writeString(out, c.key());
                out.writeLong(c.leaseId());
                out.writeInt(c.parties());
                out.writeBoolean(c.queue());
                out.writeLong(c.requestId());
            }, in -> new DoubleBarrierEnter(Wire.readString(in, MAX_FIELD_BYTES), in.readLong(), in.readInt(), in.readBoolean(),
                    in.readLong())),
            new CommandType<>(28, DoubleBarrierLeave.class, (c, out) -> {
                Wire.writeString(out, c.key());
                out.writeLong(c.leaseId());
                out.writeBoolean(c.queue());
            }, in -> new DoubleBarrierLeave(Wire.readString(in, MAX_FIELD_BYTES), in.readLong(), in.readBoolean())),
            new CommandType<>(29, DoubleBarrierWithdraw.class, (c, out) -> {
                Wire.writeString(out, c.key());
                out.writeLong(c.leaseId());
                out.writeLong(c.requestId());
            }, in -> new DoubleBarrierWithdraw(Wire.readString(in, MAX_FIELD_BYTES), in.readLong(), in.readLong()))));

    /** A party: its lease and the enter that brought it (0 = none). */
    record Party(long leaseId, long requestId) implements Claim {}

    /** Neither queue grants by itself: the table moves parties in and out. */
    private static final GrantRule<Party> NOBODY_FITS = new GrantRule<>() {
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

    private static final class DoubleBarrier {
        final String key;
        final int parties;
        final long createRevision;
        /** Holders: the parties inside; waiters: the leases waiting to enter. */
        final GrantQueue<Party> entering;
        /** Holders: the parties that left and do not wait; waiters: those that left and wait for the rest. */
        final GrantQueue<Party> leaving;
        /** The revision at which the generation inside entered; 0 when none is inside. */
        long revision;

        DoubleBarrier(String key, int parties, long createRevision, Ties ties) {
            this.key = key;
            this.parties = parties;
            this.createRevision = createRevision;
            this.entering = new GrantQueue<>(key, NOBODY_FITS, ties);
            this.leaving = new GrantQueue<>(key, NOBODY_FITS, ties);
        }

        int inside() {
            return entering.holders().size();
        }
    }

    private final Leases leases;
    private final Names names;
    private final TreeMap<String, DoubleBarrier> barriers = new TreeMap<>();
    private final Ties ties;
    private final EndedAcquires endedEnters = new EndedAcquires();
    private final Arrivals arrivals;

    public DoubleBarrierTable(Leases leases, Names names) {
        this.leases = leases;
        this.ties = new Ties(leases);
        this.names = names;
        this.arrivals = new Arrivals(NAME, names, endedEnters);
    }

    @Override
    public Kind kind() {
        return KIND;
    }

    @Override
    public Result apply(ApplyContext context, Command command) {
        if (command instanceof DoubleBarrierEnter c) {
            return enter(context, c);
        } else if (command instanceof DoubleBarrierLeave c) {
            return leave(context, c);
        } else if (command instanceof DoubleBarrierWithdraw c) {
            return withdraw(context, c);
        }
        throw new IllegalArgumentException("not a double barrier command: " + command.getClass().getName());
    }

    // ---- enter ---------------------------------------------------------------------------------

    private Result enter(ApplyContext context, DoubleBarrierEnter c) {
        String problem = Limits.checkKey("name", c.key());
        if (problem == null) {
            problem = checkParties(c.parties());
        }
        Lease lease = leases.get(c.leaseId());
        Result.Rejected refused = arrivals.refusal(problem, lease, c.key(), c.leaseId(), c.requestId());
        if (refused != null) {
            return refused;
        }
        DoubleBarrier barrier = barriers.get(c.key());
        String otherParties = partiesMismatch(barrier, c.parties());
        if (otherParties != null) {
            return new Result.Rejected(Code.FAILED_PRECONDITION, otherParties);
        }
        if (barrier != null) {
            if (barrier.entering.holder(lease.id()) != null) {
                return new Entered(barrier.key, lease.id(), barrier.parties, barrier.revision);
            }
            if (barrier.entering.waiter(lease.id()) != null) {
                return entering(barrier, lease.id());
            }
            if (barrier.leaving.waiter(lease.id()) != null) {
                return new Result.Rejected(Code.FAILED_PRECONDITION, "lease " + lease.id() + " has left double barrier '" + barrier.key
                        + "' and waits for the other parties to leave; it may enter again once every party has left");
            }
        }
        boolean inside = barrier != null && barrier.revision != 0;
        int entrants = (barrier == null ? 0 : barrier.entering.waiterCount()) + 1;
        if (!c.queue() && (inside || entrants < c.parties())) {
            return new NotEntered(c.key(), lease.id(), entrants - 1, c.parties());
        }
        if (barrier == null) {
            barrier = new DoubleBarrier(c.key(), c.parties(), context.position(), ties);
            barriers.put(c.key(), barrier);
            names.take(c.key(), NAME);
        }
        barrier.entering.enqueue(new Party(lease.id(), c.requestId()), context.position());
        long arrival = context.stamp();
        emit(context, barrier, arrival, "entering", lease.id(), entrants);
        if (inside || entrants < barrier.parties) {
            return entering(barrier, lease.id());
        }
        return letIn(context, barrier, lease.id());
    }

    private Entering entering(DoubleBarrier barrier, long leaseId) {
        return new Entering(barrier.key, leaseId, barrier.entering.waiterCount(), barrier.inside(), barrier.parties);
    }

    /**
     * The first {@code parties} leases waiting to enter go in together, with one revision; all are
     * woken but {@code caller}, whose command answers it. The caller checked they are enough and
     * that no generation is inside.
     */
    private Entered letIn(ApplyContext context, DoubleBarrier barrier, long caller) {
        long revision = context.stamp();
        barrier.revision = revision;
        long last = 0;
        for (Waiter<Party> party : List.copyOf(barrier.entering.waiters()).subList(0, barrier.parties)) {
            barrier.entering.withdraw(party.leaseId());
            barrier.entering.hold(party.claim(), revision);
            last = party.leaseId();
            if (party.leaseId() != caller) {
                context.wake(wait(barrier.key, party.leaseId()), new Entered(barrier.key, party.leaseId(), barrier.parties, revision));
            }
        }
        emit(context, barrier, revision, "in", last, barrier.parties);
        return new Entered(barrier.key, caller, barrier.parties, revision);
    }

    /** Withdraws the lease's wait to enter (it was queued), ending its enter request, and answers its wait with {@code answer}. */
    private void withdrawEntry(ApplyContext context, DoubleBarrier barrier, long leaseId, Result answer) {
        Waiter<Party> entry = barrier.entering.withdraw(leaseId);
        endedEnters.ended(context, barrier.key, leaseId, entry.claim().requestId());
        context.wake(wait(barrier.key, leaseId), answer);
    }

    private Result withdraw(ApplyContext context, DoubleBarrierWithdraw c) {
        String problem = Limits.checkKey("name", c.key());
        if (problem != null) {
            return new Result.Rejected(Code.INVALID_ARGUMENT, problem);
        }
        DoubleBarrier barrier = barriers.get(c.key());
        if (barrier != null && (barrier.entering.holder(c.leaseId()) != null || barrier.leaving.holder(c.leaseId()) != null
                || barrier.leaving.waiter(c.leaseId()) != null)) {
            // Let in before the withdrawal: the enter succeeded, and the party stays.
            return new Entered(barrier.key, c.leaseId(), barrier.parties, barrier.revision);
        }
        endedEnters.ended(context, c.key(), c.leaseId(), c.requestId());
        if (barrier == null) {
            return new NotEntered(c.key(), c.leaseId(), 0, 0);
        }
        if (barrier.entering.waiter(c.leaseId()) == null) {
            return new NotEntered(c.key(), c.leaseId(), barrier.entering.waiterCount(), barrier.parties);
        }
        NotEntered answer = new NotEntered(c.key(), c.leaseId(), barrier.entering.waiterCount() - 1, barrier.parties);
        withdrawEntry(context, barrier, c.leaseId(), answer);
        removeIfEmpty(context, barrier);
        return answer;
    }

    // ---- leave ---------------------------------------------------------------------------------

    private Result leave(ApplyContext context, DoubleBarrierLeave c) {
        String problem = Limits.checkKey("name", c.key());
        if (problem != null) {
            return new Result.Rejected(Code.INVALID_ARGUMENT, problem);
        }
        if (leases.get(c.leaseId()) == null) {
            return new Result.Rejected(Code.NOT_FOUND, Leases.notFound(c.leaseId()));
        }
        String otherKind = names.mismatch(c.key(), NAME);
        if (otherKind != null) {
            return new Result.Rejected(Code.FAILED_PRECONDITION, otherKind);
        }
        DoubleBarrier barrier = barriers.get(c.key());
        if (barrier == null) {
            return new Left(c.key(), c.leaseId(), 0, 0);
        }
        long leaseId = c.leaseId();
        if (barrier.entering.waiter(leaseId) != null) {
            withdrawEntry(context, barrier, leaseId, new NotEntered(barrier.key, leaseId, barrier.entering.waiterCount() - 1, barrier.parties));
        }
        Hold<Party> inside = barrier.entering.release(leaseId);
        if (inside != null) {
            endedEnters.ended(context, barrier.key, leaseId, inside.claim().requestId());
            barrier.leaving.hold(inside.claim(), context.position());
            emit(context, barrier, context.stamp(), "leaving", leaseId, barrier.inside());
            if (barrier.inside() == 0) {
                return letGo(context, barrier, leaseId);
            }
        }
        Waiter<Party> waiting = barrier.leaving.waiter(leaseId);
        Hold<Party> left = barrier.leaving.holder(leaseId);
        if (waiting == null && left == null) {
            removeIfEmpty(context, barrier);
            return new Left(barrier.key, leaseId, barrier.parties, 0); // no party: nothing to wait for
        }
        if (c.queue()) {
            if (left != null) {
                barrier.leaving.release(leaseId);
                barrier.leaving.enqueue(left.claim(), context.position());
            }
            return new Leaving(barrier.key, leaseId, barrier.inside(), barrier.parties);
        }
        NotLeft answer = new NotLeft(barrier.key, leaseId, barrier.inside(), barrier.parties);
        if (waiting != null) {
            // Stops waiting (a timed-out leave): the party has left all the same.
            barrier.leaving.withdraw(leaseId);
            barrier.leaving.hold(waiting.claim(), waiting.joinedAt());
            context.wake(wait(barrier.key, leaseId), answer);
        }
        return answer;
    }

    /**
     * The last party left: every party that waits for the others is let go with one revision
     * (all woken but {@code caller}), and the generation is over. The barrier is gone, unless
     * leases wait to enter the next generation, which enters at once when they are enough.
     */
    private Left letGo(ApplyContext context, DoubleBarrier barrier, long caller) {
        long revision = context.stamp();
        for (Waiter<Party> party : List.copyOf(barrier.leaving.waiters())) {
            barrier.leaving.withdraw(party.leaseId());
            if (party.leaseId() != caller) {
                context.wake(wait(barrier.key, party.leaseId()), new Left(barrier.key, party.leaseId(), barrier.parties, revision));
            }
        }
        for (Hold<Party> party : List.copyOf(barrier.leaving.holders())) {
            barrier.leaving.release(party.leaseId());
        }
        barrier.revision = 0;
        if (barrier.entering.waiterCount() == 0) {
            remove(context, barrier, revision);
        } else {
            emit(context, barrier, revision, "out", barrier.entering.waiters().iterator().next().leaseId(), barrier.entering.waiterCount());
            if (barrier.entering.waiterCount() >= barrier.parties) {
                letIn(context, barrier, 0);
            }
        }
        return new Left(barrier.key, caller, barrier.parties, revision);
    }

    // ---- a lease's end -------------------------------------------------------------------------

    @Override
    public void leaseEnded(ApplyContext context, long leaseId, List<String> released) {
        TreeSet<String> keys = new TreeSet<>(ties.heldBy(leaseId));
        keys.addAll(ties.waitedBy(leaseId));
        for (String key : keys) {
            DoubleBarrier barrier = barriers.get(key);
            if (barrier.entering.waiter(leaseId) != null) {
                withdrawEntry(context, barrier, leaseId, ended(leaseId, "waiting to enter", key));
            }
            if (barrier.leaving.withdraw(leaseId) != null) {
                context.wake(wait(key, leaseId), ended(leaseId, "waiting for the other parties to leave", key));
            }
            barrier.leaving.release(leaseId);
            if (barrier.entering.release(leaseId) != null) {
                released.add(key);
                emit(context, barrier, context.stamp(), "leaving", leaseId, barrier.inside());
                if (barrier.inside() == 0) {
                    letGo(context, barrier, 0);
                    continue;
                }
            }
            removeIfEmpty(context, barrier);
        }
    }

    private static Result.Rejected ended(long leaseId, String doing, String key) {
        return new Result.Rejected(Code.NOT_FOUND, "lease " + leaseId + " ended (expired or revoked) while " + doing
                + " at double barrier '" + key + "'");
    }

    // ---- helpers -------------------------------------------------------------------------------

    private static WaitKey wait(String key, long leaseId) {
        return new WaitKey(NAME, key, leaseId);
    }

    private static void emit(ApplyContext context, DoubleBarrier barrier, long revision, String phase, long leaseId, int version) {
        Lease lease = context.leases().get(leaseId);
        context.emit(new WatchEvent(revision, WatchEvent.Type.PUT, new KeyValue(barrier.key, lease == null ? "" : lease.clientId(),
                phase.getBytes(StandardCharsets.UTF_8), leaseId, barrier.createRevision, revision, version), null, NAME));
    }

    private void removeIfEmpty(ApplyContext context, DoubleBarrier barrier) {
        if (barrier.revision == 0 && barrier.entering.isEmpty()) {
            remove(context, barrier, context.stamp());
        }
    }

    private void remove(ApplyContext context, DoubleBarrier barrier, long revision) {
        barriers.remove(barrier.key);
        names.free(barrier.key, NAME);
        context.emit(new WatchEvent(revision, WatchEvent.Type.DELETE, KeyValue.deleted(barrier.key, revision), null, NAME));
    }

    /** Null when {@code parties} is 1 to {@value #MAX_PARTIES}, else a message naming the field. */
    public static String checkParties(int parties) {
        return parties >= 1 && parties <= MAX_PARTIES ? null : "parties must be between 1 and " + MAX_PARTIES + ", got " + parties;
    }

    private static String partiesMismatch(DoubleBarrier barrier, int parties) {
        if (barrier == null || barrier.parties == parties) {
            return null;
        }
        return "parties: double barrier '" + barrier.key + "' has " + barrier.parties + " parties, not " + parties
                + " (the number of parties is fixed while the double barrier exists)";
    }

    // ---- reads ---------------------------------------------------------------------------------

    /** The names where the lease is inside, or has left and does not wait, sorted. */
    @Override
    public SortedSet<String> heldBy(long leaseId) {
        return ties.heldBy(leaseId);
    }

    /** The names where the lease waits to enter, or to be let go, sorted. */
    @Override
    public SortedSet<String> waitedBy(long leaseId) {
        return ties.waitedBy(leaseId);
    }

    @Override
    public Ties ties() {
        return ties;
    }

    /** The double barrier, or null when it does not exist. */
    public DoubleBarrierView barrier(String key) {
        DoubleBarrier barrier = barriers.get(key);
        return barrier == null ? null : view(barrier);
    }

    /** Double barriers whose name starts with {@code prefix}, in name order, at most {@code limit}. */
    public List<DoubleBarrierView> barriers(String prefix, int limit) {
        return Ties.prefixed(barriers, prefix, limit, this::view);
    }

    public int barrierCount() {
        return barriers.size();
    }

    /** Leases waiting to enter double barrier {@code key}. */
    public int entering(String key) {
        DoubleBarrier barrier = barriers.get(key);
        return barrier == null ? 0 : barrier.entering.waiterCount();
    }

    /** Parties of double barrier {@code key} that have left and wait for the others. */
    public int leaving(String key) {
        DoubleBarrier barrier = barriers.get(key);
        return barrier == null ? 0 : barrier.leaving.waiterCount();
    }

    /** Parties inside, over every double barrier. */
    public int inside() {
        int inside = 0;
        for (DoubleBarrier barrier : barriers.values()) {
            inside += barrier.inside();
        }
        return inside;
    }

    /** Leases waiting to enter or to be let go, over every double barrier. */
    public int waiting() {
        int waiting = 0;
        for (DoubleBarrier barrier : barriers.values()) {
            waiting += barrier.entering.waiterCount() + barrier.leaving.waiterCount();
        }
        return waiting;
    }

    private DoubleBarrierView view(DoubleBarrier barrier) {
        List<DoubleBarrierView.Party> entering = new ArrayList<>(barrier.entering.waiterCount());
        for (Waiter<Party> w : barrier.entering.waiters()) {
            entering.add(party(w.leaseId(), w.joinedAt()));
        }
        List<DoubleBarrierView.Party> inside = new ArrayList<>(barrier.inside());
        for (Hold<Party> h : barrier.entering.holders()) {
            inside.add(party(h.leaseId(), h.token()));
        }
        List<DoubleBarrierView.Party> leaving = new ArrayList<>(barrier.leaving.waiterCount());
        for (Waiter<Party> w : barrier.leaving.waiters()) {
            leaving.add(party(w.leaseId(), w.joinedAt()));
        }
        List<DoubleBarrierView.Party> left = new ArrayList<>(barrier.leaving.holders().size());
        for (Hold<Party> h : barrier.leaving.holders()) {
            left.add(party(h.leaseId(), h.token()));
        }
        return new DoubleBarrierView(barrier.key, barrier.parties, List.copyOf(entering), List.copyOf(inside), List.copyOf(leaving),
                List.copyOf(left), barrier.revision, barrier.createRevision);
    }

    private DoubleBarrierView.Party party(long leaseId, long at) {
        return new DoubleBarrierView.Party(leaseId, leases.get(leaseId).clientId(), at);
    }

    // ---- snapshot section ------------------------------------------------------------------------

    /**
     * Double barriers by name (parties, creation, the generation's revision, then the leases
     * waiting to enter, the parties inside, those that left and wait, those that left and do not,
     * each in order with its enter's request id and its position), then the ended enters.
     */
    @Override
    public void writeSnapshot(DataOutputStream out) throws IOException {
        out.writeInt(barriers.size());
        for (DoubleBarrier barrier : barriers.values()) {
            Wire.writeString(out, barrier.key);
            out.writeInt(barrier.parties);
            out.writeLong(barrier.createRevision);
            out.writeLong(barrier.revision);
            writeWaiters(out, barrier.entering.waiters());
            writeHolders(out, barrier.entering.holders());
            writeWaiters(out, barrier.leaving.waiters());
            writeHolders(out, barrier.leaving.holders());
        }
        endedEnters.write(out);
    }

    private static void writeWaiters(DataOutputStream out, Collection<Waiter<Party>> waiters) throws IOException {
        out.writeInt(waiters.size());
        for (Waiter<Party> w : waiters) {
            out.writeLong(w.leaseId());
            out.writeLong(w.claim().requestId());
            out.writeLong(w.joinedAt());
        }
    }

    private static void writeHolders(DataOutputStream out, Collection<Hold<Party>> holders) throws IOException {
        out.writeInt(holders.size());
        for (Hold<Party> h : holders) {
            out.writeLong(h.leaseId());
            out.writeLong(h.claim().requestId());
            out.writeLong(h.token());
        }
    }

    @Override
    public void readSnapshot(DataInputStream in, int formatVersion, Leases leases) throws IOException {
        if (formatVersion < 5) {
            return; // double barriers came after format 5, in a section of their own
        }
        int count = Wire.count(in, "double barrier");
        for (int i = 0; i < count; i++) {
            String key = Wire.readString(in, Limits.MAX_METADATA_BYTES);
            int parties = in.readInt();
            DoubleBarrier barrier = new DoubleBarrier(key, parties, in.readLong(), ties);
            barrier.revision = in.readLong();
            int entering = readParties(in, leases, key, false, barrier.entering);
            int inside = readParties(in, leases, key, true, barrier.entering);
            int leaving = readParties(in, leases, key, false, barrier.leaving);
            int left = readParties(in, leases, key, true, barrier.leaving);
            boolean generation = barrier.revision != 0;
            if (checkParties(parties) != null || (generation ? inside == 0 || inside + leaving + left > parties
                    : entering == 0 || entering >= parties || inside + leaving + left > 0)) {
                throw new SnapshotFormatException("snapshot is corrupt: double barrier '" + key + "' of " + parties + " parties has "
                        + entering + " entering, " + inside + " inside and " + (leaving + left) + " left");
            }
            barriers.put(key, barrier);
            names.take(key, NAME);
        }
        endedEnters.read(in);
    }

    private static int readParties(DataInputStream in, Leases leases, String key, boolean holders, GrantQueue<Party> queue) throws IOException {
        int count = Wire.count(in, "party");
        for (int i = 0; i < count; i++) {
            long lease = in.readLong();
            if (leases.get(lease) == null) {
                throw new SnapshotFormatException("snapshot is corrupt: double barrier '" + key + "' refers to unknown lease " + lease);
            }
            Party party = new Party(lease, in.readLong());
            if (holders) {
                queue.hold(party, in.readLong());
            } else {
                queue.enqueue(party, in.readLong());
            }
        }
        return count;
    }
}
