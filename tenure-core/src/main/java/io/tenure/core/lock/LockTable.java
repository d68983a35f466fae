package io.tenure.core.lock;

import io.tenure.core.Limits;
import io.tenure.core.SnapshotFormatException;
import io.tenure.core.kernel.ApplyContext;
import io.tenure.core.kernel.Arrivals;
import io.tenure.core.kernel.Claim;
import io.tenure.core.kernel.Command;
import io.tenure.core.kernel.EndedAcquires;
import io.tenure.core.kernel.CommandType;
import io.tenure.core.kernel.GrantQueue;
import io.tenure.core.kernel.GrantRule;
import io.tenure.core.kernel.Hold;
import io.tenure.core.kernel.Lease;
import io.tenure.core.kernel.Leases;
import io.tenure.core.kernel.Names;
import io.tenure.core.kernel.Primitive;
import io.tenure.core.kernel.Result;
import io.tenure.core.kernel.Result.Code;
import io.tenure.core.kernel.RecentReleases;
import io.tenure.core.kernel.Ties;
import io.tenure.core.kernel.WaitKey;
import io.tenure.core.kernel.Waiter;
import io.tenure.core.kernel.Wire;
import io.tenure.core.lock.LockResult.Busy;
import io.tenure.core.lock.LockResult.Cancelled;
import io.tenure.core.lock.LockResult.Downgraded;
import io.tenure.core.lock.LockResult.Granted;
import io.tenure.core.lock.LockResult.Queued;
import io.tenure.core.lock.LockResult.Released;
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
 * Locks with a write mode and a read mode: in write mode a name has one holder (I1), in read mode
 * any number of readers and no writer; every grant's fencing token is its stamp (I2), so a
 * writer's token is above every token granted before it. One FIFO queue of waiting leases per
 * lock (I7): a released write lock goes to the head waiter, and with it to the readers queued
 * right behind a reading head; a queued writer holds back the readers that come after it, so a
 * stream of readers cannot starve it. A writer may downgrade to read without letting go; a reader
 * is never upgraded (two readers upgrading would wait for each other forever). A lock exists
 * while it is held; released with nobody waiting, it is deleted.
 *
 * <p>A release is idempotent: the last {@value #RECENT_RELEASES} releases are remembered by
 * token ({@link RecentReleases}, as an election's resignations are), so a retried release of a grant already released succeeds again with the same answer,
 * even after its lease is gone.
 *
 * <p>An acquire that names its request ({@link LockAcquire#requestId}) is not applied again once
 * it ended: when the grant it led to was released, or its wait withdrawn, a late copy of it (a
 * retry that was still in flight on another member) is refused, so that it cannot queue or grant
 * the lock anew for a caller that stopped waiting. The last {@value #ENDED_ACQUIRES} ends are
 * remembered.
 */
public final class LockTable implements Primitive {
    /** How many recent releases are remembered, so a retried release succeeds again instead of failing. */
    public static final int RECENT_RELEASES = 16_384;
    /** How many ended acquire requests are remembered, so that a late copy of one is refused. */
    public static final int ENDED_ACQUIRES = EndedAcquires.CAPACITY;
    /** Strings and byte fields a log entry may carry; commands are checked against {@link Limits} when applied. */
    private static final int MAX_FIELD_BYTES = 1 << 20;

    /** Its name: the kind of its waits, and its snapshot section. */
    public static final String NAME = "lock";
    /** Its name and its commands' log tags (never reuse one). */
    public static final Kind KIND = new Kind(NAME, List.of(
            // Before request ids (and still for commands without one, which older members read).
            CommandType.older(5, LockAcquire.class, (c, out) -> {
                Wire.writeString(out, c.key());
                out.writeLong(c.leaseId());
                Wire.writeBytes(out, c.metadata());
                out.writeBoolean(c.queue());
            }, in -> new LockAcquire(Wire.readString(in, MAX_FIELD_BYTES), in.readLong(), Wire.readBytes(in, MAX_FIELD_BYTES),
                    in.readBoolean(), 0), c -> c.requestId() == 0 && !c.shared()),
            CommandType.older(6, LockCancel.class, (c, out) -> {
                Wire.writeString(out, c.key());
                out.writeLong(c.leaseId());
            }, in -> new LockCancel(Wire.readString(in, MAX_FIELD_BYTES), in.readLong(), 0), c -> c.requestId() == 0),
            new CommandType<>(7, LockRelease.class, (c, out) -> {
                Wire.writeString(out, c.key());
                out.writeLong(c.leaseId());
                out.writeLong(c.fencingToken());
            }, in -> new LockRelease(Wire.readString(in, MAX_FIELD_BYTES), in.readLong(), in.readLong())),
            // Before read mode (and still for write-mode acquires).
            CommandType.older(10, LockAcquire.class, (c, out) -> {
                Wire.writeString(out, c.key());
                out.writeLong(c.leaseId());
                Wire.writeBytes(out, c.metadata());
                out.writeBoolean(c.queue());
                out.writeLong(c.requestId());
            }, in -> new LockAcquire(Wire.readString(in, MAX_FIELD_BYTES), in.readLong(), Wire.readBytes(in, MAX_FIELD_BYTES),
                    in.readBoolean(), in.readLong()), c -> !c.shared()),
            new CommandType<>(11, LockCancel.class, (c, out) -> {
                Wire.writeString(out, c.key());
                out.writeLong(c.leaseId());
                out.writeLong(c.requestId());
            }, in -> new LockCancel(Wire.readString(in, MAX_FIELD_BYTES), in.readLong(), in.readLong())),
            new CommandType<>(15, LockAcquire.class, (c, out) -> {
                Wire.writeString(out, c.key());
                out.writeLong(c.leaseId());
                Wire.writeBytes(out, c.metadata());
                out.writeBoolean(c.queue());
                out.writeLong(c.requestId());
                out.writeBoolean(c.shared());
            }, in -> new LockAcquire(Wire.readString(in, MAX_FIELD_BYTES), in.readLong(), Wire.readBytes(in, MAX_FIELD_BYTES),
                    in.readBoolean(), in.readLong(), in.readBoolean())),
            new CommandType<>(16, LockDowngrade.class, (c, out) -> {
                Wire.writeString(out, c.key());
                out.writeLong(c.leaseId());
                out.writeLong(c.fencingToken());
            }, in -> new LockDowngrade(Wire.readString(in, MAX_FIELD_BYTES), in.readLong(), in.readLong()))));

    /**
     * A holder's or waiter's claim: its lease, the metadata it asked with, the acquire request
     * that asked (0 = none), and its mode (read when {@code shared}).
     */
    record LockClaim(long leaseId, byte[] metadata, long requestId, boolean shared) implements Claim {
        LockClaim downgraded() {
            return new LockClaim(leaseId, metadata, requestId, true);
        }
    }

    /**
     * Readers beside readers, a writer beside nobody; a waiter follows every earlier waiter
     * unless both read. Counts its holders by mode as grants come and go.
     */
    private static final class ModeRule implements GrantRule<LockClaim> {
        int readers;
        int writers;

        @Override
        public boolean fits(Collection<Hold<LockClaim>> holders, LockClaim claim) {
            return claim.shared() ? writers == 0 : readers == 0 && writers == 0;
        }

        @Override
        public boolean mustFollow(LockClaim earlier, LockClaim later) {
            return !(earlier.shared() && later.shared());
        }

        @Override
        public boolean conflicts(LockClaim held, LockClaim claim) {
            return !(held.shared() && claim.shared());
        }

        @Override
        public boolean holdsBackAll(LockClaim waiter) {
            return !waiter.shared();
        }

        @Override
        public void held(LockClaim claim) {
            if (claim.shared()) {
                readers++;
            } else {
                writers++;
            }
        }

        @Override
        public void released(LockClaim claim) {
            if (claim.shared()) {
                readers--;
            } else {
                writers--;
            }
        }
    }


    private static final class Lock {
        final String key;
        final long createRevision;
        final ModeRule rule = new ModeRule();
        /** Never without a holder while the lock exists. */
        final GrantQueue<LockClaim> queue;
        long version;

        Lock(String key, long createRevision, Ties ties) {
            this.key = key;
            this.createRevision = createRevision;
            this.queue = new GrantQueue<>(key, rule, ties);
        }

        /** The first holder in grant order (the only one in write mode). */
        Hold<LockClaim> first() {
            return queue.holders().iterator().next();
        }

        boolean shared() {
            return rule.readers > 0;
        }
    }

    private final Leases leases;
    private final Names names;
    private final TreeMap<String, Lock> locks = new TreeMap<>();
    private final Ties ties;
    private final RecentReleases recentReleases = new RecentReleases(RECENT_RELEASES, "release");
    private final EndedAcquires endedAcquires = new EndedAcquires();
    private final Arrivals arrivals;

    public LockTable(Leases leases, Names names) {
        this.leases = leases;
        this.ties = new Ties(leases);
        this.names = names;
        this.arrivals = new Arrivals(NAME, names, endedAcquires);
    }

    /** A lock table with a namespace of its own (no other grant-queue kind beside it). */
    public LockTable(Leases leases) {
        this(leases, new Names());
    }

    @Override
    public Kind kind() {
        return KIND;
    }

    // Java 17 has no pattern switch; the chain covers every permitted subtype of the sealed LockCommand.
    @Override
    public Result apply(ApplyContext context, Command command) {
        if (command instanceof LockAcquire c) {
            return acquire(context, c);
        } else if (command instanceof LockRelease c) {
            return release(context, c);
        } else if (command instanceof LockCancel c) {
            return cancel(context, c);
        } else if (command instanceof LockDowngrade c) {
            return downgrade(context, c);
        }
        throw new IllegalArgumentException("not a lock command: " + command.getClass().getName());
    }

    private Result acquire(ApplyContext context, LockAcquire c) {
        String problem = Limits.checkKey("name", c.key());
        if (problem == null) {
            problem = Limits.checkMetadata("metadata", c.metadata());
        }
        Lease lease = leases.get(c.leaseId());
        Result.Rejected refused = arrivals.refusal(problem, lease, c.key(), c.leaseId(), c.requestId());
        if (refused != null) {
            return refused;
        }
        LockClaim claim = new LockClaim(lease.id(), metadataOf(c.metadata()), c.requestId(), c.shared());
        Lock lock = locks.get(c.key());
        if (lock == null) {
            long token = context.stamp();
            lock = new Lock(c.key(), token, ties);
            locks.put(c.key(), lock);
            names.take(c.key(), NAME);
            holdBy(context, lock, lock.queue.hold(claim, token), null);
            return new Granted(c.key(), lease.id(), token, false);
        }
        Hold<LockClaim> holding = lock.queue.holder(lease.id());
        if (holding != null) {
            if (holding.claim().shared() == c.shared()) {
                return new Granted(c.key(), lease.id(), holding.token(), true);
            }
            return new Result.Rejected(Code.FAILED_PRECONDITION, holding.claim().shared()
                    ? "lease " + lease.id() + " holds lock '" + c.key() + "' in read mode and cannot upgrade it to write"
                            + " (two readers upgrading would wait for each other forever): release it, then acquire it in write mode"
                    : "lease " + lease.id() + " holds lock '" + c.key() + "' in write mode: downgrade it to read mode instead");
        }
        Waiter<LockClaim> waiting = lock.queue.waiter(lease.id());
        if (waiting != null) {
            if (waiting.claim().shared() != c.shared()) {
                return new Result.Rejected(Code.FAILED_PRECONDITION, "lease " + lease.id() + " waits for lock '" + c.key() + "' in "
                        + modeOf(waiting.claim()) + " mode, not " + modeOf(claim) + " mode (one wait per lease; cancel it first)");
            }
            return new Queued(c.key(), lease.id(), waiting.joinedAt(), lock.queue.ahead(lease.id()), holderClient(lock));
        }
        if (lock.queue.grantable(claim)) {
            Hold<LockClaim> hold = lock.queue.hold(claim, context.stamp());
            holdBy(context, lock, hold, null);
            return new Granted(c.key(), lease.id(), hold.token(), false);
        }
        if (!c.queue()) {
            return new Busy(c.key(), holderClient(lock), lock.first().leaseId(), lock.queue.waiterCount());
        }
        int ahead = lock.queue.waiterCount();
        lock.queue.enqueue(claim, context.position());
        return new Queued(c.key(), lease.id(), context.position(), ahead, holderClient(lock));
    }

    private Result cancel(ApplyContext context, LockCancel c) {
        String problem = Limits.checkKey("name", c.key());
        if (problem != null) {
            return new Result.Rejected(Code.INVALID_ARGUMENT, problem);
        }
        Lock lock = locks.get(c.key());
        Hold<LockClaim> holding = lock == null ? null : lock.queue.holder(c.leaseId());
        if (holding != null) {
            // The grant won the race with the timeout: the caller owns the lock now.
            return new Granted(c.key(), c.leaseId(), holding.token(), true);
        }
        // Even with nothing to withdraw yet: the acquire may still be on its way.
        endedAcquires.ended(context, c.key(), c.leaseId(), c.requestId());
        if (lock == null) {
            return new Cancelled(c.key(), c.leaseId(), "", 0);
        }
        Waiter<LockClaim> withdrawn = lock.queue.withdraw(c.leaseId());
        if (withdrawn == null) {
            return new Cancelled(c.key(), c.leaseId(), holderClient(lock), lock.queue.waiterCount());
        }
        endedAcquires.ended(context, c.key(), c.leaseId(), withdrawn.claim().requestId());
        Cancelled cancelled = new Cancelled(c.key(), c.leaseId(), holderClient(lock), lock.queue.waiterCount());
        // Calls waiting for this lease on any member are answered "not acquired".
        context.wake(new WaitKey(NAME, c.key(), c.leaseId()), cancelled);
        // A withdrawn writer may have held back readers that can share the lock now.
        grantWaiters(context, lock, null);
        return cancelled;
    }

    private Result release(ApplyContext context, LockRelease c) {
        String problem = Limits.checkKey("key", c.key());
        if (problem != null) {
            return new Result.Rejected(Code.INVALID_ARGUMENT, problem);
        }
        Lock lock = locks.get(c.key());
        Hold<LockClaim> holding = lock == null ? null : lock.queue.holder(c.leaseId());
        if (holding != null && holding.token() == c.fencingToken()) {
            endedAcquires.ended(context, c.key(), c.leaseId(), holding.claim().requestId());
            long next = letGo(context, lock, c.leaseId());
            recentReleases.letGo(c.key(), c.leaseId(), c.fencingToken(), next);
            return new Released(c.key(), next);
        }
        Long before = recentReleases.nextAfter(c.key(), c.leaseId(), c.fencingToken());
        if (before != null) {
            return new Released(c.key(), before);
        }
        if (leases.get(c.leaseId()) == null) {
            return new Result.Rejected(Code.NOT_FOUND, Leases.notFound(c.leaseId()));
        }
        return new Result.Rejected(Code.FAILED_PRECONDITION, notHeld(c.key(), c.leaseId(), c.fencingToken()).message());
    }

    private Result downgrade(ApplyContext context, LockDowngrade c) {
        String problem = Limits.checkKey("name", c.key());
        if (problem != null) {
            return new Result.Rejected(Code.INVALID_ARGUMENT, problem);
        }
        NotHeld notHeld = notHeld(c.key(), c.leaseId(), c.fencingToken());
        if (notHeld != null) {
            if (leases.get(c.leaseId()) == null) {
                return new Result.Rejected(Code.NOT_FOUND, Leases.notFound(c.leaseId()));
            }
            return new Result.Rejected(Code.FAILED_PRECONDITION, notHeld.message());
        }
        Lock lock = locks.get(c.key());
        Hold<LockClaim> holding = lock.queue.holder(c.leaseId());
        if (holding.claim().shared()) {
            return new Downgraded(c.key(), c.leaseId(), holding.token(), 0); // a retry: it reads already
        }
        lock.queue.change(holding.claim().downgraded());
        int holders = lock.queue.holders().size();
        grantWaiters(context, lock, null);
        return new Downgraded(c.key(), c.leaseId(), holding.token(), lock.queue.holders().size() - holders);
    }

    /** Why (lease, token) does not hold the lock: the request field at fault and a message. */
    public record NotHeld(String field, String message) {}

    /**
     * Null when lease {@code leaseId} holds lock {@code key} (in either mode) with fencing token
     * {@code token}; otherwise why not. The one holder check of every front end (release,
     * downgrade, and HTTP's renew).
     */
    public NotHeld notHeld(String key, long leaseId, long token) {
        Lock lock = locks.get(key);
        if (lock == null) {
            return new NotHeld("lease_id", "lock '" + key + "' is not held");
        }
        Hold<LockClaim> holding = lock.queue.holder(leaseId);
        if (holding == null) {
            return new NotHeld("lease_id", "lock '" + key + "' is not held by lease " + leaseId
                    + " (it is held by another lease, owner '" + holderClient(lock) + "')");
        }
        if (holding.token() != token) {
            return new NotHeld("fencing_token", "fencing token " + token + " is stale for lock '" + key + "': lease "
                    + leaseId + " holds it with token " + holding.token());
        }
        return null;
    }

    /**
     * Takes the lease's hold away and grants the waiters that fit now, each with a new token;
     * with nobody left holding the lock is deleted.
     *
     * @return the fencing token of the first waiter granted, or 0 when nobody was
     */
    private long letGo(ApplyContext context, Lock lock, long leaseId) {
        KeyValue before = keyValue(lock, lock.queue.holder(leaseId));
        lock.queue.release(leaseId);
        long next = grantWaiters(context, lock, before);
        if (lock.queue.holders().isEmpty()) {
            // Every waiter's lease is alive, and a lock with no holder grants its head waiter:
            // with no holder left, nobody waits either.
            locks.remove(lock.key);
            names.free(lock.key, NAME);
            long revision = context.stamp();
            context.emit(new WatchEvent(revision, WatchEvent.Type.DELETE, KeyValue.deleted(lock.key, revision), before, NAME));
        }
        return next;
    }

    /**
     * Grants, in FIFO order, the waiters that fit now, waking each; {@code before} is the hold
     * just let go, for their events.
     *
     * @return the token of the first waiter granted, 0 when none fit
     */
    private long grantWaiters(ApplyContext context, Lock lock, KeyValue before) {
        long[] first = {0};
        lock.queue.grantWaiters(context::stamp, hold -> {
            if (first[0] == 0) {
                first[0] = hold.token();
            }
            holdBy(context, lock, hold, before);
            context.wake(new WaitKey(NAME, lock.key, hold.leaseId()), new Granted(lock.key, hold.leaseId(), hold.token(), false));
        });
        return first[0];
    }

    private void holdBy(ApplyContext context, Lock lock, Hold<LockClaim> hold, KeyValue before) {
        lock.version++;
        context.emit(new WatchEvent(hold.token(), WatchEvent.Type.PUT, keyValue(lock, hold), before, NAME));
    }

    @Override
    public void leaseEnded(ApplyContext context, long leaseId, List<String> released) {
        for (String key : List.copyOf(ties.heldBy(leaseId))) {
            letGo(context, locks.get(key), leaseId);
            released.add(key);
        }
        for (String key : List.copyOf(ties.waitedBy(leaseId))) {
            Lock lock = locks.get(key);
            lock.queue.withdraw(leaseId);
            context.wake(new WaitKey(NAME, key, leaseId), new Result.Rejected(Code.NOT_FOUND,
                    "lease " + leaseId + " ended (expired or revoked) while waiting for lock '" + key + "'"));
            grantWaiters(context, lock, null);
        }
    }

    private String holderClient(Lock lock) {
        return leases.get(lock.first().leaseId()).clientId();
    }

    private KeyValue keyValue(Lock lock, Hold<LockClaim> hold) {
        // A copy: events leave the state, and the state must not change through them.
        return new KeyValue(lock.key, leases.get(hold.leaseId()).clientId(), hold.claim().metadata().clone(), hold.leaseId(),
                lock.createRevision, hold.token(), lock.version);
    }

    private static String modeOf(LockClaim claim) {
        return claim.shared() ? "read" : "write";
    }

    private static byte[] metadataOf(byte[] metadata) {
        return metadata == null ? new byte[0] : metadata.clone();
    }

    // ---- reads ---------------------------------------------------------------------------------

    @Override
    public SortedSet<String> heldBy(long leaseId) {
        return ties.heldBy(leaseId);
    }

    @Override
    public SortedSet<String> waitedBy(long leaseId) {
        return ties.waitedBy(leaseId);
    }

    @Override
    public Ties ties() {
        return ties;
    }

    /** The lock's holder and queue, or null when it is free. */
    public LockView lock(String key) {
        Lock lock = locks.get(key);
        return lock == null ? null : view(lock);
    }

    /** Held locks whose key starts with {@code prefix}, in key order, at most {@code limit}. */
    public List<LockView> locks(String prefix, int limit) {
        return Ties.prefixed(locks, prefix, limit, this::view);
    }

    public int lockCount() {
        return locks.size();
    }

    /** Locks held in read mode. */
    public int readLockCount() {
        int read = 0;
        for (Lock lock : locks.values()) {
            read += lock.shared() ? 1 : 0;
        }
        return read;
    }

    /** Leases holding a lock in read mode, over every lock. */
    public int readHolderCount() {
        int readers = 0;
        for (Lock lock : locks.values()) {
            readers += lock.rule.readers;
        }
        return readers;
    }

    /** Leases queued for locks, over every lock. */
    public int waiterCount() {
        int waiters = 0;
        for (Lock lock : locks.values()) {
            waiters += lock.queue.waiterCount();
        }
        return waiters;
    }

    /** The leases queued for lock {@code key}. */
    public int waiterCount(String key) {
        Lock lock = locks.get(key);
        return lock == null ? 0 : lock.queue.waiterCount();
    }


    /** How many releases are remembered for idempotent retries (at most {@value #RECENT_RELEASES}). */
    public int recentReleaseCount() {
        return recentReleases.size();
    }

    /** How many ended acquire requests are remembered (at most {@value #ENDED_ACQUIRES}). */
    public int endedAcquireCount() {
        return endedAcquires.size();
    }

    private LockView view(Lock lock) {
        List<LockView.Holder> holders = new ArrayList<>(lock.queue.holders().size());
        for (Hold<LockClaim> h : lock.queue.holders()) {
            holders.add(new LockView.Holder(h.leaseId(), leases.get(h.leaseId()).clientId(), h.token(), h.claim().metadata().clone()));
        }
        List<LockView.Waiter> queue = new ArrayList<>(lock.queue.waiterCount());
        for (Waiter<LockClaim> w : lock.queue.waiters()) {
            queue.add(new LockView.Waiter(w.leaseId(), leases.get(w.leaseId()).clientId(), w.joinedAt(), w.claim().shared()));
        }
        LockView.Holder first = holders.get(0);
        return new LockView(lock.key, first.clientId(), first.leaseId(), first.fencingToken(), first.metadata().clone(),
                lock.createRevision, lock.version, List.copyOf(queue), lock.shared(), List.copyOf(holders));
    }

    // ---- snapshot section ------------------------------------------------------------------------

    /**
     * Locks by key (creation, version, holders in grant order with token, acquire request and
     * mode, waiters in queue order with acquire request, place and mode), then the remembered
     * releases and the ended acquire requests, oldest first.
     */
    @Override
    public void writeSnapshot(DataOutputStream out) throws IOException {
        out.writeInt(locks.size());
        for (Lock lock : locks.values()) {
            Wire.writeString(out, lock.key);
            out.writeLong(lock.createRevision);
            out.writeLong(lock.version);
            out.writeInt(lock.queue.holders().size());
            for (Hold<LockClaim> h : lock.queue.holders()) {
                out.writeLong(h.leaseId());
                Wire.writeBytes(out, h.claim().metadata());
                out.writeLong(h.token());
                out.writeLong(h.claim().requestId());
                out.writeBoolean(h.claim().shared());
            }
            out.writeInt(lock.queue.waiterCount());
            for (Waiter<LockClaim> w : lock.queue.waiters()) {
                out.writeLong(w.leaseId());
                Wire.writeBytes(out, w.claim().metadata());
                out.writeLong(w.claim().requestId());
                out.writeLong(w.joinedAt());
                out.writeBoolean(w.claim().shared());
            }
        }
        recentReleases.write(out);
        endedAcquires.write(out);
    }

    @Override
    public void readSnapshot(DataInputStream in, int formatVersion, Leases leases) throws IOException {
        // Request ids and the ended acquires came with format 4, read mode and several holders with 5.
        boolean withRequestIds = formatVersion >= 4;
        int lockCount = Wire.count(in, "lock");
        for (int i = 0; i < lockCount; i++) {
            String key = Wire.readString(in, Limits.MAX_METADATA_BYTES);
            Lock lock = formatVersion >= 5 ? readLock(in, key, leases) : readWriteLockBefore5(in, key, leases, withRequestIds);
            locks.put(key, lock);
            names.take(key, NAME);
        }
        recentReleases.read(in);
        if (withRequestIds) {
            endedAcquires.read(in);
        }
    }

    private Lock readLock(DataInputStream in, String key, Leases leases) throws IOException {
        Lock lock = new Lock(key, in.readLong(), ties);
        lock.version = in.readLong();
        int holders = Wire.count(in, "holder");
        for (int h = 0; h < holders; h++) {
            long lease = leaseOf(leases, in.readLong(), key);
            byte[] metadata = Wire.readBytes(in, Limits.MAX_METADATA_BYTES);
            long token = in.readLong();
            lock.queue.hold(new LockClaim(lease, metadata, in.readLong(), in.readBoolean()), token);
        }
        int waiters = Wire.count(in, "waiter");
        for (int w = 0; w < waiters; w++) {
            long lease = leaseOf(leases, in.readLong(), key);
            byte[] metadata = Wire.readBytes(in, Limits.MAX_METADATA_BYTES);
            long requestId = in.readLong();
            long joinedAt = in.readLong();
            lock.queue.enqueue(new LockClaim(lease, metadata, requestId, in.readBoolean()), joinedAt);
        }
        if (holders == 0 || (lock.rule.writers > 0 && holders > 1)) {
            throw new SnapshotFormatException("snapshot is corrupt: lock '" + key + "' has " + holders + " holders, "
                    + lock.rule.writers + " of them in write mode");
        }
        return lock;
    }

    /** A lock as formats 1 to 4 wrote it: one holder, in write mode, and its waiters. */
    private Lock readWriteLockBefore5(DataInputStream in, String key, Leases leases, boolean withRequestIds) throws IOException {
        Lock lock = new Lock(key, in.readLong(), ties);
        long holder = leaseOf(leases, in.readLong(), key);
        byte[] metadata = Wire.readBytes(in, Limits.MAX_METADATA_BYTES);
        long token = in.readLong();
        long requestId = withRequestIds ? in.readLong() : 0;
        lock.queue.hold(new LockClaim(holder, metadata, requestId, false), token);
        lock.version = in.readLong();
        int waiterCount = Wire.count(in, "waiter");
        for (int w = 0; w < waiterCount; w++) {
            long lease = leaseOf(leases, in.readLong(), key);
            byte[] waiterMetadata = Wire.readBytes(in, Limits.MAX_METADATA_BYTES);
            long waiterRequestId = withRequestIds ? in.readLong() : 0;
            lock.queue.enqueue(new LockClaim(lease, waiterMetadata, waiterRequestId, false), in.readLong());
        }
        return lock;
    }

    private static long leaseOf(Leases leases, long id, String key) throws SnapshotFormatException {
        if (leases.get(id) == null) {
            throw new SnapshotFormatException("snapshot is corrupt: lock '" + key + "' refers to unknown lease " + id);
        }
        return id;
    }
}
