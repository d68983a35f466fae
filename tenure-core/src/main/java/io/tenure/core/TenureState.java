package io.tenure.core;

import io.tenure.core.Command.LeaseExpire;
import io.tenure.core.Command.LeaseGrant;
import io.tenure.core.Command.LeaseRenew;
import io.tenure.core.Command.LeaseRevoke;
import io.tenure.core.Command.LockAcquire;
import io.tenure.core.Command.LockCancel;
import io.tenure.core.Command.LockRelease;
import io.tenure.core.Result.Code;
import io.tenure.core.Result.EndReason;
import io.tenure.core.watch.EventLog;
import io.tenure.core.watch.KeyValue;
import io.tenure.core.watch.WatchEvent;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Set;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The replicated state of Tenure: leases, the locks they hold, the FIFO queues of leases
 * waiting for them, and the log of recent changes that watches replay.
 *
 * <p>It changes only through {@link #apply(long, Command)}, called on every member with the same
 * commands at the same log positions, so every member holds the same state (I8). It reads no
 * clock, makes no random choice and iterates only ordered collections while applying.
 *
 * <p><b>Fencing tokens and revisions.</b> Every grant and every watch event gets a <em>stamp</em>:
 * the log position of the command that caused it, or, when one command causes several (a lease
 * that ends holding three locks hands all three over), the next number after the previous stamp.
 * Log positions of consecutive commands are far apart (the server packs the Raft index with the
 * command's slot in its entry), so stamps are unique, strictly increasing, and equal to the log
 * position in the common case. A lock's fencing token is the stamp of its grant, also after a
 * hand-off or an expiry (I2).
 *
 * <p>Not thread-safe: the server applies from one thread and guards reads.
 */
public final class TenureState {
    /** How many recent releases are remembered, so a retried release succeeds again instead of failing. */
    static final int RECENT_RELEASES = 16_384;
    /** Default number of watch events kept for replay. */
    public static final int DEFAULT_EVENT_LOG_CAPACITY = 65_536;

    private final Map<Long, Lease> leases = new HashMap<>();
    private final TreeMap<String, Lock> locks = new TreeMap<>();
    /** Released (token → release), in release order, oldest evicted first: bounded and deterministic. */
    private final LinkedHashMap<Long, Release> recentReleases = new LinkedHashMap<>(1024, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, Release> eldest) {
            return size() > RECENT_RELEASES;
        }
    };
    private final EventLog events;
    /** Client id → its leases' ids: for the per-client limits. Looked up, never iterated. */
    private final Map<String, Set<Long>> leasesByClient = new HashMap<>();
    /** Member name → client endpoint, as each member announced it. */
    private final TreeMap<String, String> endpoints = new TreeMap<>();

    private long appliedPosition;
    private long lastStamp;
    /** The position being applied, and the effects of the command being applied. */
    private long position;
    private List<Effect> effects;

    public TenureState() {
        this(DEFAULT_EVENT_LOG_CAPACITY);
    }

    public TenureState(int eventLogCapacity) {
        this.events = new EventLog(eventLogCapacity);
    }

    /**
     * Applies one committed command. Rejections are results, never exceptions: an exception here
     * would stop the member.
     *
     * @param position the command's log position, larger than every position applied before
     */
    public Applied apply(long position, Command command) {
        if (position <= appliedPosition) {
            throw new IllegalArgumentException("position " + position + " is not after the last applied " + appliedPosition);
        }
        if (command instanceof Command.ReadBarrier) {
            // Not even the revision moves: a read must not look like a change to a watcher, or
            // to anyone comparing revisions.
            return Applied.of(READ_BARRIER_PASSED);
        }
        this.position = position;
        this.appliedPosition = position;
        this.effects = new ArrayList<>(0);
        Result result = dispatch(command);
        List<Effect> out = effects;
        effects = null;
        return out.isEmpty() ? Applied.of(result) : new Applied(result, out);
    }

    private static final Result READ_BARRIER_PASSED = new Result.Skipped("a read barrier changes nothing");

    // Java 17 has no pattern switch; the chain covers every permitted subtype of the sealed Command.
    private Result dispatch(Command command) {
        if (command instanceof LockAcquire c) {
            return acquire(c);
        } else if (command instanceof LockRelease c) {
            return release(c);
        } else if (command instanceof LeaseRenew c) {
            return renewLeases(c);
        } else if (command instanceof LockCancel c) {
            return cancel(c);
        } else if (command instanceof LeaseGrant c) {
            return grantLease(c);
        } else if (command instanceof LeaseRevoke c) {
            return revokeLease(c);
        } else if (command instanceof LeaseExpire c) {
            return expireLease(c);
        } else if (command instanceof Command.MemberEndpoint c) {
            return recordEndpoint(c);
        }
        throw new IllegalArgumentException("unknown command " + command.getClass().getName());
    }

    private Result grantLease(LeaseGrant c) {
        String problem = firstProblem(
                c.leaseId() == 0 ? "lease id must not be 0" : null,
                Limits.checkTtl("ttl", c.ttlMillis()),
                Limits.checkClientId("client_id", c.clientId()));
        if (problem != null) {
            return rejected(Code.INVALID_ARGUMENT, problem);
        }
        Lease existing = leases.get(c.leaseId());
        if (existing != null) {
            if (existing.ttlMillis == c.ttlMillis() && existing.clientId.equals(clientIdOf(c))) {
                return new Result.LeaseGranted(c.leaseId(), c.ttlMillis());
            }
            return rejected(Code.ALREADY_EXISTS, "lease " + c.leaseId() + " already exists for another client or TTL");
        }
        Lease lease = new Lease(c.leaseId(), c.ttlMillis(), clientIdOf(c), position);
        leases.put(c.leaseId(), lease);
        indexByClient(lease);
        return new Result.LeaseGranted(c.leaseId(), c.ttlMillis());
    }

    private static String clientIdOf(LeaseGrant c) {
        return c.clientId() == null ? "" : c.clientId();
    }

    private Result recordEndpoint(Command.MemberEndpoint c) {
        if (c.member() == null || c.member().isEmpty() || c.clientEndpoint() == null
                || c.member().length() > 64 || c.clientEndpoint().length() > 256) {
            return rejected(Code.INVALID_ARGUMENT, "member endpoint needs a member name (at most 64 characters) and an endpoint (at most 256)");
        }
        endpoints.put(c.member(), c.clientEndpoint());
        return new Result.EndpointRecorded(c.member(), c.clientEndpoint());
    }

    private Result renewLeases(LeaseRenew c) {
        long[] ids = c.leaseIds();
        long[] ttls = new long[ids.length];
        for (int i = 0; i < ids.length; i++) {
            Lease lease = leases.get(ids[i]);
            if (lease != null) {
                lease.renewedAt = position;
                ttls[i] = lease.ttlMillis;
            }
        }
        return new Result.LeasesRenewed(ids, ttls);
    }

    private Result revokeLease(LeaseRevoke c) {
        Lease lease = leases.get(c.leaseId());
        if (lease == null) {
            return rejected(Code.NOT_FOUND, leaseNotFound(c.leaseId()));
        }
        return endLease(lease, EndReason.REVOKED);
    }

    private Result expireLease(LeaseExpire c) {
        Lease lease = leases.get(c.leaseId());
        if (lease == null) {
            return new Result.Skipped("lease " + c.leaseId() + " already ended");
        }
        if (lease.renewedAt != c.renewedAt()) {
            return new Result.Skipped("lease " + c.leaseId() + " was renewed at " + lease.renewedAt
                    + " after the expiry was computed against " + c.renewedAt());
        }
        return endLease(lease, EndReason.EXPIRED);
    }

    private Result endLease(Lease lease, EndReason reason) {
        List<String> released = new ArrayList<>(lease.held);
        for (String key : released) {
            handOver(locks.get(key));
        }
        for (String key : lease.waiting) {
            locks.get(key).waiters.remove(lease.id);
            effects.add(new Effect.WaitEnded(key, lease.id));
        }
        leases.remove(lease.id);
        Set<Long> ofClient = leasesByClient.get(lease.clientId);
        if (ofClient != null && ofClient.remove(lease.id) && ofClient.isEmpty()) {
            leasesByClient.remove(lease.clientId);
        }
        return new Result.LeaseEnded(lease.id, reason, List.copyOf(released));
    }

    private Result acquire(LockAcquire c) {
        String problem = firstProblem(Limits.checkKey("name", c.key()), Limits.checkMetadata("metadata", c.metadata()));
        if (problem != null) {
            return rejected(Code.INVALID_ARGUMENT, problem);
        }
        Lease lease = leases.get(c.leaseId());
        if (lease == null) {
            return rejected(Code.NOT_FOUND, leaseNotFound(c.leaseId()));
        }
        Lock lock = locks.get(c.key());
        if (lock == null) {
            long token = stamp();
            lock = new Lock(c.key(), token);
            locks.put(c.key(), lock);
            holdBy(lock, lease, metadataOf(c.metadata()), token, null);
            return new Result.Granted(c.key(), lease.id, token, false);
        }
        if (lock.holder == lease) {
            return new Result.Granted(c.key(), lease.id, lock.token, true);
        }
        Waiter waiting = lock.waiters.get(lease.id);
        if (waiting != null) {
            return new Result.Queued(c.key(), lease.id, waiting.joinedAt, lock.ahead(lease.id), lock.holder.clientId);
        }
        if (!c.queue()) {
            return new Result.Busy(c.key(), lock.holder.clientId, lock.holder.id, lock.waiters.size());
        }
        int ahead = lock.waiters.size();
        lock.waiters.put(lease.id, new Waiter(lease, metadataOf(c.metadata()), position));
        lease.waiting.add(c.key());
        return new Result.Queued(c.key(), lease.id, position, ahead, lock.holder.clientId);
    }

    private Result cancel(LockCancel c) {
        String problem = Limits.checkKey("name", c.key());
        if (problem != null) {
            return rejected(Code.INVALID_ARGUMENT, problem);
        }
        Lock lock = locks.get(c.key());
        if (lock != null) {
            if (lock.holder.id == c.leaseId()) {
                // The grant won the race with the timeout: the caller owns the lock now.
                return new Result.Granted(c.key(), c.leaseId(), lock.token, true);
            }
            if (lock.waiters.remove(c.leaseId()) != null) {
                leases.get(c.leaseId()).waiting.remove(c.key());
            }
        }
        return new Result.Cancelled(c.key(), c.leaseId());
    }

    private Result release(LockRelease c) {
        String problem = Limits.checkKey("key", c.key());
        if (problem != null) {
            return rejected(Code.INVALID_ARGUMENT, problem);
        }
        Lock lock = locks.get(c.key());
        if (lock != null && lock.holder.id == c.leaseId() && lock.token == c.fencingToken()) {
            long next = handOver(lock);
            recentReleases.put(c.fencingToken(), new Release(c.key(), c.leaseId(), next));
            return new Result.Released(c.key(), next);
        }
        Release before = recentReleases.get(c.fencingToken());
        if (before != null && before.key.equals(c.key()) && before.leaseId == c.leaseId()) {
            return new Result.Released(c.key(), before.nextToken);
        }
        if (!leases.containsKey(c.leaseId())) {
            return rejected(Code.NOT_FOUND, leaseNotFound(c.leaseId()));
        }
        if (lock == null) {
            return rejected(Code.FAILED_PRECONDITION, "lock '" + c.key() + "' is not held");
        }
        if (lock.holder.id != c.leaseId()) {
            return rejected(Code.FAILED_PRECONDITION, "lock '" + c.key() + "' is not held by lease " + c.leaseId());
        }
        return rejected(Code.FAILED_PRECONDITION, "fencing token " + c.fencingToken() + " is stale for lock '"
                + c.key() + "': lease " + c.leaseId() + " holds it with token " + lock.token);
    }

    /**
     * Takes the lock from its holder and gives it to the first waiter, who gets a new token;
     * with nobody waiting the lock is deleted.
     *
     * @return the next holder's fencing token, or 0 when the lock became free
     */
    private long handOver(Lock lock) {
        Lease previous = lock.holder;
        previous.held.remove(lock.key);
        KeyValue before = lock.keyValue();
        var first = lock.waiters.entrySet().iterator();
        if (!first.hasNext()) {
            locks.remove(lock.key);
            long revision = stamp();
            emit(new WatchEvent(revision, WatchEvent.Type.DELETE, KeyValue.deleted(lock.key, revision), before));
            return 0;
        }
        Waiter next = first.next().getValue();
        first.remove();
        // Every waiter's lease is alive: a lease that ends withdraws its waits in the same command.
        next.lease.waiting.remove(lock.key);
        long token = stamp();
        holdBy(lock, next.lease, next.metadata, token, before);
        effects.add(new Effect.WaiterGranted(lock.key, next.lease.id, token));
        return token;
    }

    private void holdBy(Lock lock, Lease lease, byte[] metadata, long token, KeyValue before) {
        lock.holder = lease;
        lock.metadata = metadata;
        lock.token = token;
        lock.version++;
        lease.held.add(lock.key);
        emit(new WatchEvent(token, WatchEvent.Type.PUT, lock.keyValue(), before));
    }

    private void emit(WatchEvent event) {
        events.append(event);
        effects.add(new Effect.Watched(event));
    }

    private long stamp() {
        lastStamp = Math.max(position, lastStamp + 1);
        return lastStamp;
    }

    private static Result rejected(Code code, String message) {
        return new Result.Rejected(code, message);
    }

    private static String leaseNotFound(long leaseId) {
        return "lease " + leaseId + " not found (never granted, expired or revoked)";
    }

    private static String firstProblem(String... problems) {
        for (String p : problems) {
            if (p != null) {
                return p;
            }
        }
        return null;
    }

    private static byte[] metadataOf(byte[] metadata) {
        return metadata == null ? new byte[0] : metadata.clone();
    }

    // ---- reads ---------------------------------------------------------------------------------

    /** The position of the latest applied command. */
    public long appliedPosition() {
        return appliedPosition;
    }

    /** The store revision: the latest stamp or applied position, whichever is larger. */
    public long revision() {
        return Math.max(appliedPosition, lastStamp);
    }

    public EventLog events() {
        return events;
    }

    /** Member name → client endpoint, as announced. */
    public Map<String, String> memberEndpoints() {
        return java.util.Collections.unmodifiableMap(endpoints);
    }

    public int leaseCount() {
        return leases.size();
    }

    /** How many releases are remembered for idempotent retries (at most {@value #RECENT_RELEASES}). */
    public int recentReleaseCount() {
        return recentReleases.size();
    }

    /** The live leases of client id {@code clientId}. */
    public int leaseCount(String clientId) {
        Set<Long> ids = leasesByClient.get(clientId);
        return ids == null ? 0 : ids.size();
    }

    /** The locks held or waited for by the leases of client id {@code clientId}. */
    public int lockCount(String clientId) {
        Set<Long> ids = leasesByClient.get(clientId);
        if (ids == null) {
            return 0;
        }
        int count = 0;
        for (long id : ids) {
            Lease lease = leases.get(id);
            count += lease.held.size() + lease.waiting.size();
        }
        return count;
    }

    /** The leases queued for lock {@code key}. */
    public int waiterCount(String key) {
        Lock lock = locks.get(key);
        return lock == null ? 0 : lock.waiters.size();
    }

    /** Whether lease {@code leaseId} holds or waits for lock {@code key}. */
    public boolean holdsOrWaits(long leaseId, String key) {
        Lease lease = leases.get(leaseId);
        return lease != null && (lease.held.contains(key) || lease.waiting.contains(key));
    }

    /** Leases queued for locks, over every lock. */
    public int waiterCount() {
        int waiters = 0;
        for (Lock lock : locks.values()) {
            waiters += lock.waiters.size();
        }
        return waiters;
    }

    public int lockCount() {
        return locks.size();
    }

    /** The position of the lease's latest grant or renewal, or -1 when it does not exist. */
    public long renewedAt(long leaseId) {
        Lease lease = leases.get(leaseId);
        return lease == null ? -1 : lease.renewedAt;
    }

    public LeaseView lease(long leaseId) {
        Lease lease = leases.get(leaseId);
        return lease == null ? null : lease.view();
    }

    /** Every lease, ordered by id. */
    public List<LeaseView> leases() {
        return leases.values().stream().sorted((a, b) -> Long.compare(a.id, b.id)).map(Lease::view).toList();
    }

    public LockView lock(String key) {
        Lock lock = locks.get(key);
        return lock == null ? null : lock.view();
    }

    /** Held locks whose key starts with {@code prefix}, in key order, at most {@code limit}. */
    public List<LockView> locks(String prefix, int limit) {
        return locks.tailMap(prefix, true).values().stream()
                .takeWhile(lock -> lock.key.startsWith(prefix))
                .limit(limit).map(Lock::view).toList();
    }

    // ---- snapshots -----------------------------------------------------------------------------

    /** Writes the whole state (not the watch event log) in the snapshot format, with its checksum. */
    public void writeSnapshot(OutputStream out) throws IOException {
        SnapshotFormat.write(this, out);
    }

    /**
     * Reads a state written by {@link #writeSnapshot}. Watches may replay from the snapshot's
     * revision onward only: the events before it were not kept.
     *
     * @throws SnapshotFormatException when the stream is not a snapshot, has an unknown format
     *                                 version, is truncated or fails its checksum
     */
    public static TenureState readSnapshot(InputStream in, int eventLogCapacity) throws IOException {
        TenureState state = new TenureState(eventLogCapacity);
        SnapshotFormat.read(state, in);
        state.leases.values().forEach(state::indexByClient);
        state.events.resetTo(state.revision() + 1);
        return state;
    }

    private void indexByClient(Lease lease) {
        leasesByClient.computeIfAbsent(lease.clientId, k -> new HashSet<>()).add(lease.id);
    }

    // ---- the records, package-private for SnapshotFormat -----------------------------------------

    Map<Long, Lease> leaseMap() {
        return leases;
    }

    TreeMap<String, Lock> lockMap() {
        return locks;
    }

    TreeMap<String, String> endpointMap() {
        return endpoints;
    }

    LinkedHashMap<Long, Release> recentReleaseMap() {
        return recentReleases;
    }

    long lastStamp() {
        return lastStamp;
    }

    void restorePositions(long appliedPosition, long lastStamp) {
        this.appliedPosition = appliedPosition;
        this.lastStamp = lastStamp;
    }

    static final class Lease {
        final long id;
        final long ttlMillis;
        final String clientId;
        final long grantedAt;
        long renewedAt;
        final TreeSet<String> held = new TreeSet<>();
        final TreeSet<String> waiting = new TreeSet<>();

        Lease(long id, long ttlMillis, String clientId, long grantedAt) {
            this.id = id;
            this.ttlMillis = ttlMillis;
            this.clientId = clientId;
            this.grantedAt = grantedAt;
            this.renewedAt = grantedAt;
        }

        LeaseView view() {
            return new LeaseView(id, ttlMillis, clientId, grantedAt, renewedAt, List.copyOf(held), List.copyOf(waiting));
        }
    }

    static final class Lock {
        final String key;
        final long createRevision;
        Lease holder;
        byte[] metadata;
        long token;
        long version;
        /** Waiting leases by id, in join order. */
        final LinkedHashMap<Long, Waiter> waiters = new LinkedHashMap<>();

        Lock(String key, long createRevision) {
            this.key = key;
            this.createRevision = createRevision;
        }

        int ahead(long leaseId) {
            int n = 0;
            for (Long id : waiters.keySet()) {
                if (id == leaseId) {
                    return n;
                }
                n++;
            }
            return n;
        }

        KeyValue keyValue() {
            // A copy: events leave the state, and the state must not change through them.
            return new KeyValue(key, holder.clientId, metadata.clone(), holder.id, createRevision, token, version);
        }

        LockView view() {
            List<LockView.Waiter> queue = new ArrayList<>(waiters.size());
            for (Waiter w : waiters.values()) {
                queue.add(new LockView.Waiter(w.lease.id, w.lease.clientId, w.joinedAt));
            }
            return new LockView(key, holder.clientId, holder.id, token, metadata.clone(), createRevision, version, List.copyOf(queue));
        }
    }

    record Waiter(Lease lease, byte[] metadata, long joinedAt) {}

    record Release(String key, long leaseId, long nextToken) {}
}
