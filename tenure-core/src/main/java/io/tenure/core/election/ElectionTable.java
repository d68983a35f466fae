package io.tenure.core.election;

import io.tenure.core.Limits;
import io.tenure.core.SnapshotFormatException;
import io.tenure.core.election.ElectionResult.Candidate;
import io.tenure.core.election.ElectionResult.Elected;
import io.tenure.core.election.ElectionResult.Led;
import io.tenure.core.election.ElectionResult.Proclaimed;
import io.tenure.core.election.ElectionResult.Resigned;
import io.tenure.core.election.ElectionResult.Withdrawn;
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
import io.tenure.core.kernel.RecentReleases;
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
import java.util.List;
import java.util.SortedSet;
import java.util.TreeMap;

/**
 * Leader elections (etcd's Campaign/Proclaim/Resign/Leader/Observe, Curator's LeaderLatch): an
 * election is an exclusive grant queue whose holder, the leader, carries a value. One leader at a
 * time (I1), with a fencing token that is the stamp of its election (I2), so a deposed leader's
 * writes are refused by a fenced resource; candidates lead in the order they stood (I7). The
 * leader may change its value (proclaim) without a new election, and resigns to hand leadership
 * to the next candidate. An election exists while someone leads; its name is in the namespace it
 * shares with locks and semaphores ({@link Names}).
 *
 * <p>Observers watch the election's name: a PUT for every new leader and every proclaim (the
 * leader's lease, its value; {@code create_revision} is the leader's fencing token and
 * {@code mod_revision} the change's revision), and a DELETE when nobody leads.
 *
 * <p>Retries are idempotent as for locks: per (election, lease) one leadership or one candidacy,
 * a retried resign of a leadership already resigned succeeds again (the last
 * {@value #RECENT_RESIGNS}, remembered as a lock's releases are: {@link RecentReleases}), and a late copy of a campaign that already ended is refused.
 */
public final class ElectionTable implements Primitive {
    /** How many recent resignations are remembered, so a retried resign succeeds again. */
    public static final int RECENT_RESIGNS = 16_384;
    private static final int MAX_FIELD_BYTES = 1 << 20;

    /** Its name: the kind of its waits and names, and its snapshot section. */
    public static final String NAME = "election";
    /** Its commands' log tags (never reuse one). */
    public static final Kind KIND = new Kind(NAME, List.of(
            new CommandType<>(17, ElectionCampaign.class, (c, out) -> {
                Wire.writeString(out, c.key());
                out.writeLong(c.leaseId());
                Wire.writeBytes(out, c.value());
                out.writeBoolean(c.queue());
                out.writeLong(c.requestId());
            }, in -> new ElectionCampaign(Wire.readString(in, MAX_FIELD_BYTES), in.readLong(), Wire.readBytes(in, MAX_FIELD_BYTES),
                    in.readBoolean(), in.readLong())),
            new CommandType<>(18, ElectionProclaim.class, (c, out) -> {
                Wire.writeString(out, c.key());
                out.writeLong(c.leaseId());
                out.writeLong(c.fencingToken());
                Wire.writeBytes(out, c.value());
            }, in -> new ElectionProclaim(Wire.readString(in, MAX_FIELD_BYTES), in.readLong(), in.readLong(),
                    Wire.readBytes(in, MAX_FIELD_BYTES))),
            new CommandType<>(19, ElectionResign.class, (c, out) -> {
                Wire.writeString(out, c.key());
                out.writeLong(c.leaseId());
                out.writeLong(c.fencingToken());
            }, in -> new ElectionResign(Wire.readString(in, MAX_FIELD_BYTES), in.readLong(), in.readLong())),
            new CommandType<>(20, ElectionCancel.class, (c, out) -> {
                Wire.writeString(out, c.key());
                out.writeLong(c.leaseId());
                out.writeLong(c.requestId());
            }, in -> new ElectionCancel(Wire.readString(in, MAX_FIELD_BYTES), in.readLong(), in.readLong()))));

    /** A leader's or candidate's claim: its lease, its value, and the campaign that asked (0 = none). */
    record Stand(long leaseId, byte[] value, long requestId) implements Claim {}

    private static final GrantRule<Stand> ONE_LEADER = GrantRule.exclusive();

    private static final class Election {
        final String key;
        final long createRevision;
        final GrantQueue<Stand> queue;
        byte[] value;
        long valueRevision;
        long version;

        Election(String key, long createRevision, Ties ties) {
            this.key = key;
            this.createRevision = createRevision;
            this.queue = new GrantQueue<>(key, ONE_LEADER, ties);
        }

        /** The leader: the queue's one holder, there while the election exists. */
        Hold<Stand> leader() {
            return queue.holders().iterator().next();
        }
    }

    private final Leases leases;
    private final Names names;
    private final TreeMap<String, Election> elections = new TreeMap<>();
    private final Ties ties;
    private final RecentReleases recentResigns = new RecentReleases(RECENT_RESIGNS, "resignation");
    private final EndedAcquires endedCampaigns = new EndedAcquires();
    private final Arrivals arrivals;

    public ElectionTable(Leases leases, Names names) {
        this.leases = leases;
        this.ties = new Ties(leases);
        this.names = names;
        this.arrivals = new Arrivals(NAME, names, endedCampaigns);
    }

    @Override
    public Kind kind() {
        return KIND;
    }

    @Override
    public Result apply(ApplyContext context, Command command) {
        if (command instanceof ElectionCampaign c) {
            return campaign(context, c);
        } else if (command instanceof ElectionProclaim c) {
            return proclaim(context, c);
        } else if (command instanceof ElectionResign c) {
            return resign(context, c);
        } else if (command instanceof ElectionCancel c) {
            return cancel(context, c);
        }
        throw new IllegalArgumentException("not an election command: " + command.getClass().getName());
    }

    private Result campaign(ApplyContext context, ElectionCampaign c) {
        String problem = Limits.checkKey("name", c.key());
        if (problem == null) {
            problem = Limits.checkMetadata("value", c.value());
        }
        Lease lease = leases.get(c.leaseId());
        Result.Rejected refused = arrivals.refusal(problem, lease, c.key(), c.leaseId(), c.requestId());
        if (refused != null) {
            return refused;
        }
        Stand stand = new Stand(lease.id(), valueOf(c.value()), c.requestId());
        Election election = elections.get(c.key());
        if (election == null) {
            long token = context.stamp();
            election = new Election(c.key(), token, ties);
            elections.put(c.key(), election);
            names.take(c.key(), NAME);
            lead(context, election, election.queue.hold(stand, token), null);
            return new Elected(c.key(), lease.id(), token, false);
        }
        if (election.leader().leaseId() == lease.id()) {
            return new Elected(c.key(), lease.id(), election.leader().token(), true);
        }
        Waiter<Stand> waiting = election.queue.waiter(lease.id());
        if (waiting != null) {
            return new Candidate(c.key(), lease.id(), waiting.joinedAt(), election.queue.ahead(lease.id()), leaderClient(election));
        }
        if (!c.queue()) {
            return new Led(c.key(), leaderClient(election), election.leader().leaseId(), election.queue.waiterCount());
        }
        int ahead = election.queue.waiterCount();
        election.queue.enqueue(stand, context.position());
        return new Candidate(c.key(), lease.id(), context.position(), ahead, leaderClient(election));
    }

    private Result proclaim(ApplyContext context, ElectionProclaim c) {
        String problem = Limits.checkKey("name", c.key());
        if (problem == null) {
            problem = Limits.checkMetadata("value", c.value());
        }
        if (problem != null) {
            return new Result.Rejected(Code.INVALID_ARGUMENT, problem);
        }
        Result.Rejected notLeader = notLeader(c.key(), c.leaseId(), c.fencingToken());
        if (notLeader != null) {
            return notLeader;
        }
        Election election = elections.get(c.key());
        KeyValue before = keyValue(election);
        election.value = valueOf(c.value());
        election.valueRevision = context.stamp();
        election.version++;
        context.emit(new WatchEvent(election.valueRevision, WatchEvent.Type.PUT, keyValue(election), before, NAME));
        return new Proclaimed(c.key(), election.leader().token(), election.valueRevision);
    }

    private Result resign(ApplyContext context, ElectionResign c) {
        String problem = Limits.checkKey("name", c.key());
        if (problem != null) {
            return new Result.Rejected(Code.INVALID_ARGUMENT, problem);
        }
        Election election = elections.get(c.key());
        if (election != null && election.leader().leaseId() == c.leaseId() && election.leader().token() == c.fencingToken()) {
            endedCampaigns.ended(context, c.key(), c.leaseId(), election.leader().claim().requestId());
            long next = handOver(context, election);
            recentResigns.letGo(c.key(), c.leaseId(), c.fencingToken(), next);
            return new Resigned(c.key(), next);
        }
        Long before = recentResigns.nextAfter(c.key(), c.leaseId(), c.fencingToken());
        if (before != null) {
            return new Resigned(c.key(), before);
        }
        return notLeader(c.key(), c.leaseId(), c.fencingToken());
    }

    private Result cancel(ApplyContext context, ElectionCancel c) {
        String problem = Limits.checkKey("name", c.key());
        if (problem != null) {
            return new Result.Rejected(Code.INVALID_ARGUMENT, problem);
        }
        Election election = elections.get(c.key());
        if (election != null && election.leader().leaseId() == c.leaseId()) {
            // Elected before the withdrawal: the caller leads now.
            return new Elected(c.key(), c.leaseId(), election.leader().token(), true);
        }
        endedCampaigns.ended(context, c.key(), c.leaseId(), c.requestId());
        if (election == null) {
            return new Withdrawn(c.key(), c.leaseId(), "", 0);
        }
        Waiter<Stand> withdrawn = election.queue.withdraw(c.leaseId());
        Withdrawn answer = new Withdrawn(c.key(), c.leaseId(), leaderClient(election), election.queue.waiterCount());
        if (withdrawn != null) {
            endedCampaigns.ended(context, c.key(), c.leaseId(), withdrawn.claim().requestId());
            context.wake(new WaitKey(NAME, c.key(), c.leaseId()), answer);
        }
        return answer;
    }

    /**
     * Null when lease {@code leaseId} leads election {@code key} with fencing token {@code token};
     * otherwise the refusal: NOT_FOUND for a lease that is gone, FAILED_PRECONDITION naming the
     * leader for any other. The one leader check of proclaim and resign.
     */
    public Result.Rejected notLeader(String key, long leaseId, long token) {
        Election election = elections.get(key);
        if (election != null && election.leader().leaseId() == leaseId && election.leader().token() == token) {
            return null;
        }
        if (leases.get(leaseId) == null) {
            return new Result.Rejected(Code.NOT_FOUND, Leases.notFound(leaseId));
        }
        if (election == null) {
            return new Result.Rejected(Code.FAILED_PRECONDITION, "election '" + key + "' has no leader");
        }
        if (election.leader().leaseId() != leaseId) {
            return new Result.Rejected(Code.FAILED_PRECONDITION, "lease " + leaseId + " does not lead election '" + key
                    + "' (lease " + election.leader().leaseId() + ", client '" + leaderClient(election) + "', leads)");
        }
        return new Result.Rejected(Code.FAILED_PRECONDITION, "fencing token " + token + " is stale for election '" + key
                + "': lease " + leaseId + " leads it with token " + election.leader().token());
    }

    /** The leader steps down: the first candidate leads with a new token, or the election ends. */
    private long handOver(ApplyContext context, Election election) {
        KeyValue before = keyValue(election);
        election.queue.release(election.leader().leaseId());
        election.queue.grantWaiters(context::stamp, hold -> {
            lead(context, election, hold, before);
            context.wake(new WaitKey(NAME, election.key, hold.leaseId()), new Elected(election.key, hold.leaseId(), hold.token(), false));
        });
        if (election.queue.holders().isEmpty()) {
            elections.remove(election.key);
            names.free(election.key, NAME);
            long revision = context.stamp();
            context.emit(new WatchEvent(revision, WatchEvent.Type.DELETE, KeyValue.deleted(election.key, revision), before, NAME));
            return 0;
        }
        return election.leader().token();
    }

    private void lead(ApplyContext context, Election election, Hold<Stand> hold, KeyValue before) {
        election.value = hold.claim().value();
        election.valueRevision = hold.token();
        election.version++;
        context.emit(new WatchEvent(hold.token(), WatchEvent.Type.PUT, keyValue(election), before, NAME));
    }

    @Override
    public void leaseEnded(ApplyContext context, long leaseId, List<String> released) {
        for (String key : List.copyOf(ties.heldBy(leaseId))) {
            handOver(context, elections.get(key));
            released.add(key);
        }
        for (String key : List.copyOf(ties.waitedBy(leaseId))) {
            elections.get(key).queue.withdraw(leaseId);
            context.wake(new WaitKey(NAME, key, leaseId), new Result.Rejected(Code.NOT_FOUND,
                    "lease " + leaseId + " ended (expired or revoked) while campaigning in election '" + key + "'"));
        }
    }

    private String leaderClient(Election election) {
        return leases.get(election.leader().leaseId()).clientId();
    }

    private KeyValue keyValue(Election election) {
        // A copy: events leave the state. create_revision is the leader's token, mod_revision the change's.
        return new KeyValue(election.key, leaderClient(election), election.value.clone(), election.leader().leaseId(),
                election.leader().token(), election.valueRevision, election.version);
    }

    private static byte[] valueOf(byte[] value) {
        return value == null ? new byte[0] : value.clone();
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

    /** The election's leader and candidates, or null when nobody leads. */
    public ElectionView election(String key) {
        Election election = elections.get(key);
        return election == null ? null : view(election);
    }

    /** Elections with a leader whose name starts with {@code prefix}, in name order, at most {@code limit}. */
    public List<ElectionView> elections(String prefix, int limit) {
        return Ties.prefixed(elections, prefix, limit, this::view);
    }

    public int electionCount() {
        return elections.size();
    }

    /** Leases campaigning, over every election. */
    public int candidateCount() {
        int candidates = 0;
        for (Election election : elections.values()) {
            candidates += election.queue.waiterCount();
        }
        return candidates;
    }

    /** The candidates of election {@code key}. */
    public int candidateCount(String key) {
        Election election = elections.get(key);
        return election == null ? 0 : election.queue.waiterCount();
    }


    private ElectionView view(Election election) {
        List<ElectionView.Candidate> candidates = new ArrayList<>(election.queue.waiterCount());
        for (Waiter<Stand> w : election.queue.waiters()) {
            candidates.add(new ElectionView.Candidate(w.leaseId(), leases.get(w.leaseId()).clientId(), w.joinedAt()));
        }
        return new ElectionView(election.key, election.leader().leaseId(), leaderClient(election), election.leader().token(),
                election.value.clone(), election.createRevision, election.valueRevision, election.version, List.copyOf(candidates));
    }

    // ---- snapshot section ------------------------------------------------------------------------

    /**
     * Elections by name (creation, leader with token, campaign and stand value, the current value
     * and its revision, version, candidates in order with value, campaign and place), then the
     * remembered resignations and ended campaigns, oldest first.
     */
    @Override
    public void writeSnapshot(DataOutputStream out) throws IOException {
        out.writeInt(elections.size());
        for (Election election : elections.values()) {
            Wire.writeString(out, election.key);
            out.writeLong(election.createRevision);
            out.writeLong(election.leader().leaseId());
            Wire.writeBytes(out, election.leader().claim().value());
            out.writeLong(election.leader().claim().requestId());
            out.writeLong(election.leader().token());
            Wire.writeBytes(out, election.value);
            out.writeLong(election.valueRevision);
            out.writeLong(election.version);
            out.writeInt(election.queue.waiterCount());
            for (Waiter<Stand> w : election.queue.waiters()) {
                out.writeLong(w.leaseId());
                Wire.writeBytes(out, w.claim().value());
                out.writeLong(w.claim().requestId());
                out.writeLong(w.joinedAt());
            }
        }
        recentResigns.write(out);
        endedCampaigns.write(out);
    }

    @Override
    public void readSnapshot(DataInputStream in, int formatVersion, Leases leases) throws IOException {
        if (formatVersion < 5) {
            return; // elections came with format 5
        }
        int count = Wire.count(in, "election");
        for (int i = 0; i < count; i++) {
            String key = Wire.readString(in, Limits.MAX_METADATA_BYTES);
            Election election = new Election(key, in.readLong(), ties);
            long leader = leaseOf(leases, in.readLong(), key);
            Stand stand = new Stand(leader, Wire.readBytes(in, Limits.MAX_METADATA_BYTES), in.readLong());
            election.queue.hold(stand, in.readLong());
            election.value = Wire.readBytes(in, Limits.MAX_METADATA_BYTES);
            election.valueRevision = in.readLong();
            election.version = in.readLong();
            int candidates = Wire.count(in, "candidate");
            for (int w = 0; w < candidates; w++) {
                long lease = leaseOf(leases, in.readLong(), key);
                Stand waiting = new Stand(lease, Wire.readBytes(in, Limits.MAX_METADATA_BYTES), in.readLong());
                election.queue.enqueue(waiting, in.readLong());
            }
            elections.put(key, election);
            names.take(key, NAME);
        }
        recentResigns.read(in);
        endedCampaigns.read(in);
    }

    private static long leaseOf(Leases leases, long id, String key) throws SnapshotFormatException {
        if (leases.get(id) == null) {
            throw new SnapshotFormatException("snapshot is corrupt: election '" + key + "' refers to unknown lease " + id);
        }
        return id;
    }
}
