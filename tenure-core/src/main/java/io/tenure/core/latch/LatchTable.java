package io.tenure.core.latch;

import io.tenure.core.Limits;
import io.tenure.core.SnapshotFormatException;
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
import io.tenure.core.kernel.RetryMemo;
import io.tenure.core.kernel.Ties;
import io.tenure.core.kernel.WaitKey;
import io.tenure.core.kernel.Waiter;
import io.tenure.core.kernel.Wire;
import io.tenure.core.latch.LatchResult.CountSet;
import io.tenure.core.latch.LatchResult.CountedDown;
import io.tenure.core.latch.LatchResult.Left;
import io.tenure.core.latch.LatchResult.NotYet;
import io.tenure.core.latch.LatchResult.Open;
import io.tenure.core.latch.LatchResult.Waiting;
import io.tenure.core.watch.KeyValue;
import io.tenure.core.watch.WatchEvent;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeMap;

/**
 * Count-down latches (Hazelcast CP's ICountDownLatch): a name with a count that
 * {@link LatchSetCount} sets when the latch does not exist, {@link LatchCountDown} lowers by one,
 * and leases wait at ({@link LatchAwait}) until it is zero. A latch exists while its count is
 * above zero; it is bound to no lease (whoever set it may go away). Its waiters are a grant queue
 * whose rule admits nobody: when the count reaches zero, one command releases every waiter, each
 * woken with the same revision, and the latch is gone, so memory holds only latches counting down
 * and who waits at them. A waiter whose lease ends, or whose wait is withdrawn, leaves; the count
 * is unchanged. Latches have a namespace of their own ({@link Names}): a latch may share its name with a lock or a barrier.
 *
 * <p>A set-count and a count-down that name their request are applied once: a retry of one (after
 * a lost answer, or a failover) gets the first copy's answer. The last {@value #RECENT_REQUESTS}
 * are remembered, and so are as many awaits released, whose retry is answered with the release.
 *
 * <p>Watches see a PUT when the count is set and at every count-down that leaves it above zero
 * (the value is the count in decimal; {@code version} the changes since it was set), and a DELETE
 * when it reaches zero.
 */
public final class LatchTable implements Primitive {
    /** The largest count a latch may be set to. */
    public static final int MAX_COUNT = 1_000_000;
    /** How many set-counts, count-downs and released awaits are remembered for their retries. */
    public static final int RECENT_REQUESTS = 16_384;
    private static final int MAX_FIELD_BYTES = 1 << 20;

    /** Its name: the kind of its waits and names, and its snapshot section. */
    public static final String NAME = "latch";
    /** Its commands' log tags (never reuse one). */
    public static final Kind KIND = new Kind(NAME, List.of(
            new CommandType<>(23, LatchSetCount.class, (c, out) -> {
                Wire.writeString(out, c.key());
                out.writeInt(c.count());
                out.writeLong(c.requestId());
            }, in -> new LatchSetCount(Wire.readString(in, MAX_FIELD_BYTES), in.readInt(), in.readLong())),
            new CommandType<>(24, LatchCountDown.class, (c, out) -> {
                Wire.writeString(out, c.key());
                out.writeLong(c.requestId());
            }, in -> new LatchCountDown(Wire.readString(in, MAX_FIELD_BYTES), in.readLong())),
            new CommandType<>(25, LatchAwait.class, (c, out) -> {
                Wire.writeString(out, c.key());
                out.writeLong(c.leaseId());
                out.writeBoolean(c.queue());
                out.writeLong(c.requestId());
            }, in -> new LatchAwait(Wire.readString(in, MAX_FIELD_BYTES), in.readLong(), in.readBoolean(), in.readLong())),
            new CommandType<>(26, LatchCancel.class, (c, out) -> {
                Wire.writeString(out, c.key());
                out.writeLong(c.leaseId());
                out.writeLong(c.requestId());
            }, in -> new LatchCancel(Wire.readString(in, MAX_FIELD_BYTES), in.readLong(), in.readLong()))));

    /** A waiter: its lease and the await that brought it (0 = none). */
    record Awaiting(long leaseId, long requestId) implements Claim {}

    /** Nobody holds a latch: every waiter waits until the count is zero. */
    private static final GrantRule<Awaiting> NOBODY_HOLDS = new GrantRule<>() {
        @Override
        public boolean fits(Collection<Hold<Awaiting>> holders, Awaiting claim) {
            return false;
        }

        @Override
        public boolean mustFollow(Awaiting earlier, Awaiting later) {
            return true;
        }

        @Override
        public boolean conflicts(Awaiting held, Awaiting claim) {
            return true;
        }

        @Override
        public boolean strictlyFifo() {
            return true;
        }
    };

    private static final class Latch {
        final String key;
        final int initialCount;
        final long createRevision;
        final GrantQueue<Awaiting> queue;
        int count;
        long modRevision;

        Latch(String key, int initialCount, long createRevision, Ties ties) {
            this.key = key;
            this.initialCount = initialCount;
            this.createRevision = createRevision;
            this.queue = new GrantQueue<>(key, NOBODY_HOLDS, ties);
            this.count = initialCount;
            this.modRevision = createRevision;
        }

        /** The changes since it was set: the set-count and each count-down. */
        long version() {
            return 1L + initialCount - count;
        }
    }

    /** A request of a client for a latch: a set-count, a count-down, or (with a lease) an await. */
    private record Request(String key, long leaseId, long requestId) {}

    private final Leases leases;
    private final Names names;
    private final TreeMap<String, Latch> latches = new TreeMap<>();
    private final Ties ties;
    private final EndedAcquires withdrawnAwaits = new EndedAcquires();
    private final Arrivals arrivals;
    /** Recent set-counts (lease 0, the count asked for) and count-downs (lease -1), with their answers. */
    private final RetryMemo<Request, Answer> recentRequests = new RetryMemo<>(RECENT_REQUESTS);
    /** Recent awaits released, with the revision of their release. */
    private final RetryMemo<Request, Long> releasedAwaits = new RetryMemo<>(RECENT_REQUESTS);

    /** A remembered answer: set (or applied) and the count answered, at {@code revision} (0 for a count-down). */
    private record Answer(boolean done, int count, long revision) {}

    private static final long SET_COUNT = 0;
    private static final long COUNT_DOWN = -1;

    public LatchTable(Leases leases, Names names) {
        this.leases = leases;
        this.ties = new Ties(leases);
        this.names = names;
        this.arrivals = new Arrivals(NAME, names, withdrawnAwaits);
    }

    @Override
    public Kind kind() {
        return KIND;
    }

    @Override
    public Result apply(ApplyContext context, Command command) {
        if (command instanceof LatchSetCount c) {
            return setCount(context, c);
        } else if (command instanceof LatchCountDown c) {
            return countDown(context, c);
        } else if (command instanceof LatchAwait c) {
            return await(context, c);
        } else if (command instanceof LatchCancel c) {
            return cancel(context, c);
        }
        throw new IllegalArgumentException("not a latch command: " + command.getClass().getName());
    }

    private Result setCount(ApplyContext context, LatchSetCount c) {
        String problem = Limits.checkKey("name", c.key());
        if (problem == null) {
            problem = checkCount(c.count());
        }
        if (problem != null) {
            return new Result.Rejected(Code.INVALID_ARGUMENT, problem);
        }
        String otherKind = names.mismatch(c.key(), NAME);
        if (otherKind != null) {
            return new Result.Rejected(Code.FAILED_PRECONDITION, otherKind);
        }
        Request request = new Request(c.key(), SET_COUNT, c.requestId());
        Answer before = c.requestId() == 0 ? null : recentRequests.recall(request);
        if (before != null) {
            return new CountSet(c.key(), before.done(), before.count(), before.revision());
        }
        Latch latch = latches.get(c.key());
        CountSet answer;
        if (latch != null) {
            answer = new CountSet(c.key(), false, latch.count, latch.modRevision);
        } else {
            long revision = context.stamp();
            latch = new Latch(c.key(), c.count(), revision, ties);
            latches.put(c.key(), latch);
            names.take(c.key(), NAME);
            put(context, latch, revision);
            answer = new CountSet(c.key(), true, c.count(), revision);
        }
        remember(request, new Answer(answer.set(), answer.count(), answer.revision()));
        return answer;
    }

    private Result countDown(ApplyContext context, LatchCountDown c) {
        String problem = Limits.checkKey("name", c.key());
        if (problem != null) {
            return new Result.Rejected(Code.INVALID_ARGUMENT, problem);
        }
        String otherKind = names.mismatch(c.key(), NAME);
        if (otherKind != null) {
            return new Result.Rejected(Code.FAILED_PRECONDITION, otherKind);
        }
        Request request = new Request(c.key(), COUNT_DOWN, c.requestId());
        Answer before = c.requestId() == 0 ? null : recentRequests.recall(request);
        if (before != null) {
            return new CountedDown(c.key(), before.count(), before.done());
        }
        Latch latch = latches.get(c.key());
        CountedDown answer;
        if (latch == null) {
            answer = new CountedDown(c.key(), 0, false);
        } else {
            latch.count--;
            long revision = context.stamp();
            latch.modRevision = revision;
            if (latch.count > 0) {
                put(context, latch, revision);
            } else {
                release(context, latch, revision);
            }
            answer = new CountedDown(c.key(), latch.count, true);
        }
        remember(request, new Answer(answer.applied(), answer.count(), 0));
        return answer;
    }

    private void remember(Request request, Answer answer) {
        if (request.requestId() != 0) {
            recentRequests.remember(request, answer);
        }
    }

    /** The count reached zero: every waiter leaves the queue, released with one revision; the latch is gone. */
    private void release(ApplyContext context, Latch latch, long revision) {
        for (Waiter<Awaiting> w : List.copyOf(latch.queue.waiters())) {
            latch.queue.withdraw(w.leaseId());
            if (w.claim().requestId() != 0) {
                releasedAwaits.remember(new Request(latch.key, w.leaseId(), w.claim().requestId()), revision);
            }
            context.wake(new WaitKey(NAME, latch.key, w.leaseId()), new Open(latch.key, w.leaseId(), revision));
        }
        latches.remove(latch.key);
        names.free(latch.key, NAME);
        context.emit(new WatchEvent(revision, WatchEvent.Type.DELETE, KeyValue.deleted(latch.key, revision), null, NAME));
    }

    private void put(ApplyContext context, Latch latch, long revision) {
        byte[] value = Integer.toString(latch.count).getBytes(StandardCharsets.US_ASCII);
        context.emit(new WatchEvent(revision, WatchEvent.Type.PUT, new KeyValue(latch.key, "", value, 0, latch.createRevision, revision,
                latch.version()), null, NAME));
    }

    private Result await(ApplyContext context, LatchAwait c) {
        Lease lease = leases.get(c.leaseId());
        Result.Rejected refused = arrivals.refusal(Limits.checkKey("name", c.key()), lease, c.key(), c.leaseId(), 0);
        if (refused != null) {
            return refused;
        }
        Long releasedAt = c.requestId() == 0 ? null : releasedAwaits.recall(new Request(c.key(), c.leaseId(), c.requestId()));
        if (releasedAt != null) {
            return new Open(c.key(), c.leaseId(), releasedAt);
        }
        Result.Rejected late = withdrawnAwaits.lateCopy(NAME, c.key(), c.leaseId(), c.requestId());
        if (late != null) {
            return late;
        }
        Latch latch = latches.get(c.key());
        if (latch == null) {
            return new Open(c.key(), c.leaseId(), 0);
        }
        if (latch.queue.waiter(lease.id()) != null) {
            return new Waiting(c.key(), lease.id(), latch.count);
        }
        if (!c.queue()) {
            return new NotYet(c.key(), latch.count);
        }
        latch.queue.enqueue(new Awaiting(lease.id(), c.requestId()), context.position());
        return new Waiting(c.key(), lease.id(), latch.count);
    }

    private Result cancel(ApplyContext context, LatchCancel c) {
        String problem = Limits.checkKey("name", c.key());
        if (problem != null) {
            return new Result.Rejected(Code.INVALID_ARGUMENT, problem);
        }
        if (releasedAwaits.recall(new Request(c.key(), c.leaseId(), c.requestId())) == null) {
            withdrawnAwaits.ended(context, c.key(), c.leaseId(), c.requestId());
        }
        Latch latch = latches.get(c.key());
        if (latch == null) {
            return new Left(c.key(), c.leaseId(), 0);
        }
        Waiter<Awaiting> left = latch.queue.withdraw(c.leaseId());
        Left answer = new Left(c.key(), c.leaseId(), latch.count);
        if (left != null) {
            withdrawnAwaits.ended(context, c.key(), c.leaseId(), left.claim().requestId());
            context.wake(new WaitKey(NAME, c.key(), c.leaseId()), answer);
        }
        return answer;
    }

    @Override
    public void leaseEnded(ApplyContext context, long leaseId, List<String> released) {
        for (String key : List.copyOf(ties.waitedBy(leaseId))) {
            Latch latch = latches.get(key);
            latch.queue.withdraw(leaseId);
            context.wake(new WaitKey(NAME, key, leaseId), new Result.Rejected(Code.NOT_FOUND,
                    "lease " + leaseId + " ended (expired or revoked) while waiting at latch '" + key + "'"));
        }
    }

    /** Null when {@code count} is 1 to {@value #MAX_COUNT}, else a message naming the field. */
    public static String checkCount(int count) {
        return count >= 1 && count <= MAX_COUNT ? null : "count must be between 1 and " + MAX_COUNT + ", got " + count;
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

    /** The latch, or null when it does not exist (its count is zero). */
    public LatchView latch(String key) {
        Latch latch = latches.get(key);
        return latch == null ? null : view(latch);
    }

    /** Latches whose name starts with {@code prefix}, in name order, at most {@code limit}. */
    public List<LatchView> latches(String prefix, int limit) {
        return Ties.prefixed(latches, prefix, limit, this::view);
    }

    /** The count of latch {@code key}: 0 when it does not exist. */
    public int count(String key) {
        Latch latch = latches.get(key);
        return latch == null ? 0 : latch.count;
    }

    public int latchCount() {
        return latches.size();
    }

    /** Leases waiting at latch {@code key}. */
    public int waiting(String key) {
        Latch latch = latches.get(key);
        return latch == null ? 0 : latch.queue.waiterCount();
    }

    /** Leases waiting, over every latch. */
    public int waiting() {
        int waiting = 0;
        for (Latch latch : latches.values()) {
            waiting += latch.queue.waiterCount();
        }
        return waiting;
    }

    private LatchView view(Latch latch) {
        List<LatchView.Waiter> waiting = new ArrayList<>(latch.queue.waiterCount());
        for (Waiter<Awaiting> w : latch.queue.waiters()) {
            waiting.add(new LatchView.Waiter(w.leaseId(), leases.get(w.leaseId()).clientId(), w.joinedAt()));
        }
        return new LatchView(latch.key, latch.count, latch.initialCount, List.copyOf(waiting), latch.createRevision, latch.modRevision);
    }

    // ---- snapshot section ------------------------------------------------------------------------

    /**
     * Latches by name (initial count, count, revisions, waiters in arrival order with their
     * awaits), then the withdrawn awaits, the recent set-counts and count-downs, and the released
     * awaits, each oldest first.
     */
    @Override
    public void writeSnapshot(DataOutputStream out) throws IOException {
        out.writeInt(latches.size());
        for (Latch latch : latches.values()) {
            Wire.writeString(out, latch.key);
            out.writeInt(latch.initialCount);
            out.writeInt(latch.count);
            out.writeLong(latch.createRevision);
            out.writeLong(latch.modRevision);
            out.writeInt(latch.queue.waiterCount());
            for (Waiter<Awaiting> w : latch.queue.waiters()) {
                out.writeLong(w.leaseId());
                out.writeLong(w.claim().requestId());
                out.writeLong(w.joinedAt());
            }
        }
        withdrawnAwaits.write(out);
        out.writeInt(recentRequests.size());
        for (Map.Entry<Request, Answer> e : recentRequests.entries().entrySet()) {
            Wire.writeString(out, e.getKey().key());
            out.writeLong(e.getKey().leaseId());
            out.writeLong(e.getKey().requestId());
            out.writeBoolean(e.getValue().done());
            out.writeInt(e.getValue().count());
            out.writeLong(e.getValue().revision());
        }
        out.writeInt(releasedAwaits.size());
        for (Map.Entry<Request, Long> e : releasedAwaits.entries().entrySet()) {
            Wire.writeString(out, e.getKey().key());
            out.writeLong(e.getKey().leaseId());
            out.writeLong(e.getKey().requestId());
            out.writeLong(e.getValue());
        }
    }

    /** Snapshots written before latches have no section for them, and the latches start empty. */
    @Override
    public void readSnapshot(DataInputStream in, int formatVersion, Leases leases) throws IOException {
        if (formatVersion < 3) {
            return; // unframed: written long before latches
        }
        int count = Wire.count(in, "latch");
        for (int i = 0; i < count; i++) {
            String key = Wire.readString(in, Limits.MAX_METADATA_BYTES);
            int initialCount = in.readInt();
            int current = in.readInt();
            Latch latch = new Latch(key, initialCount, in.readLong(), ties);
            latch.count = current;
            latch.modRevision = in.readLong();
            if (checkCount(initialCount) != null || current < 1 || current > initialCount) {
                throw new SnapshotFormatException("snapshot is corrupt: latch '" + key + "' has count " + current + " of " + initialCount);
            }
            int waiting = Wire.count(in, "latch waiter");
            for (int w = 0; w < waiting; w++) {
                long lease = in.readLong();
                if (leases.get(lease) == null) {
                    throw new SnapshotFormatException("snapshot is corrupt: latch '" + key + "' refers to unknown lease " + lease);
                }
                latch.queue.enqueue(new Awaiting(lease, in.readLong()), in.readLong());
            }
            latches.put(key, latch);
            names.take(key, NAME);
        }
        withdrawnAwaits.read(in);
        int requests = Wire.count(in, "latch request");
        for (int i = 0; i < requests; i++) {
            Request r = new Request(Wire.readString(in, Limits.MAX_METADATA_BYTES), in.readLong(), in.readLong());
            recentRequests.remember(r, new Answer(in.readBoolean(), in.readInt(), in.readLong()));
        }
        int released = Wire.count(in, "released latch await");
        for (int i = 0; i < released; i++) {
            Request r = new Request(Wire.readString(in, Limits.MAX_METADATA_BYTES), in.readLong(), in.readLong());
            releasedAwaits.remember(r, in.readLong());
        }
    }
}
