package io.tenure.core.semaphore;

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
import io.tenure.core.kernel.RetryMemo;
import io.tenure.core.kernel.Ties;
import io.tenure.core.kernel.WaitKey;
import io.tenure.core.kernel.Waiter;
import io.tenure.core.kernel.Wire;
import io.tenure.core.semaphore.SemaphoreResult.Busy;
import io.tenure.core.semaphore.SemaphoreResult.Cancelled;
import io.tenure.core.semaphore.SemaphoreResult.Granted;
import io.tenure.core.semaphore.SemaphoreResult.Queued;
import io.tenure.core.semaphore.SemaphoreResult.Released;
import io.tenure.core.watch.KeyValue;
import io.tenure.core.watch.WatchEvent;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeMap;

/**
 * Counting semaphores: each name has a limit, fixed while it exists, and holders whose permits
 * add up to at most that limit (I1), each grant with its own fencing token (I2), and a strict
 * FIFO queue (I7): a head waiter that needs 3 permits is not passed by a later one that needs 1.
 * A semaphore exists while it is held or waited for, and after that stays idle, keeping its limit,
 * until the leader forgets it after its idle time ({@link Names#idle}); then the next request may
 * set another limit. Its name is in the namespace it shares with locks ({@link Names}).
 *
 * <p>Retries are idempotent as for locks: per (semaphore, lease) there is one grant or one wait,
 * a retried release of a grant already released succeeds again (the last
 * {@value #RECENT_RELEASES}), and a late copy of an acquire that already ended is refused.
 *
 * <p>Watches see a PUT for every grant (its lease, its token as the revision) and a DELETE when
 * the semaphore is deleted.
 */
public final class SemaphoreTable implements Primitive {
    /** How many recent releases are remembered, so a retried release succeeds again. */
    public static final int RECENT_RELEASES = 16_384;
    /** How many ended acquire requests are remembered, so a late copy of one is refused. */
    public static final int ENDED_ACQUIRES = EndedAcquires.CAPACITY;
    private static final int MAX_FIELD_BYTES = 1 << 20;

    /** Its name: the kind of its waits and names, and its snapshot section. */
    public static final String NAME = "semaphore";
    /** Its commands' log tags (never reuse one). */
    public static final Kind KIND = new Kind(NAME, List.of(
            new CommandType<>(12, SemaphoreAcquire.class, (c, out) -> {
                Wire.writeString(out, c.key());
                out.writeLong(c.leaseId());
                out.writeInt(c.limit());
                out.writeInt(c.permits());
                out.writeBoolean(c.queue());
                out.writeLong(c.requestId());
            }, in -> new SemaphoreAcquire(Wire.readString(in, MAX_FIELD_BYTES), in.readLong(), in.readInt(), in.readInt(),
                    in.readBoolean(), in.readLong())),
            new CommandType<>(13, SemaphoreRelease.class, (c, out) -> {
                Wire.writeString(out, c.key());
                out.writeLong(c.leaseId());
                out.writeLong(c.fencingToken());
            }, in -> new SemaphoreRelease(Wire.readString(in, MAX_FIELD_BYTES), in.readLong(), in.readLong())),
            new CommandType<>(14, SemaphoreCancel.class, (c, out) -> {
                Wire.writeString(out, c.key());
                out.writeLong(c.leaseId());
                out.writeLong(c.requestId());
            }, in -> new SemaphoreCancel(Wire.readString(in, MAX_FIELD_BYTES), in.readLong(), in.readLong()))));

    /** A holder's or waiter's claim: its lease, how many permits, and the acquire request that asked (0 = none). */
    record Permits(long leaseId, int permits, long requestId) implements Claim {}

    /** At most {@code limit} permits held; strict FIFO. Counts what is held as grants come and go. */
    private static final class PermitRule implements GrantRule<Permits> {
        final int limit;
        int held;

        PermitRule(int limit) {
            this.limit = limit;
        }

        @Override
        public boolean fits(Collection<Hold<Permits>> holders, Permits claim) {
            return held + claim.permits() <= limit;
        }

        @Override
        public boolean mustFollow(Permits earlier, Permits later) {
            return true;
        }

        @Override
        public boolean conflicts(Permits held, Permits claim) {
            return true;
        }

        @Override
        public boolean strictlyFifo() {
            return true;
        }

        @Override
        public void held(Permits claim) {
            held += claim.permits();
        }

        @Override
        public void released(Permits claim) {
            held -= claim.permits();
        }
    }

    private static final class Semaphore {
        final String key;
        final long createRevision;
        final PermitRule rule;
        final GrantQueue<Permits> queue;
        long version;

        Semaphore(String key, int limit, long createRevision, Ties ties) {
            this.key = key;
            this.createRevision = createRevision;
            this.rule = new PermitRule(limit);
            this.queue = new GrantQueue<>(key, rule, ties);
        }

        int available() {
            return rule.limit - rule.held;
        }
    }

    /** A remembered release: the semaphore and the lease that held the grant. */
    record Release(String key, long leaseId) {}


    private final Leases leases;
    private final Names names;
    private final TreeMap<String, Semaphore> semaphores = new TreeMap<>();
    private final Ties ties;
    /** Released token → release, oldest evicted first. */
    private final RetryMemo<Long, Release> recentReleases = new RetryMemo<>(RECENT_RELEASES);
    private final EndedAcquires endedAcquires = new EndedAcquires();
    private final Arrivals arrivals;

    public SemaphoreTable(Leases leases, Names names) {
        this.leases = leases;
        this.ties = new Ties(leases);
        this.names = names;
        this.arrivals = new Arrivals(NAME, names, endedAcquires);
    }

    @Override
    public Kind kind() {
        return KIND;
    }

    @Override
    public Result apply(ApplyContext context, Command command) {
        if (command instanceof SemaphoreAcquire c) {
            return acquire(context, c);
        } else if (command instanceof SemaphoreRelease c) {
            return release(context, c);
        } else if (command instanceof SemaphoreCancel c) {
            return cancel(context, c);
        }
        throw new IllegalArgumentException("not a semaphore command: " + command.getClass().getName());
    }

    private Result acquire(ApplyContext context, SemaphoreAcquire c) {
        String problem = Limits.checkKey("name", c.key());
        if (problem == null) {
            problem = Limits.checkPermits(c.limit(), c.permits());
        }
        Lease lease = leases.get(c.leaseId());
        Result.Rejected refused = arrivals.refusal(problem, lease, c.key(), c.leaseId(), c.requestId());
        if (refused != null) {
            return refused;
        }
        Semaphore semaphore = semaphores.get(c.key());
        String otherLimit = limitMismatch(semaphore, c.limit());
        if (otherLimit != null) {
            return new Result.Rejected(Code.FAILED_PRECONDITION, otherLimit);
        }
        Permits claim = new Permits(lease.id(), c.permits(), c.requestId());
        if (semaphore != null) {
            Hold<Permits> holding = semaphore.queue.holder(lease.id());
            Waiter<Permits> waiting = holding == null ? semaphore.queue.waiter(lease.id()) : null;
            Permits mine = holding != null ? holding.claim() : waiting != null ? waiting.claim() : null;
            if (mine != null && mine.permits() != c.permits()) {
                return new Result.Rejected(Code.FAILED_PRECONDITION, "lease " + lease.id() + (holding != null ? " holds " : " waits for ")
                        + mine.permits() + " permits of semaphore '" + c.key() + "', not " + c.permits()
                        + " (one grant or wait per lease; release or cancel it first)");
            }
            if (holding != null) {
                return new Granted(c.key(), lease.id(), holding.claim().permits(), holding.token(), true);
            }
            if (waiting != null) {
                return new Queued(c.key(), lease.id(), waiting.joinedAt(), semaphore.queue.ahead(lease.id()), semaphore.available());
            }
        }
        if (semaphore == null || names.isIdle(c.key())) {
            // New, or idle: it starts again (a new creation revision), with the limit it kept.
            semaphore = new Semaphore(c.key(), c.limit(), context.position(), ties);
            semaphores.put(c.key(), semaphore);
            names.take(c.key(), NAME);
        }
        if (semaphore.queue.grantable(claim)) {
            Hold<Permits> hold = semaphore.queue.hold(claim, context.stamp());
            granted(context, semaphore, hold);
            return new Granted(c.key(), lease.id(), c.permits(), hold.token(), false);
        }
        if (!c.queue()) {
            return new Busy(c.key(), semaphore.available(), semaphore.queue.waiterCount());
        }
        int ahead = semaphore.queue.waiterCount();
        semaphore.queue.enqueue(claim, context.position());
        return new Queued(c.key(), lease.id(), context.position(), ahead, semaphore.available());
    }

    private Result cancel(ApplyContext context, SemaphoreCancel c) {
        String problem = Limits.checkKey("name", c.key());
        if (problem != null) {
            return new Result.Rejected(Code.INVALID_ARGUMENT, problem);
        }
        Semaphore semaphore = semaphores.get(c.key());
        Hold<Permits> holding = semaphore == null ? null : semaphore.queue.holder(c.leaseId());
        if (holding != null) {
            // The grant won the race with the timeout: the caller holds the permits now.
            return new Granted(c.key(), c.leaseId(), holding.claim().permits(), holding.token(), true);
        }
        endedAcquires.ended(context, c.key(), c.leaseId(), c.requestId());
        if (semaphore == null) {
            return new Cancelled(c.key(), c.leaseId(), 0, 0);
        }
        Waiter<Permits> withdrawn = semaphore.queue.withdraw(c.leaseId());
        if (withdrawn == null) {
            return new Cancelled(c.key(), c.leaseId(), semaphore.available(), semaphore.queue.waiterCount());
        }
        endedAcquires.ended(context, c.key(), c.leaseId(), withdrawn.claim().requestId());
        Cancelled cancelled = new Cancelled(c.key(), c.leaseId(), semaphore.available(), semaphore.queue.waiterCount());
        context.wake(new WaitKey(NAME, c.key(), c.leaseId()), cancelled);
        // The withdrawn head may have held back waiters that fit now.
        grantWaiters(context, semaphore);
        restIfIdle(context, semaphore);
        return cancelled;
    }

    private Result release(ApplyContext context, SemaphoreRelease c) {
        String problem = Limits.checkKey("name", c.key());
        if (problem != null) {
            return new Result.Rejected(Code.INVALID_ARGUMENT, problem);
        }
        Semaphore semaphore = semaphores.get(c.key());
        Hold<Permits> holding = semaphore == null ? null : semaphore.queue.holder(c.leaseId());
        if (holding != null && holding.token() == c.fencingToken()) {
            endedAcquires.ended(context, c.key(), c.leaseId(), holding.claim().requestId());
            semaphore.queue.release(c.leaseId());
            int handedTo = grantWaiters(context, semaphore);
            restIfIdle(context, semaphore);
            recentReleases.remember(c.fencingToken(), new Release(c.key(), c.leaseId()));
            return new Released(c.key(), handedTo);
        }
        Release before = recentReleases.recall(c.fencingToken());
        if (before != null && before.key().equals(c.key()) && before.leaseId() == c.leaseId()) {
            return new Released(c.key(), 0);
        }
        if (leases.get(c.leaseId()) == null) {
            return new Result.Rejected(Code.NOT_FOUND, Leases.notFound(c.leaseId()));
        }
        return new Result.Rejected(Code.FAILED_PRECONDITION, notHeld(c.key(), c.leaseId(), c.fencingToken()).message());
    }

    /** Why a request for a semaphore cannot apply as it stands: the request field at fault and a message. */
    public record Refusal(String field, String message) {}

    /**
     * Null when lease {@code leaseId} holds a grant of semaphore {@code key} with fencing token
     * {@code token}; otherwise why not. The one holder check of every front end (release, and
     * HTTP's renew).
     */
    public Refusal notHeld(String key, long leaseId, long token) {
        Hold<Permits> holding = grantOf(key, leaseId);
        if (holding == null) {
            return new Refusal("lease_id", "semaphore '" + key + "' has no grant of lease " + leaseId);
        }
        if (holding.token() != token) {
            return new Refusal("fencing_token", "fencing token " + token + " is stale for semaphore '" + key + "': lease "
                    + leaseId + " holds it with token " + holding.token());
        }
        return null;
    }

    /**
     * Null when an acquire of semaphore {@code key} with {@code limit} fits what the name is now
     * (free, or a semaphore with that limit); otherwise why not, as the acquire itself would
     * refuse it. A front end that grants a lease for each acquire (HTTP) asks first, so that such
     * a request leaves no lease behind.
     */
    public Refusal conflict(String key, int limit) {
        String otherKind = names.mismatch(key, NAME);
        if (otherKind != null) {
            return new Refusal("name", otherKind);
        }
        String otherLimit = limitMismatch(semaphores.get(key), limit);
        return otherLimit == null ? null : new Refusal("limit", otherLimit);
    }

    private static String limitMismatch(Semaphore semaphore, int limit) {
        if (semaphore == null || semaphore.rule.limit == limit) {
            return null;
        }
        return "semaphore '" + semaphore.key + "' has limit " + semaphore.rule.limit + ", not " + limit
                + " (the limit is fixed while the semaphore is held or waited for)";
    }

    /** Grants, in FIFO order, the waiters that fit now, waking each; returns how many. */
    private int grantWaiters(ApplyContext context, Semaphore semaphore) {
        return semaphore.queue.grantWaiters(context::stamp, hold -> {
            granted(context, semaphore, hold);
            context.wake(new WaitKey(NAME, semaphore.key, hold.leaseId()),
                    new Granted(semaphore.key, hold.leaseId(), hold.claim().permits(), hold.token(), false));
        });
    }

    private void granted(ApplyContext context, Semaphore semaphore, Hold<Permits> hold) {
        semaphore.version++;
        context.emit(new WatchEvent(hold.token(), WatchEvent.Type.PUT, new KeyValue(semaphore.key, leases.get(hold.leaseId()).clientId(),
                new byte[0], hold.leaseId(), semaphore.createRevision, hold.token(), semaphore.version), null, NAME));
    }

    /**
     * With nobody holding or waiting, the semaphore rests: watchers see it go (a DELETE), and it
     * keeps its limit, idle, until the leader forgets it ({@link #forget}).
     */
    private void restIfIdle(ApplyContext context, Semaphore semaphore) {
        if (!semaphore.queue.isEmpty() || names.isIdle(semaphore.key)) {
            return;
        }
        names.idle(semaphore.key, NAME, context.position());
        if (semaphore.version > 0) {
            // Watchers saw it held: they see it go. One that was only ever waited for was never seen.
            long revision = context.stamp();
            context.emit(new WatchEvent(revision, WatchEvent.Type.DELETE, KeyValue.deleted(semaphore.key, revision), null, NAME));
        }
    }

    @Override
    public void forget(String name) {
        semaphores.remove(name);
    }

    @Override
    public void leaseEnded(ApplyContext context, long leaseId, List<String> released) {
        for (String key : List.copyOf(ties.heldBy(leaseId))) {
            Semaphore semaphore = semaphores.get(key);
            semaphore.queue.release(leaseId);
            grantWaiters(context, semaphore);
            restIfIdle(context, semaphore);
            released.add(key);
        }
        for (String key : List.copyOf(ties.waitedBy(leaseId))) {
            Semaphore semaphore = semaphores.get(key);
            semaphore.queue.withdraw(leaseId);
            context.wake(new WaitKey(NAME, key, leaseId), new Result.Rejected(Code.NOT_FOUND,
                    "lease " + leaseId + " ended (expired or revoked) while waiting for semaphore '" + key + "'"));
            grantWaiters(context, semaphore);
            restIfIdle(context, semaphore);
        }
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

    /** The semaphore, or null when it does not exist (nobody holds or waits, and it is not idle). */
    public SemaphoreView semaphore(String key) {
        Semaphore semaphore = semaphores.get(key);
        return semaphore == null ? null : view(semaphore);
    }

    /** Semaphores whose name starts with {@code prefix}, in name order, at most {@code limit}. */
    public List<SemaphoreView> semaphores(String prefix, int limit) {
        return Ties.prefixed(semaphores, prefix, limit, this::view);
    }

    /** Semaphores that exist, idle ones included. */
    public int semaphoreCount() {
        return semaphores.size();
    }

    /** The position semaphore {@code key} became idle at, or 0 when it is in use or does not exist. */
    public long idleSince(String key) {
        return semaphores.containsKey(key) ? names.idleSinceOf(key) : 0;
    }

    /** Semaphores with at least one holder. */
    public int heldCount() {
        int held = 0;
        for (Semaphore semaphore : semaphores.values()) {
            held += semaphore.rule.held > 0 ? 1 : 0;
        }
        return held;
    }

    /** Permits held, over every semaphore. */
    public long permitsHeld() {
        long permits = 0;
        for (Semaphore semaphore : semaphores.values()) {
            permits += semaphore.rule.held;
        }
        return permits;
    }

    /** Leases queued, over every semaphore. */
    public int waiterCount() {
        int waiters = 0;
        for (Semaphore semaphore : semaphores.values()) {
            waiters += semaphore.queue.waiterCount();
        }
        return waiters;
    }

    /** The leases queued for semaphore {@code key}. */
    public int waiterCount(String key) {
        Semaphore semaphore = semaphores.get(key);
        return semaphore == null ? 0 : semaphore.queue.waiterCount();
    }

    /** The permits lease {@code leaseId} holds of semaphore {@code key}; 0 when it holds none. */
    public int permitsHeld(String key, long leaseId) {
        Hold<Permits> holding = grantOf(key, leaseId);
        return holding == null ? 0 : holding.claim().permits();
    }

    private Hold<Permits> grantOf(String key, long leaseId) {
        Semaphore semaphore = semaphores.get(key);
        return semaphore == null ? null : semaphore.queue.holder(leaseId);
    }


    private SemaphoreView view(Semaphore semaphore) {
        List<SemaphoreView.Holder> holders = new ArrayList<>();
        for (Hold<Permits> h : semaphore.queue.holders()) {
            holders.add(new SemaphoreView.Holder(h.leaseId(), leases.get(h.leaseId()).clientId(), h.claim().permits(), h.token()));
        }
        List<SemaphoreView.Waiter> waiters = new ArrayList<>();
        for (Waiter<Permits> w : semaphore.queue.waiters()) {
            waiters.add(new SemaphoreView.Waiter(w.leaseId(), leases.get(w.leaseId()).clientId(), w.claim().permits(), w.joinedAt()));
        }
        return new SemaphoreView(semaphore.key, semaphore.rule.limit, semaphore.available(), List.copyOf(holders), List.copyOf(waiters),
                semaphore.createRevision, semaphore.version, names.idleSinceOf(semaphore.key));
    }

    // ---- snapshot section ------------------------------------------------------------------------

    /**
     * Semaphores by name (limit, creation, version, the position it became idle at or 0, holders in
     * grant order with permits, token and request, waiters in queue order with permits, request and
     * place), then the remembered
     * releases and ended acquire requests, oldest first.
     */
    @Override
    public void writeSnapshot(DataOutputStream out) throws IOException {
        out.writeInt(semaphores.size());
        for (Semaphore semaphore : semaphores.values()) {
            Wire.writeString(out, semaphore.key);
            out.writeInt(semaphore.rule.limit);
            out.writeLong(semaphore.createRevision);
            out.writeLong(semaphore.version);
            out.writeLong(names.idleSinceOf(semaphore.key));
            out.writeInt(semaphore.queue.holders().size());
            for (Hold<Permits> h : semaphore.queue.holders()) {
                out.writeLong(h.leaseId());
                out.writeInt(h.claim().permits());
                out.writeLong(h.claim().requestId());
                out.writeLong(h.token());
            }
            out.writeInt(semaphore.queue.waiterCount());
            for (Waiter<Permits> w : semaphore.queue.waiters()) {
                out.writeLong(w.leaseId());
                out.writeInt(w.claim().permits());
                out.writeLong(w.claim().requestId());
                out.writeLong(w.joinedAt());
            }
        }
        out.writeInt(recentReleases.size());
        for (Map.Entry<Long, Release> e : recentReleases.entries().entrySet()) {
            out.writeLong(e.getKey());
            Wire.writeString(out, e.getValue().key());
            out.writeLong(e.getValue().leaseId());
        }
        endedAcquires.write(out);
    }

    @Override
    public void readSnapshot(DataInputStream in, int formatVersion, Leases leases) throws IOException {
        if (formatVersion < 4) {
            return; // semaphores came with format 4
        }
        int count = Wire.count(in, "semaphore");
        for (int i = 0; i < count; i++) {
            String key = Wire.readString(in, Limits.MAX_METADATA_BYTES);
            int limit = in.readInt();
            Semaphore semaphore = new Semaphore(key, limit, in.readLong(), ties);
            semaphore.version = in.readLong();
            long idleSince = formatVersion >= 6 ? in.readLong() : 0; // idle semaphores came with format 6
            int holders = Wire.count(in, "holder");
            for (int h = 0; h < holders; h++) {
                long lease = leaseOf(leases, in.readLong(), key);
                Permits claim = new Permits(lease, in.readInt(), in.readLong());
                semaphore.queue.hold(claim, in.readLong());
            }
            int waiters = Wire.count(in, "waiter");
            for (int w = 0; w < waiters; w++) {
                long lease = leaseOf(leases, in.readLong(), key);
                Permits claim = new Permits(lease, in.readInt(), in.readLong());
                semaphore.queue.enqueue(claim, in.readLong());
            }
            if (semaphore.rule.held > limit || semaphore.queue.isEmpty() != (idleSince > 0)) {
                throw new SnapshotFormatException("snapshot is corrupt: semaphore '" + key + "' holds " + semaphore.rule.held
                        + " permits of " + limit + " with " + semaphore.queue.waiterCount() + " waiters, idle since " + idleSince);
            }
            semaphores.put(key, semaphore);
            names.take(key, NAME);
            if (idleSince > 0) {
                names.idle(key, NAME, idleSince);
            }
        }
        int releases = Wire.count(in, "release");
        for (int i = 0; i < releases; i++) {
            long token = in.readLong();
            recentReleases.remember(token, new Release(Wire.readString(in, Limits.MAX_METADATA_BYTES), in.readLong()));
        }
        endedAcquires.read(in);
    }

    private static long leaseOf(Leases leases, long id, String key) throws SnapshotFormatException {
        if (leases.get(id) == null) {
            throw new SnapshotFormatException("snapshot is corrupt: semaphore '" + key + "' refers to unknown lease " + id);
        }
        return id;
    }
}
