package io.tenure.core.scope;

import io.tenure.core.Limits;
import io.tenure.core.SnapshotFormatException;
import io.tenure.core.kernel.ApplyContext;
import io.tenure.core.kernel.Claim;
import io.tenure.core.kernel.Command;
import io.tenure.core.kernel.CommandFormatException;
import io.tenure.core.kernel.CommandType;
import io.tenure.core.kernel.EndedAcquires;
import io.tenure.core.kernel.GrantQueue;
import io.tenure.core.kernel.GrantRule;
import io.tenure.core.kernel.Hold;
import io.tenure.core.kernel.Leases;
import io.tenure.core.kernel.Primitive;
import io.tenure.core.kernel.RecentReleases;
import io.tenure.core.kernel.Result;
import io.tenure.core.kernel.Result.Code;
import io.tenure.core.kernel.Ties;
import io.tenure.core.kernel.WaitKey;
import io.tenure.core.kernel.Waiter;
import io.tenure.core.kernel.Wire;
import io.tenure.core.scope.ScopeResult.Blocker;
import io.tenure.core.scope.ScopeResult.Busy;
import io.tenure.core.scope.ScopeResult.Cancelled;
import io.tenure.core.scope.ScopeResult.Deadlock;
import io.tenure.core.scope.ScopeResult.Granted;
import io.tenure.core.scope.ScopeResult.Queued;
import io.tenure.core.scope.ScopeResult.Released;
import io.tenure.core.scope.ScopeResult.Step;

import java.io.DataInput;
import java.io.DataInputStream;
import java.io.DataOutput;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Lock scopes (seed 003): sets of inodes, paths and byte ranges, each part shared or exclusive,
 * held by leases. One {@link GrantQueue} serves the whole scope space with a {@link GrantRule}
 * that knows conflicts from a {@link ScopeIndex}: a set is granted, all or nothing, as soon as no
 * part of it conflicts with a holder or with an earlier waiter it conflicts with. So a writer to
 * [200,300) is not stuck behind a writer to [0,100), and a stream of overlapping readers cannot
 * starve a waiting writer (each new reader conflicts with the queued writer and queues behind it).
 *
 * <p>A set's grant takes one fencing token, the stamp of its grant (I2): above every token granted
 * before it, so a resource that keeps the highest token per scope refuses a late writer.
 *
 * <p>A lease that would wait in a cycle of waits (it holds what another lease waits for, directly
 * or through others, or a part of its own) gets a {@link Deadlock} naming the cycle, and nothing is
 * queued. Cycles can only close when a set is queued (a set granted at once blocks nobody queued:
 * it would have had to follow them), so that is the only check.
 *
 * <p>Named scopes are today's locks ({@link io.tenure.core.lock.LockTable}, shared mode being its
 * read mode); a set here holds inodes, paths and ranges.
 */
public final class ScopeTable implements Primitive {
    /** Its name: the kind of its waits, and its snapshot section. */
    public static final String NAME = "scope";
    /** The most parts one set may have. */
    public static final int MAX_SCOPES = 64;
    /** How many recent releases are remembered, so a retried release succeeds again. */
    public static final int RECENT_RELEASES = 16_384;
    /** The one queue's name (and the key of its remembered releases and ended acquires). */
    private static final String QUEUE = "scopes";
    private static final int MAX_FIELD_BYTES = 1 << 20;

    /** Its name and its commands' log tags (never reuse one). */
    public static final Kind KIND = new Kind(NAME, List.of(
            new CommandType<>(110, ScopeAcquire.class, (c, out) -> {
                out.writeLong(c.leaseId());
                writeScopes(out, c.scopes());
                Wire.writeBytes(out, c.metadata());
                out.writeBoolean(c.queue());
                out.writeLong(c.requestId());
            }, in -> new ScopeAcquire(in.readLong(), readScopes(in), Wire.readBytes(in, MAX_FIELD_BYTES), in.readBoolean(),
                    in.readLong())),
            new CommandType<>(111, ScopeRelease.class, (c, out) -> {
                out.writeLong(c.leaseId());
                out.writeLong(c.fencingToken());
            }, in -> new ScopeRelease(in.readLong(), in.readLong())),
            new CommandType<>(112, ScopeCancel.class, (c, out) -> {
                out.writeLong(c.leaseId());
                out.writeLong(c.requestId());
            }, in -> new ScopeCancel(in.readLong(), in.readLong()))));

    /** A set held or waited for; {@code id} is the log position of its acquire. */
    record ScopeClaim(long id, long leaseId, List<ScopeRequest> scopes, byte[] metadata, long requestId) implements Claim {
        /** The id of part {@code i} in a {@link ScopeIndex}. */
        long part(int i) {
            return id * MAX_SCOPES + i;
        }

        static long claimOf(long part) {
            return part / MAX_SCOPES;
        }
    }

    /** Conflicts by index: a set fits when none of its parts conflicts with a held part. */
    private static final class ScopeRule implements GrantRule<ScopeClaim> {
        final ScopeIndex held = new ScopeIndex();

        @Override
        public boolean fits(Collection<Hold<ScopeClaim>> holders, ScopeClaim claim) {
            return !conflictsWith(held, claim);
        }

        @Override
        public boolean mustFollow(ScopeClaim earlier, ScopeClaim later) {
            return conflicts(earlier, later);
        }

        @Override
        public boolean conflicts(ScopeClaim a, ScopeClaim b) {
            for (ScopeRequest x : a.scopes()) {
                for (ScopeRequest y : b.scopes()) {
                    if (LockScope.conflicts(x.scope(), x.exclusive(), y.scope(), y.exclusive())) {
                        return true;
                    }
                }
            }
            return false;
        }

        @Override
        public void held(ScopeClaim claim) {
            add(held, claim);
        }

        @Override
        public void released(ScopeClaim claim) {
            for (int i = 0; i < claim.scopes().size(); i++) {
                held.remove(claim.part(i));
            }
        }

        @Override
        public PassedOver<ScopeClaim> passedOver() {
            ScopeIndex passed = new ScopeIndex();
            return new PassedOver<>() {
                @Override
                public boolean holdsBack(ScopeClaim later) {
                    return conflictsWith(passed, later);
                }

                @Override
                public void add(ScopeClaim waiter) {
                    ScopeRule.add(passed, waiter);
                }
            };
        }

        static void add(ScopeIndex index, ScopeClaim claim) {
            for (int i = 0; i < claim.scopes().size(); i++) {
                ScopeRequest part = claim.scopes().get(i);
                index.add(claim.part(i), part.scope(), part.exclusive());
            }
        }

        static boolean conflictsWith(ScopeIndex index, ScopeClaim claim) {
            for (ScopeRequest part : claim.scopes()) {
                if (!index.conflicts(part.scope(), part.exclusive()).isEmpty()) {
                    return true;
                }
            }
            return false;
        }
    }

    private final Leases leases;
    private final ScopeRule rule = new ScopeRule();
    private final GrantQueue<ScopeClaim> queue = new GrantQueue<>(QUEUE, rule, new Ties());
    /** Each lease's sets, held or waiting, by claim id. */
    private final Map<Long, java.util.NavigableSet<Long>> byLease = new HashMap<>();
    /** The claim id of each set asked for with a request id, by lease and request. */
    private final Map<LeaseRequest, Long> byRequest = new HashMap<>();
    /** The claim id of each held set, by fencing token. */
    private final Map<Long, Long> byToken = new HashMap<>();

    private record LeaseRequest(long leaseId, long requestId) {}
    private final RecentReleases recentReleases = new RecentReleases(RECENT_RELEASES, "release");
    private final EndedAcquires endedAcquires = new EndedAcquires();

    public ScopeTable(Leases leases) {
        this.leases = leases;
    }

    @Override
    public Kind kind() {
        return KIND;
    }

    @Override
    public boolean watched() {
        return false;
    }

    /** The wait of the set queued at {@code joinedAt} for lease {@code leaseId}: what its caller parks on. */
    public static WaitKey waitKey(long leaseId, long joinedAt) {
        return new WaitKey(NAME, Long.toString(joinedAt), leaseId);
    }

    // Java 17 has no pattern switch; the chain covers every permitted subtype of the sealed ScopeCommand.
    @Override
    public Result apply(ApplyContext context, Command command) {
        if (command instanceof ScopeAcquire c) {
            return acquire(context, c);
        } else if (command instanceof ScopeRelease c) {
            return release(context, c);
        } else if (command instanceof ScopeCancel c) {
            return cancel(context, c);
        }
        throw new IllegalArgumentException("not a scope command: " + command);
    }

    /**
     * The first problem with a set of scopes (null when there is none): empty, too many parts, a
     * named scope (a lock), a part named twice or two parts that overlap. The one check of every
     * front end and of apply.
     */
    public static String problem(List<ScopeRequest> scopes) {
        if (scopes == null || scopes.isEmpty()) {
            return "scopes must name at least one inode, path or byte range";
        }
        if (scopes.size() > MAX_SCOPES) {
            return "scopes has " + scopes.size() + " parts, over the limit of " + MAX_SCOPES;
        }
        for (int i = 0; i < scopes.size(); i++) {
            ScopeRequest part = scopes.get(i);
            if (part == null) {
                return "scopes[" + i + "] is missing";
            }
            if (part.scope() instanceof LockScope.Named n) {
                return "scopes[" + i + "] is the named lock '" + n.name() + "': a named scope is a lock (take it with the lock"
                        + " call, in read mode for shared); a set of scopes holds inodes, paths and byte ranges";
            }
            for (int j = 0; j < i; j++) {
                LockScope earlier = scopes.get(j).scope();
                if (earlier.equals(part.scope())) {
                    return "scopes[" + i + "] (" + part.scope() + ") names scopes[" + j + "] again: a set names each scope once";
                }
                if (LockScope.overlaps(earlier, part.scope())) {
                    return "scopes[" + i + "] (" + part.scope() + ") overlaps scopes[" + j + "] (" + earlier
                            + "): a set's parts must not overlap (ask for the wider one)";
                }
            }
        }
        return null;
    }

    private Result acquire(ApplyContext context, ScopeAcquire c) {
        String invalid = problem(c.scopes());
        if (invalid == null) {
            invalid = Limits.checkMetadata("metadata", c.metadata());
        }
        if (invalid != null) {
            return new Result.Rejected(Code.INVALID_ARGUMENT, invalid);
        }
        if (leases.get(c.leaseId()) == null) {
            return new Result.Rejected(Code.NOT_FOUND, Leases.notFound(c.leaseId()));
        }
        Result.Rejected late = endedAcquires.lateCopy(NAME, QUEUE, c.leaseId(), c.requestId());
        if (late != null) {
            return late;
        }
        ScopeClaim earlier = c.requestId() == 0 ? null : claimOf(c.leaseId(), c.requestId());
        if (earlier != null) {
            Hold<ScopeClaim> hold = queue.holder(earlier.id());
            if (hold != null) {
                return new Granted(c.leaseId(), hold.token(), earlier.scopes(), earlier.requestId(), true);
            }
            return new Queued(c.leaseId(), earlier.id(), earlier.requestId(), blockers(earlier, earlier.id()));
        }
        ScopeClaim claim = new ScopeClaim(context.position(), c.leaseId(), c.scopes(), metadataOf(c.metadata()), c.requestId());
        if (queue.grantable(claim)) {
            Hold<ScopeClaim> hold = queue.hold(claim, context.stamp());
            tie(claim);
            byToken.put(hold.token(), claim.id());
            return new Granted(c.leaseId(), hold.token(), claim.scopes(), claim.requestId(), false);
        }
        List<Blocker> blockers = blockers(claim, Long.MAX_VALUE);
        if (!c.queue()) {
            return new Busy(c.leaseId(), blockers);
        }
        List<Step> cycle = cycle(claim, blockers);
        if (cycle != null) {
            return new Deadlock(c.leaseId(), claim.scopes(), cycle);
        }
        queue.enqueue(claim, claim.id());
        tie(claim);
        return new Queued(c.leaseId(), claim.id(), claim.requestId(), blockers);
    }

    private Result release(ApplyContext context, ScopeRelease c) {
        ScopeClaim claim = heldWith(c.leaseId(), c.fencingToken());
        if (claim != null) {
            endedAcquires.ended(context, QUEUE, c.leaseId(), claim.requestId());
            int granted = letGo(context, claim);
            // The memo keeps the release's answer (how many sets it let in) where a lock keeps its next token.
            recentReleases.letGo(QUEUE, c.leaseId(), c.fencingToken(), granted);
            return new Released(c.leaseId(), c.fencingToken(), granted);
        }
        Long before = recentReleases.nextAfter(QUEUE, c.leaseId(), c.fencingToken());
        if (before != null) {
            return new Released(c.leaseId(), c.fencingToken(), before.intValue());
        }
        if (leases.get(c.leaseId()) == null) {
            return new Result.Rejected(Code.NOT_FOUND, Leases.notFound(c.leaseId()));
        }
        return new Result.Rejected(Code.FAILED_PRECONDITION, "lease " + c.leaseId() + " holds no scopes with fencing token "
                + c.fencingToken() + heldSummary(c.leaseId()));
    }

    private Result cancel(ApplyContext context, ScopeCancel c) {
        ScopeClaim claim = c.requestId() == 0 ? null : claimOf(c.leaseId(), c.requestId());
        if (claim != null) {
            Hold<ScopeClaim> hold = queue.holder(claim.id());
            if (hold != null) {
                // The grant won the race with the timeout: the caller owns the set now.
                return new Granted(c.leaseId(), hold.token(), claim.scopes(), claim.requestId(), true);
            }
        }
        // Even with nothing to withdraw yet: the acquire may still be on its way.
        endedAcquires.ended(context, QUEUE, c.leaseId(), c.requestId());
        if (claim == null) {
            return new Cancelled(c.leaseId(), c.requestId(), false);
        }
        withdraw(claim);
        Cancelled cancelled = new Cancelled(c.leaseId(), c.requestId(), true);
        context.wake(waitKey(c.leaseId(), claim.id()), cancelled);
        grantWaiters(context);
        return cancelled;
    }

    /**
     * Withdraws the lease's waiting sets first (waking their callers), so that none of them is
     * granted while its held sets are let go; then lets go its held sets in the order of their acquires, granting
     * the waiting sets that fit after each.
     */
    @Override
    public void leaseEnded(ApplyContext context, long leaseId, List<String> released) {
        java.util.NavigableSet<Long> claims = byLease.get(leaseId);
        if (claims == null) {
            return;
        }
        List<ScopeClaim> held = new ArrayList<>();
        boolean withdrew = false;
        for (long id : List.copyOf(claims)) {
            Hold<ScopeClaim> hold = queue.holder(id);
            if (hold != null) {
                held.add(hold.claim());
                continue;
            }
            ScopeClaim claim = queue.waiter(id).claim();
            withdraw(claim);
            withdrew = true;
            context.wake(waitKey(leaseId, id), new Result.Rejected(Code.NOT_FOUND,
                    "lease " + leaseId + " ended (expired or revoked) while waiting for " + claim.scopes()));
        }
        if (withdrew) {
            grantWaiters(context);
        }
        for (ScopeClaim claim : held) {
            for (ScopeRequest part : claim.scopes()) {
                released.add(part.scope().toString());
            }
            letGo(context, claim);
        }
    }

    /** Takes the set away, grants the waiting sets that fit now; how many were granted. */
    private int letGo(ApplyContext context, ScopeClaim claim) {
        byToken.remove(queue.release(claim.id()).token());
        untie(claim);
        return grantWaiters(context);
    }

    private void withdraw(ScopeClaim claim) {
        queue.withdraw(claim.id());
        untie(claim);
    }

    private int grantWaiters(ApplyContext context) {
        return queue.grantWaiters(context::stamp, hold -> {
            ScopeClaim claim = hold.claim();
            byToken.put(hold.token(), claim.id());
            context.wake(waitKey(claim.leaseId(), claim.id()),
                    new Granted(claim.leaseId(), hold.token(), claim.scopes(), claim.requestId(), false));
        });
    }

    private void tie(ScopeClaim claim) {
        byLease.computeIfAbsent(claim.leaseId(), k -> new TreeSet<>()).add(claim.id());
        if (claim.requestId() != 0) {
            byRequest.put(new LeaseRequest(claim.leaseId(), claim.requestId()), claim.id());
        }
    }

    private void untie(ScopeClaim claim) {
        if (claim.requestId() != 0) {
            byRequest.remove(new LeaseRequest(claim.leaseId(), claim.requestId()), claim.id());
        }
        java.util.NavigableSet<Long> claims = byLease.get(claim.leaseId());
        claims.remove(claim.id());
        if (claims.isEmpty()) {
            byLease.remove(claim.leaseId());
        }
    }

    /** The lease's set asked for by {@code requestId}, held or waiting; null when none. */
    private ScopeClaim claimOf(long leaseId, long requestId) {
        Long id = byRequest.get(new LeaseRequest(leaseId, requestId));
        return id == null ? null : claim(id);
    }

    /** The lease's set held with {@code token}; null when none. */
    private ScopeClaim heldWith(long leaseId, long token) {
        Long id = byToken.get(token);
        ScopeClaim claim = id == null ? null : queue.holder(id).claim();
        return claim != null && claim.leaseId() == leaseId ? claim : null;
    }

    private ScopeClaim claim(long id) {
        Hold<ScopeClaim> hold = queue.holder(id);
        return hold != null ? hold.claim() : queue.waiter(id).claim();
    }

    private static final java.util.NavigableSet<Long> EMPTY_IDS = java.util.Collections.emptyNavigableSet();

    private String heldSummary(long leaseId) {
        List<String> held = new ArrayList<>();
        for (long id : byLease.getOrDefault(leaseId, EMPTY_IDS)) {
            Hold<ScopeClaim> hold = queue.holder(id);
            if (hold != null) {
                held.add(hold.token() + " " + hold.claim().scopes());
            }
        }
        return held.isEmpty() ? " (it holds none)" : " (it holds " + String.join(", ", held) + ")";
    }

    // ---- who stands in whose way ----------------------------------------------------------------

    /**
     * Whom {@code claim} waits for (or would): the held parts it conflicts with, by claim id, then
     * the sets queued before {@code joinedBefore} that it conflicts with, in join order.
     */
    private List<Blocker> blockers(ScopeClaim claim, long joinedBefore) {
        List<Blocker> out = new ArrayList<>();
        TreeSet<Long> holdingParts = new TreeSet<>();
        for (ScopeRequest part : claim.scopes()) {
            holdingParts.addAll(rule.held.conflicts(part.scope(), part.exclusive()));
        }
        for (long part : holdingParts) {
            Hold<ScopeClaim> hold = queue.holder(ScopeClaim.claimOf(part));
            ScopeRequest held = hold.claim().scopes().get((int) (part % MAX_SCOPES));
            out.add(new Blocker(hold.leaseId(), clientOf(hold.leaseId()), held.scope(), held.exclusive(), true, hold.token()));
        }
        for (Waiter<ScopeClaim> w : queue.waiters()) {
            if (w.joinedAt() >= joinedBefore) {
                break;
            }
            ScopeRequest part = conflictingPart(w.claim(), claim);
            if (part != null) {
                out.add(new Blocker(w.leaseId(), clientOf(w.leaseId()), part.scope(), part.exclusive(), false, 0));
            }
        }
        return out;
    }

    /** The first part of {@code earlier} that conflicts with a part of {@code claim}; null when none. */
    private static ScopeRequest conflictingPart(ScopeClaim earlier, ScopeClaim claim) {
        for (ScopeRequest x : earlier.scopes()) {
            for (ScopeRequest y : claim.scopes()) {
                if (LockScope.conflicts(x.scope(), x.exclusive(), y.scope(), y.exclusive())) {
                    return x;
                }
            }
        }
        return null;
    }

    /**
     * The cycle of waits that queuing {@code claim} (waiting for {@code blockers}) would close, or null: a path in the wait-for
     * graph of leases (lease A waits for lease B when a set of A's waits for a set of B's, held or
     * queued ahead) from the leases {@code claim} would wait for back to its own lease. Searched
     * depth first in claim order, so every member finds the same cycle. Only a lease that holds or
     * waits for something here can be waited for, so most acquires skip the search.
     */
    private List<Step> cycle(ScopeClaim claim, List<Blocker> blockers) {
        long asking = claim.leaseId();
        if (!byLease.containsKey(asking)) {
            return null;
        }
        Map<Long, Step> reachedBy = new HashMap<>();
        List<Long> frontier = new ArrayList<>();
        for (Blocker b : blockers) {
            if (b.leaseId() == asking) {
                return List.of(new Step(asking, b));
            }
            if (!reachedBy.containsKey(b.leaseId())) {
                reachedBy.put(b.leaseId(), new Step(asking, b));
                frontier.add(b.leaseId());
            }
        }
        while (!frontier.isEmpty()) {
            List<Long> next = new ArrayList<>();
            for (long lease : frontier) {
                for (long id : byLease.getOrDefault(lease, EMPTY_IDS)) {
                    Waiter<ScopeClaim> waiting = queue.waiter(id);
                    if (waiting == null) {
                        continue;
                    }
                    for (Blocker b : blockers(waiting.claim(), waiting.joinedAt())) {
                        if (b.leaseId() == asking) {
                            List<Step> path = new ArrayList<>();
                            path.add(new Step(lease, b));
                            for (long at = lease; at != asking; ) {
                                Step step = reachedBy.get(at);
                                path.add(0, step);
                                at = step.waiting();
                            }
                            return List.copyOf(path);
                        }
                        if (!reachedBy.containsKey(b.leaseId())) {
                            reachedBy.put(b.leaseId(), new Step(lease, b));
                            next.add(b.leaseId());
                        }
                    }
                }
            }
            frontier = next;
        }
        return null;
    }

    private String clientOf(long leaseId) {
        return leases.get(leaseId).clientId();
    }

    private static byte[] metadataOf(byte[] metadata) {
        return metadata == null ? new byte[0] : metadata.clone();
    }

    // ---- reads ---------------------------------------------------------------------------------

    @Override
    public SortedSet<String> heldBy(long leaseId) {
        return describe(leaseId, true);
    }

    @Override
    public SortedSet<String> waitedBy(long leaseId) {
        return describe(leaseId, false);
    }

    @Override
    public boolean tiesLeases() {
        return true;
    }

    @Override
    public int tiesOfAll(java.util.Set<Long> leaseIds) {
        return byLease.isEmpty() ? 0 : Primitive.super.tiesOfAll(leaseIds);
    }

    /** Most leases hold no scope: those are answered without building the sets. */
    @Override
    public int tiesOf(long leaseId) {
        return byLease.containsKey(leaseId) ? heldBy(leaseId).size() + waitedBy(leaseId).size() : 0;
    }

    @Override
    public boolean tiedTo(long leaseId, String name) {
        return byLease.containsKey(leaseId) && (heldBy(leaseId).contains(name) || waitedBy(leaseId).contains(name));
    }

    private SortedSet<String> describe(long leaseId, boolean held) {
        TreeSet<String> out = new TreeSet<>();
        for (long id : byLease.getOrDefault(leaseId, EMPTY_IDS)) {
            if ((queue.holder(id) != null) == held) {
                for (ScopeRequest part : claim(id).scopes()) {
                    out.add(part.toString());
                }
            }
        }
        return out.isEmpty() ? EMPTY : java.util.Collections.unmodifiableSortedSet(out);
    }

    /** The sets held and waited for that overlap {@code scope} (in any mode), holders by token, waiters in join order. */
    public ScopeView view(LockScope scope) {
        ScopeClaim probe = new ScopeClaim(Long.MAX_VALUE / MAX_SCOPES, 0, List.of(new ScopeRequest(scope, true)), null, 0);
        TreeMap<Long, Hold<ScopeClaim>> holding = new TreeMap<>();
        for (long part : rule.held.conflicts(scope, true)) {
            Hold<ScopeClaim> hold = queue.holder(ScopeClaim.claimOf(part));
            holding.put(hold.token(), hold);
        }
        List<ScopeView.Holder> holders = new ArrayList<>();
        for (Hold<ScopeClaim> h : holding.values()) {
            holders.add(holderView(h));
        }
        List<ScopeView.Waiter> waiters = new ArrayList<>();
        for (Waiter<ScopeClaim> w : queue.waiters()) {
            if (rule.conflicts(w.claim(), probe)) {
                waiters.add(waiterView(w));
            }
        }
        return new ScopeView(scope, List.copyOf(holders), List.copyOf(waiters));
    }

    /** Every held set, in grant order. */
    public List<ScopeView.Holder> holders() {
        List<ScopeView.Holder> out = new ArrayList<>(queue.holders().size());
        for (Hold<ScopeClaim> h : queue.holders()) {
            out.add(holderView(h));
        }
        return out;
    }

    /** Every waiting set, in join order. */
    public List<ScopeView.Waiter> waiters() {
        List<ScopeView.Waiter> out = new ArrayList<>(queue.waiterCount());
        for (Waiter<ScopeClaim> w : queue.waiters()) {
            out.add(waiterView(w));
        }
        return out;
    }

    private ScopeView.Holder holderView(Hold<ScopeClaim> h) {
        return new ScopeView.Holder(h.leaseId(), clientOf(h.leaseId()), h.token(), h.claim().scopes(), h.claim().metadata().clone(),
                h.claim().requestId());
    }

    private ScopeView.Waiter waiterView(Waiter<ScopeClaim> w) {
        return new ScopeView.Waiter(w.leaseId(), clientOf(w.leaseId()), w.joinedAt(), w.claim().scopes(), w.claim().requestId());
    }

    /**
     * Who would keep {@code scopes} from being granted now ("who blocks me"): the holders whose
     * parts conflict, then the waiters they would queue behind. Empty when the set is free.
     */
    public List<Blocker> blockers(List<ScopeRequest> scopes) {
        String invalid = problem(scopes);
        if (invalid != null) {
            throw new IllegalArgumentException(invalid);
        }
        return List.copyOf(blockers(new ScopeClaim(Long.MAX_VALUE / MAX_SCOPES, 0, scopes, null, 0), Long.MAX_VALUE));
    }

    /** The sets lease {@code leaseId} holds, by fencing token. */
    public List<ScopeView.Holder> heldSets(long leaseId) {
        List<ScopeView.Holder> out = new ArrayList<>();
        for (long id : byLease.getOrDefault(leaseId, EMPTY_IDS)) {
            Hold<ScopeClaim> h = queue.holder(id);
            if (h != null) {
                out.add(holderView(h));
            }
        }
        out.sort(java.util.Comparator.comparingLong(ScopeView.Holder::fencingToken));
        return out;
    }

    /** Held sets. */
    public int holdCount() {
        return queue.holders().size();
    }

    /** Waiting sets. */
    public int waiterCount() {
        return queue.waiterCount();
    }

    /** Held parts, over every set. */
    public int heldPartCount() {
        return rule.held.size();
    }

    // ---- encoding --------------------------------------------------------------------------------

    private static final int NAMED = 0;
    private static final int INODE = 1;
    private static final int PATH = 2;
    private static final int RANGE = 3;

    static void writeScopes(DataOutput out, List<ScopeRequest> scopes) throws IOException {
        out.writeInt(scopes.size());
        for (ScopeRequest part : scopes) {
            LockScope scope = part.scope();
            if (scope instanceof LockScope.Named n) {
                out.writeByte(NAMED);
                Wire.writeString(out, n.name());
            } else if (scope instanceof LockScope.Inode i) {
                out.writeByte(INODE);
                out.writeLong(i.inode());
            } else if (scope instanceof LockScope.Path p) {
                out.writeByte(PATH);
                Wire.writeString(out, p.path());
            } else if (scope instanceof LockScope.ByteRange r) {
                out.writeByte(RANGE);
                out.writeLong(r.inode());
                out.writeLong(r.start());
                out.writeLong(r.end());
            }
            out.writeBoolean(part.exclusive());
        }
    }

    static List<ScopeRequest> readScopes(DataInput in) throws IOException {
        int count = in.readInt();
        if (count < 0 || count > MAX_SCOPES) {
            throw new CommandFormatException("scope count " + count + " out of range");
        }
        List<ScopeRequest> scopes = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            int kind = in.readByte();
            LockScope scope;
            try {
                scope = switch (kind) {
                    case NAMED -> new LockScope.Named(Wire.readString(in, MAX_FIELD_BYTES));
                    case INODE -> new LockScope.Inode(in.readLong());
                    case PATH -> new LockScope.Path(Wire.readString(in, MAX_FIELD_BYTES));
                    case RANGE -> new LockScope.ByteRange(in.readLong(), in.readLong(), in.readLong());
                    default -> throw new CommandFormatException("unknown scope kind " + kind);
                };
            } catch (IllegalArgumentException e) {
                throw new CommandFormatException("scope " + i + " is invalid: " + e.getMessage());
            }
            scopes.add(new ScopeRequest(scope, in.readBoolean()));
        }
        return scopes;
    }

    // ---- snapshot section ------------------------------------------------------------------------

    /**
     * Held sets in grant order (claim id, lease, request id, metadata, token, parts), waiting
     * sets in join order (the same, without a token), then the remembered releases and the ended
     * acquire requests, oldest first.
     */
    @Override
    public void writeSnapshot(DataOutputStream out) throws IOException {
        out.writeInt(queue.holders().size());
        for (Hold<ScopeClaim> h : queue.holders()) {
            writeClaim(out, h.claim());
            out.writeLong(h.token());
        }
        out.writeInt(queue.waiterCount());
        for (Waiter<ScopeClaim> w : queue.waiters()) {
            writeClaim(out, w.claim());
        }
        recentReleases.write(out);
        endedAcquires.write(out);
    }

    private static void writeClaim(DataOutputStream out, ScopeClaim claim) throws IOException {
        out.writeLong(claim.id());
        out.writeLong(claim.leaseId());
        out.writeLong(claim.requestId());
        Wire.writeBytes(out, claim.metadata());
        writeScopes(out, claim.scopes());
    }

    @Override
    public void readSnapshot(DataInputStream in, int formatVersion, Leases leases) throws IOException {
        if (formatVersion < 3) {
            return; // before sections, and before lock scopes
        }
        int holders = Wire.count(in, "scope holder");
        for (int i = 0; i < holders; i++) {
            ScopeClaim claim = readClaim(in, leases);
            long token = in.readLong();
            if (byToken.containsKey(token) || queue.holder(claim.id()) != null) {
                throw new SnapshotFormatException("snapshot is corrupt: scope set " + claim.id() + " or token " + token + " appears twice");
            }
            if (ScopeRule.conflictsWith(rule.held, claim)) {
                throw new SnapshotFormatException("snapshot is corrupt: scope set " + claim.id() + " " + claim.scopes()
                        + " conflicts with a set held before it");
            }
            queue.hold(claim, token);
            tie(claim);
            byToken.put(token, claim.id());
        }
        int waiters = Wire.count(in, "scope waiter");
        for (int i = 0; i < waiters; i++) {
            ScopeClaim claim = readClaim(in, leases);
            if (queue.holder(claim.id()) != null || queue.waiter(claim.id()) != null) {
                throw new SnapshotFormatException("snapshot is corrupt: scope set " + claim.id() + " appears twice");
            }
            queue.enqueue(claim, claim.id());
            tie(claim);
        }
        recentReleases.read(in);
        endedAcquires.read(in);
    }

    private ScopeClaim readClaim(DataInputStream in, Leases leases) throws IOException {
        long id = in.readLong();
        long lease = in.readLong();
        long requestId = in.readLong();
        byte[] metadata = Wire.readBytes(in, Limits.MAX_METADATA_BYTES);
        List<ScopeRequest> scopes;
        try {
            scopes = readScopes(in);
        } catch (CommandFormatException e) {
            throw new SnapshotFormatException("snapshot is corrupt: scope set " + id + ": " + e.getMessage());
        }
        if (leases.get(lease) == null) {
            throw new SnapshotFormatException("snapshot is corrupt: scope set " + id + " refers to unknown lease " + lease);
        }
        String invalid = problem(scopes);
        if (invalid != null) {
            throw new SnapshotFormatException("snapshot is corrupt: scope set " + id + ": " + invalid);
        }
        return new ScopeClaim(id, lease, scopes, metadata, requestId);
    }
}
