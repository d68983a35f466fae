package io.tenure.core.list;

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
import io.tenure.core.list.ListResult.Empty;
import io.tenure.core.list.ListResult.Left;
import io.tenure.core.list.ListResult.Popped;
import io.tenure.core.list.ListResult.Pushed;
import io.tenure.core.list.ListResult.Returned;
import io.tenure.core.list.ListResult.Waiting;
import io.tenure.core.watch.KeyValue;
import io.tenure.core.watch.WatchEvent;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeMap;

/**
 * Lists and queues (Redis's lists, Redisson's RBlockingQueue, Curator's DistributedQueue,
 * dflockd's {@code lpush}/{@code blpop}): a name with items pushed and popped at either end. A pop
 * may wait, bound to a lease, for the next push when the list is empty: the waiters are a grant
 * queue whose rule admits nobody, served in arrival order, and a push while anyone waits hands the
 * item to the first waiter directly (so a list with waiters is always empty). An item goes to
 * exactly one pop. A popped item whose answer cannot be delivered comes back with
 * {@link ListReturn}: to the next waiter, or to the end it was popped from.
 *
 * <p>A list exists while it has items or waiters and goes at once when it has neither: memory
 * holds only lists in use. Lists have a namespace of their own. A push, a pop and a return that
 * name their request are applied once: a retry gets the first copy's answer (a pop's, its item),
 * among the last {@value #RECENT_REQUESTS} of each.
 *
 * <p>Watches see a PUT at every push and pop that leaves the list with items (the value of a push
 * is the item pushed, empty for a pop; {@code version} is the length), and a DELETE when it is empty.
 */
public final class ListTable implements Primitive {
    /** The most items one list holds. */
    public static final int MAX_LENGTH = 100_000;
    /** The largest item, in bytes. */
    public static final int MAX_VALUE_BYTES = 16 * 1024;
    /** How many pushes, and how many pops, are remembered with their answers for their retries. */
    public static final int RECENT_REQUESTS = 8_192;
    private static final int MAX_FIELD_BYTES = 1 << 20;

    /** Its name: the kind of its waits and names, and its snapshot section. */
    public static final String NAME = "list";
    /** Its commands' log tags (never reuse one). */
    public static final Kind KIND = new Kind(NAME, List.of(
            new CommandType<>(50, ListPush.class, (c, out) -> {
                Wire.writeString(out, c.key());
                Wire.writeBytes(out, c.value());
                out.writeBoolean(c.left());
                out.writeLong(c.requestId());
            }, in -> new ListPush(Wire.readString(in, MAX_FIELD_BYTES), Wire.readBytes(in, MAX_FIELD_BYTES), in.readBoolean(), in.readLong())),
            new CommandType<>(51, ListPop.class, (c, out) -> {
                Wire.writeString(out, c.key());
                out.writeBoolean(c.left());
                out.writeLong(c.leaseId());
                out.writeBoolean(c.queue());
                out.writeLong(c.requestId());
            }, in -> new ListPop(Wire.readString(in, MAX_FIELD_BYTES), in.readBoolean(), in.readLong(), in.readBoolean(), in.readLong())),
            new CommandType<>(52, ListCancel.class, (c, out) -> {
                Wire.writeString(out, c.key());
                out.writeLong(c.leaseId());
                out.writeLong(c.requestId());
            }, in -> new ListCancel(Wire.readString(in, MAX_FIELD_BYTES), in.readLong(), in.readLong())),
            new CommandType<>(53, ListReturn.class, (c, out) -> {
                Wire.writeString(out, c.key());
                Wire.writeBytes(out, c.value());
                out.writeBoolean(c.left());
                out.writeLong(c.requestId());
            }, in -> new ListReturn(Wire.readString(in, MAX_FIELD_BYTES), Wire.readBytes(in, MAX_FIELD_BYTES), in.readBoolean(), in.readLong())),
            new CommandType<>(54, ListAbandon.class, (c, out) -> {
                Wire.writeString(out, c.key());
                out.writeLong(c.leaseId());
                out.writeLong(c.requestId());
            }, in -> new ListAbandon(Wire.readString(in, MAX_FIELD_BYTES), in.readLong(), in.readLong())),
            new CommandType<>(55, ListWithdraw.class, (c, out) -> {
                Wire.writeString(out, c.key());
                out.writeLong(c.leaseId());
                out.writeLong(c.requestId());
            }, in -> new ListWithdraw(Wire.readString(in, MAX_FIELD_BYTES), in.readLong(), in.readLong()))));

    /** A waiter: its lease, the pop that brought it (0 = none), and the end it pops from. */
    record Popping(long leaseId, long requestId, boolean left) implements Claim {}

    /** Nobody holds a list: every waiter waits for a push, first come first served. */
    private static final GrantRule<Popping> NOBODY_HOLDS = new GrantRule<>() {
        @Override
        public boolean fits(Collection<Hold<Popping>> holders, Popping claim) {
            return false;
        }

        @Override
        public boolean mustFollow(Popping earlier, Popping later) {
            return true;
        }

        @Override
        public boolean conflicts(Popping held, Popping claim) {
            return true;
        }

        @Override
        public boolean strictlyFifo() {
            return true;
        }
    };

    private static final class ItemList {
        final String key;
        final ArrayDeque<byte[]> items = new ArrayDeque<>();
        final GrantQueue<Popping> waiters;
        final long createRevision;
        long modRevision;

        ItemList(String key, long createRevision, Ties ties) {
            this.key = key;
            this.createRevision = createRevision;
            this.modRevision = createRevision;
            this.waiters = new GrantQueue<>(key, NOBODY_HOLDS, ties);
        }

        boolean unused() {
            return items.isEmpty() && waiters.waiterCount() == 0;
        }
    }

    /** One request of one client: a retry names the same. */
    private record Request(String key, long requestId) {}

    /** A pop's item as answered, and what became of that answer since. */
    private record PopMemo(Popped popped, byte state) {}

    /** The pop's answer went out once (its call may not have got it). */
    private static final byte ANSWERED = 0;
    /** A retry of the pop was answered with the item too: the caller has it, and it is never given back. */
    private static final byte ANSWERED_AGAIN = 1;
    /** The item was given back ({@link ListReturn}): a retry of the pop pops afresh. */
    private static final byte RETURNED = 2;

    private final Leases leases;
    private final Names names;
    private final TreeMap<String, ItemList> lists = new TreeMap<>();
    private final Ties ties;
    private final EndedAcquires withdrawnPops = new EndedAcquires();
    private final Arrivals arrivals;
    private final RetryMemo<Request, Pushed> recentPushes = new RetryMemo<>(RECENT_REQUESTS);
    /** Recent pops that got an item (at once, or handed by a push or a return), with what became of their answers. */
    private final RetryMemo<Request, PopMemo> recentPops = new RetryMemo<>(RECENT_REQUESTS);
    private long items;

    /** @param names the lists' own namespace ({@link Names#newNamespace}) */
    public ListTable(Leases leases, Names names) {
        this.leases = leases;
        this.ties = new Ties(leases);
        this.names = names;
        this.arrivals = new Arrivals(NAME, names, withdrawnPops);
    }

    @Override
    public Kind kind() {
        return KIND;
    }

    @Override
    public Result apply(ApplyContext context, Command command) {
        if (command instanceof ListPush c) {
            return push(context, c);
        } else if (command instanceof ListPop c) {
            return pop(context, c);
        } else if (command instanceof ListCancel c) {
            return cancel(context, c);
        } else if (command instanceof ListReturn c) {
            return giveBack(context, c);
        } else if (command instanceof ListAbandon c) {
            return abandon(context, c);
        } else if (command instanceof ListWithdraw c) {
            return withdraw(context, c);
        }
        throw new IllegalArgumentException("not a list command: " + command.getClass().getName());
    }

    /** Null when {@code value} is at most {@value #MAX_VALUE_BYTES} bytes, else a message naming the field. */
    public static String checkValue(byte[] value) {
        int size = value == null ? 0 : value.length;
        return size <= MAX_VALUE_BYTES ? null : "value must be at most " + MAX_VALUE_BYTES + " bytes, got " + size;
    }

    private Result push(ApplyContext context, ListPush c) {
        String problem = Limits.checkKey("name", c.key());
        if (problem == null) {
            problem = checkValue(c.value());
        }
        if (problem != null) {
            return new Result.Rejected(Code.INVALID_ARGUMENT, problem);
        }
        Request request = new Request(c.key(), c.requestId());
        Pushed before = c.requestId() == 0 ? null : recentPushes.recall(request);
        if (before != null) {
            return before;
        }
        ItemList list = lists.get(c.key());
        if (list != null && list.items.size() >= MAX_LENGTH) {
            // Not remembered: nothing changed, and a retry is refused the same way while the list stays full.
            return new Result.Rejected(Code.FAILED_PRECONDITION, "list '" + c.key() + "' is full: it holds " + MAX_LENGTH
                    + " items, the most a list holds; pop some first");
        }
        long revision = context.stamp();
        if (list == null) {
            list = create(c.key(), revision);
        }
        long handedTo = offer(context, list, c.value(), c.left(), revision);
        Pushed pushed = new Pushed(c.key(), list.items.size(), revision, handedTo);
        if (c.requestId() != 0) {
            recentPushes.remember(request, pushed);
        }
        return pushed;
    }

    /**
     * The value goes to the first waiter, if any (returned: its lease), else into the list at
     * {@code left} or the right end (returned: 0). Emits the watch event.
     */
    private long offer(ApplyContext context, ItemList list, byte[] value, boolean left, long revision) {
        list.modRevision = revision;
        Iterator<Waiter<Popping>> first = list.waiters.waiters().iterator();
        if (first.hasNext()) {
            Waiter<Popping> w = first.next();
            list.waiters.withdraw(w.leaseId());
            Popped handed = new Popped(list.key, value, w.leaseId(), revision, 0, w.claim().left(), w.claim().requestId());
            if (w.claim().requestId() != 0) {
                recentPops.remember(new Request(list.key, w.claim().requestId()), new PopMemo(handed, ANSWERED));
            }
            context.wake(new WaitKey(NAME, list.key, w.leaseId()), handed);
            changed(context, list, value, revision);
            removeIfUnused(list);
            return w.leaseId();
        }
        if (left) {
            list.items.addFirst(value);
        } else {
            list.items.addLast(value);
        }
        items++;
        changed(context, list, value, revision);
        return 0;
    }

    private Result pop(ApplyContext context, ListPop c) {
        Lease lease = null;
        if (c.leaseId() != 0 || c.queue()) {
            lease = leases.get(c.leaseId());
            Result.Rejected refused = arrivals.refusal(Limits.checkKey("name", c.key()), lease, c.key(), c.leaseId(), c.requestId());
            if (refused != null) {
                return refused;
            }
        } else {
            String problem = Limits.checkKey("name", c.key());
            if (problem != null) {
                return new Result.Rejected(Code.INVALID_ARGUMENT, problem);
            }
        }
        Request request = new Request(c.key(), c.requestId());
        PopMemo before = c.requestId() == 0 ? null : recentPops.recall(request);
        if (before != null && before.state() != RETURNED) {
            // A retry: the same item again, and from now on it is the caller's for good.
            recentPops.remember(request, new PopMemo(before.popped(), ANSWERED_AGAIN));
            return before.popped();
        }
        // (A retry of a pop whose item was given back pops afresh, as a new pop would.)
        ItemList list = lists.get(c.key());
        if (list != null && !list.items.isEmpty()) {
            byte[] value = c.left() ? list.items.pollFirst() : list.items.pollLast();
            items--;
            long revision = context.stamp();
            list.modRevision = revision;
            Popped popped = new Popped(c.key(), value, c.leaseId(), revision, list.items.size(), c.left(), c.requestId());
            if (c.requestId() != 0) {
                recentPops.remember(request, new PopMemo(popped, ANSWERED));
            }
            changed(context, list, new byte[0], revision);
            removeIfUnused(list);
            return popped;
        }
        if (!c.queue()) {
            return new Empty(c.key());
        }
        if (list == null) {
            list = create(c.key(), context.position());
        }
        Waiter<Popping> already = list.waiters.waiter(lease.id());
        if (already == null) {
            list.waiters.enqueue(new Popping(lease.id(), c.requestId(), c.left()), context.position());
        }
        return new Waiting(c.key(), lease.id(), list.waiters.ahead(lease.id()));
    }

    private Result cancel(ApplyContext context, ListCancel c) {
        String problem = Limits.checkKey("name", c.key());
        if (problem != null) {
            return new Result.Rejected(Code.INVALID_ARGUMENT, problem);
        }
        PopMemo popped = c.requestId() == 0 ? null : recentPops.recall(new Request(c.key(), c.requestId()));
        if (popped == null) {
            withdrawnPops.ended(context, c.key(), c.leaseId(), c.requestId());
        } else if (popped.state() == ANSWERED && popped.popped().leaseId() == c.leaseId()) {
            // Handed an item its caller gave up on before the answer reached it: the item goes back.
            giveBack(context, new ListReturn(c.key(), popped.popped().value(), popped.popped().left(), c.requestId()));
            return new Left(c.key(), c.leaseId());
        }
        return leave(context, c.key(), c.leaseId());
    }

    /** A timed-out wait: withdrawn, unless its pop was handed an item first, which it keeps (answered again). */
    private Result withdraw(ApplyContext context, ListWithdraw c) {
        String problem = Limits.checkKey("name", c.key());
        if (problem != null) {
            return new Result.Rejected(Code.INVALID_ARGUMENT, problem);
        }
        PopMemo popped = c.requestId() == 0 ? null : recentPops.recall(new Request(c.key(), c.requestId()));
        if (popped == null) {
            withdrawnPops.ended(context, c.key(), c.leaseId(), c.requestId());
        } else if (popped.state() != RETURNED && popped.popped().leaseId() == c.leaseId()) {
            return popped.popped();
        }
        return leave(context, c.key(), c.leaseId());
    }

    /** The lease's wait on list {@code key} ends (if it waits), waking its calls with {@link Left}. */
    private Result leave(ApplyContext context, String key, long leaseId) {
        ItemList list = lists.get(key);
        Left answer = new Left(key, leaseId);
        if (list == null) {
            return answer;
        }
        Waiter<Popping> left = list.waiters.withdraw(leaseId);
        if (left != null) {
            withdrawnPops.ended(context, key, leaseId, left.claim().requestId());
            context.wake(new WaitKey(NAME, key, leaseId), answer);
            removeIfUnused(list);
        }
        return answer;
    }

    private Result giveBack(ApplyContext context, ListReturn c) {
        String problem = Limits.checkKey("name", c.key());
        if (problem == null) {
            problem = checkValue(c.value());
        }
        if (problem != null) {
            return new Result.Rejected(Code.INVALID_ARGUMENT, problem);
        }
        if (c.requestId() != 0) {
            Request request = new Request(c.key(), c.requestId());
            PopMemo popped = recentPops.recall(request);
            if (popped != null && popped.state() == ANSWERED_AGAIN) {
                return new Result.Skipped("a retry of pop " + c.requestId() + " of list '" + c.key() + "' was answered with the item: its caller has it");
            }
            if (popped != null && popped.state() == RETURNED) {
                return new Result.Skipped("the item of pop " + c.requestId() + " of list '" + c.key() + "' was given back already");
            }
            // A retry of the pop must not be answered with the item now back in the list.
            Popped was = popped != null ? popped.popped() : new Popped(c.key(), new byte[0], 0, 0, 0, c.left(), c.requestId());
            recentPops.remember(request, new PopMemo(new Popped(c.key(), new byte[0], was.leaseId(), was.revision(), was.length(),
                    was.left(), was.requestId()), RETURNED));
        }
        long revision = context.stamp();
        ItemList list = lists.get(c.key());
        if (list == null) {
            list = create(c.key(), revision);
        }
        long handedTo = offer(context, list, c.value(), c.left(), revision);
        return new Returned(c.key(), list.items.size(), handedTo);
    }

    private Result abandon(ApplyContext context, ListAbandon c) {
        String problem = Limits.checkKey("name", c.key());
        if (problem != null) {
            return new Result.Rejected(Code.INVALID_ARGUMENT, problem);
        }
        ItemList list = lists.get(c.key());
        Waiter<Popping> waiter = list == null ? null : list.waiters.waiter(c.leaseId());
        if (waiter != null && waiter.claim().requestId() == c.requestId()) {
            list.waiters.withdraw(c.leaseId());
            Left left = new Left(c.key(), c.leaseId());
            context.wake(new WaitKey(NAME, c.key(), c.leaseId()), left);
            removeIfUnused(list);
            return left;
        }
        PopMemo popped = c.requestId() == 0 ? null : recentPops.recall(new Request(c.key(), c.requestId()));
        if (popped == null || popped.state() != ANSWERED || popped.popped().leaseId() != c.leaseId()) {
            return new Result.Skipped("pop " + c.requestId() + " of lease " + c.leaseId() + " at list '" + c.key()
                    + "' neither waits nor holds an item nobody else was answered with");
        }
        return giveBack(context, new ListReturn(c.key(), popped.popped().value(), popped.popped().left(), c.requestId()));
    }

    @Override
    public void leaseEnded(ApplyContext context, long leaseId, List<String> released) {
        for (String key : List.copyOf(ties.waitedBy(leaseId))) {
            ItemList list = lists.get(key);
            list.waiters.withdraw(leaseId);
            context.wake(new WaitKey(NAME, key, leaseId), new Result.Rejected(Code.NOT_FOUND,
                    "lease " + leaseId + " ended (expired or revoked) while waiting to pop from list '" + key + "'"));
            removeIfUnused(list);
        }
    }

    private ItemList create(String key, long createRevision) {
        ItemList list = new ItemList(key, createRevision, ties);
        lists.put(key, list);
        names.take(key, NAME);
        return list;
    }

    private void removeIfUnused(ItemList list) {
        if (list.unused()) {
            lists.remove(list.key);
            names.free(list.key, NAME);
        }
    }

    private void changed(ApplyContext context, ItemList list, byte[] value, long revision) {
        if (list.items.isEmpty()) {
            context.emit(new WatchEvent(revision, WatchEvent.Type.DELETE, KeyValue.deleted(list.key, revision), null, NAME));
        } else {
            context.emit(new WatchEvent(revision, WatchEvent.Type.PUT, new KeyValue(list.key, "", value, 0, list.createRevision, revision,
                    list.items.size()), null, NAME));
        }
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

    /** The number of items in list {@code key} (0 when it does not exist). */
    public int length(String key) {
        ItemList list = lists.get(key);
        return list == null ? 0 : list.items.size();
    }

    /**
     * Items {@code start} to {@code stop} of list {@code key}, both included, counted from the head
     * (0) or, when negative, from the tail (-1 the last), as Redis's LRANGE: out-of-range ends are
     * clamped, an empty range gives an empty list; at most {@code limit} items.
     */
    public List<byte[]> range(String key, long start, long stop, int limit) {
        ItemList list = lists.get(key);
        if (list == null) {
            return List.of();
        }
        int n = list.items.size();
        long from = start < 0 ? Math.max(0, n + start) : start;
        long to = stop < 0 ? n + stop : Math.min(n - 1L, stop);
        List<byte[]> found = new ArrayList<>();
        if (from > to || from >= n) {
            return found;
        }
        int i = 0;
        for (byte[] item : list.items) {
            if (i > to || found.size() >= limit) {
                break;
            }
            if (i >= from) {
                found.add(item);
            }
            i++;
        }
        return found;
    }

    /** The list, or null when it does not exist (no items, nobody waiting). */
    public ListView list(String key) {
        ItemList list = lists.get(key);
        return list == null ? null : view(list);
    }

    /** Lists whose name starts with {@code prefix}, in name order, at most {@code limit}. */
    public List<ListView> lists(String prefix, int limit) {
        return Ties.prefixed(lists, prefix, limit, this::view);
    }

    public int listCount() {
        return lists.size();
    }

    /** Items over every list. */
    public long itemCount() {
        return items;
    }

    /** Leases waiting to pop, over every list. */
    public int waiting() {
        int waiting = 0;
        for (ItemList list : lists.values()) {
            waiting += list.waiters.waiterCount();
        }
        return waiting;
    }

    private ListView view(ItemList list) {
        List<ListView.Waiter> waiting = new ArrayList<>(list.waiters.waiterCount());
        for (Waiter<Popping> w : list.waiters.waiters()) {
            waiting.add(new ListView.Waiter(w.leaseId(), leases.get(w.leaseId()).clientId(), w.joinedAt()));
        }
        return new ListView(list.key, list.items.size(), List.copyOf(waiting), list.createRevision, list.modRevision);
    }

    // ---- snapshot section ------------------------------------------------------------------------

    /**
     * Lists by name (revisions, items head first, waiters in arrival order with their pops), then
     * the withdrawn pops, the recent pushes and the recent pops, each oldest first.
     */
    @Override
    public void writeSnapshot(DataOutputStream out) throws IOException {
        out.writeInt(lists.size());
        for (ItemList list : lists.values()) {
            Wire.writeString(out, list.key);
            out.writeLong(list.createRevision);
            out.writeLong(list.modRevision);
            out.writeInt(list.items.size());
            for (byte[] item : list.items) {
                Wire.writeBytes(out, item);
            }
            out.writeInt(list.waiters.waiterCount());
            for (Waiter<Popping> w : list.waiters.waiters()) {
                out.writeLong(w.leaseId());
                out.writeLong(w.claim().requestId());
                out.writeBoolean(w.claim().left());
                out.writeLong(w.joinedAt());
            }
        }
        withdrawnPops.write(out);
        out.writeInt(recentPushes.size());
        for (Map.Entry<Request, Pushed> e : recentPushes.entries().entrySet()) {
            Wire.writeString(out, e.getKey().key());
            out.writeLong(e.getKey().requestId());
            out.writeInt(e.getValue().length());
            out.writeLong(e.getValue().revision());
            out.writeLong(e.getValue().handedTo());
        }
        out.writeInt(recentPops.size());
        for (Map.Entry<Request, PopMemo> e : recentPops.entries().entrySet()) {
            Wire.writeString(out, e.getKey().key());
            out.writeLong(e.getKey().requestId());
            Popped popped = e.getValue().popped();
            Wire.writeBytes(out, popped.value()); // empty once returned: only that it went back matters
            out.writeLong(popped.leaseId());
            out.writeLong(popped.revision());
            out.writeInt(popped.length());
            out.writeBoolean(popped.left());
            out.writeByte(e.getValue().state());
        }
    }

    /** Snapshots written before lists have no section for them, and the lists start empty. */
    @Override
    public void readSnapshot(DataInputStream in, int formatVersion, Leases leases) throws IOException {
        if (formatVersion < 3) {
            return; // unframed: written long before lists
        }
        int count = Wire.count(in, "list");
        for (int i = 0; i < count; i++) {
            String key = Wire.readString(in, Limits.MAX_METADATA_BYTES);
            ItemList list = new ItemList(key, in.readLong(), ties);
            list.modRevision = in.readLong();
            int length = Wire.count(in, "list item");
            if (length > MAX_LENGTH) {
                throw new SnapshotFormatException("snapshot is corrupt: list '" + key + "' has " + length + " items, above " + MAX_LENGTH);
            }
            for (int n = 0; n < length; n++) {
                list.items.addLast(Wire.readBytes(in, MAX_VALUE_BYTES));
            }
            items += length;
            int waiting = Wire.count(in, "list waiter");
            for (int w = 0; w < waiting; w++) {
                long lease = in.readLong();
                if (leases.get(lease) == null) {
                    throw new SnapshotFormatException("snapshot is corrupt: list '" + key + "' refers to unknown lease " + lease);
                }
                long requestId = in.readLong();
                boolean left = in.readBoolean();
                list.waiters.enqueue(new Popping(lease, requestId, left), in.readLong());
            }
            if (list.unused() || (length > 0 && waiting > 0)) {
                throw new SnapshotFormatException("snapshot is corrupt: list '" + key + "' has " + length + " items and " + waiting + " waiters");
            }
            lists.put(key, list);
            names.take(key, NAME);
        }
        withdrawnPops.read(in);
        int pushes = Wire.count(in, "list push");
        for (int i = 0; i < pushes; i++) {
            String key = Wire.readString(in, Limits.MAX_METADATA_BYTES);
            long requestId = in.readLong();
            recentPushes.remember(new Request(key, requestId), new Pushed(key, in.readInt(), in.readLong(), in.readLong()));
        }
        int pops = Wire.count(in, "list pop");
        for (int i = 0; i < pops; i++) {
            String key = Wire.readString(in, Limits.MAX_METADATA_BYTES);
            long requestId = in.readLong();
            byte[] value = Wire.readBytes(in, MAX_VALUE_BYTES);
            Popped popped = new Popped(key, value, in.readLong(), in.readLong(), in.readInt(), in.readBoolean(), requestId);
            byte state = in.readByte();
            if (state < ANSWERED || state > RETURNED) {
                throw new SnapshotFormatException("snapshot is corrupt: list pop " + requestId + " of '" + key + "' is in state " + state);
            }
            recentPops.remember(new Request(key, requestId), new PopMemo(popped, state));
        }
    }
}
