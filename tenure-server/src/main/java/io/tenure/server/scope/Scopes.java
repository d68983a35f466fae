package io.tenure.server.scope;

import io.tenure.core.Limits;
import io.tenure.core.access.Level;
import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.Result;
import io.tenure.core.kernel.WaitKey;
import io.tenure.core.lock.LockTable;
import io.tenure.core.lock.LockView;
import io.tenure.core.scope.LockScope;
import io.tenure.core.scope.ScopeAcquire;
import io.tenure.core.scope.ScopeCancel;
import io.tenure.core.scope.ScopeRelease;
import io.tenure.core.scope.ScopeRequest;
import io.tenure.core.scope.ScopeResult;
import io.tenure.core.scope.ScopeTable;
import io.tenure.core.scope.ScopeView;
import io.tenure.server.Admission;
import io.tenure.server.LimitExceeded;
import io.tenure.server.NotServingException;
import io.tenure.server.Overloaded;
import io.tenure.server.PermissionDenied;
import io.tenure.server.RequestIds;
import io.tenure.server.RequestRejected;
import io.tenure.server.ServerLimits;
import io.tenure.server.Waits;
import io.tenure.server.metrics.ServerMetrics;
import io.tenure.server.raft.Proposer;
import io.tenure.server.raft.TenureStateMachine;
import io.tenure.server.security.Permissions;
import io.tenure.server.security.Principal;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * Lock scopes' operations (seed 003: sets of inodes, paths and byte ranges, each part shared or
 * exclusive, all or nothing, one fencing token per set), for every front end, on the path the
 * other waiting primitives take ({@link io.tenure.server.Acquires}): validated once, guarded by
 * the member's limits and load, proposed through the log; a queued set parks in {@link Waits}
 * until the log answers it (its grant, the {@link ScopeCancel} its timeout proposes, or the end of
 * its lease). A caller that goes away only forgets its call: the set keeps its place, or its
 * grant, with the lease.
 *
 * <p>Unlike the named primitives, a set's wait is keyed by the log position it joined at
 * ({@link ScopeTable#waitKey}), known only once the acquire is applied; so the call parks from
 * the acquire's answer, on the apply thread, before any later command can wake it. Its timeout
 * withdraws it by request id: an acquire that may wait and has no {@code request_id} of its client
 * gets one made here (random, so it names no other acquire of the lease).
 *
 * <p><b>Permissions</b> (while authentication is on), of kind {@code scope} ({@link #KIND}), on one resource
 * name per part ({@link #resourceOf}): {@code inode/<n>} for inode n and every byte range of it,
 * and the normalized path for a path ({@code /data/a}; a prefix {@code /data/} covers what is
 * under /data, not /data itself). Acquire needs {@code write} on every part with the caller's own
 * lease ({@code admin} with another's); release the same on every part of the set it lets go;
 * cancel needs the lease to be the caller's (or {@code admin} on leases), since a wait names no
 * scope; describe needs {@code read} on the scope described and on each part asked about, and
 * on the lock ({@code lock} kind) for a named scope.
 */
public final class Scopes {
    private static final Logger LOG = LoggerFactory.getLogger(Scopes.class);
    /** The kind its permissions name. */
    public static final String KIND = Permissions.kind(ScopeTable.NAME);

    /**
     * What an acquire or a cancel answered: acquired with the set's token, or not, with whom the
     * set waited for ({@code blockers}: holders first, then earlier waiters) at the time.
     */
    public record Outcome(boolean acquired, long leaseId, long fencingToken, List<ScopeRequest> scopes, List<ScopeResult.Blocker> blockers) {
        static Outcome of(ScopeResult.Granted g) {
            return new Outcome(true, g.leaseId(), g.fencingToken(), g.scopes(), List.of());
        }

        static Outcome notAcquired(long leaseId, List<ScopeRequest> scopes, List<ScopeResult.Blocker> blockers) {
            return new Outcome(false, leaseId, 0, scopes, blockers);
        }
    }

    /** A describe read from one state: the sets overlapping the scope, who would block the parts asked about, and that state's revision. */
    public record Read(List<ScopeView.Holder> holders, List<ScopeView.Waiter> waiters, List<ScopeResult.Blocker> blockers, long revision) {}

    private final Proposer proposer;
    private final TenureStateMachine stateMachine;
    private final Permissions permissions;
    private final Waits waits;
    private final Admission admission;
    private final ScheduledExecutorService timer;
    private final ServerMetrics metrics;
    private final ServerLimits limits;

    public Scopes(Proposer proposer, TenureStateMachine stateMachine, Permissions permissions, Waits waits, Admission admission,
                  ScheduledExecutorService timer, ServerMetrics metrics, ServerLimits limits) {
        this.proposer = proposer;
        this.stateMachine = stateMachine;
        this.permissions = permissions;
        this.waits = waits;
        this.admission = admission;
        this.timer = timer;
        this.metrics = metrics;
        this.limits = limits;
    }

    // ---- building and checking a request's scopes (each front end names its own fields) --------

    /** An inode scope from the request's field {@code field}; INVALID_ARGUMENT naming it when it is out of range. */
    public static LockScope inode(String field, long inode) {
        checkInode(field, inode);
        return new LockScope.Inode(inode);
    }

    /** A path scope, normalized; INVALID_ARGUMENT naming {@code field} for an empty, relative or malformed path. */
    public static LockScope path(String field, String path) {
        try {
            return new LockScope.Path(path);
        } catch (IllegalArgumentException e) {
            throw RequestRejected.invalid(field, field + ": " + e.getMessage());
        }
    }

    /** A byte range [start, end) of an inode; INVALID_ARGUMENT naming {@code field.inode}, {@code field.start} or {@code field.end}. */
    public static LockScope range(String field, long inode, long start, long end) {
        checkInode(field + ".inode", inode);
        if (start < 0) {
            throw RequestRejected.invalid(field + ".start", field + ".start must not be negative, got " + start);
        }
        if (end <= start) {
            throw RequestRejected.invalid(field + ".end", field + ".end must be above its start (a range is half-open [start, end)), got ["
                    + start + ", " + end + ")");
        }
        return new LockScope.ByteRange(inode, start, end);
    }

    /** A named scope (a lock, for describe); INVALID_ARGUMENT naming {@code field} as a lock name is checked. */
    public static LockScope name(String field, String name) {
        String problem = Limits.checkKey(field, name);
        if (problem != null) {
            throw RequestRejected.invalid(field, problem);
        }
        return new LockScope.Named(name);
    }

    private static void checkInode(String field, long inode) {
        if (inode < 0) {
            // The wire's inode is unsigned: one over 2^63 - 1 reads negative here.
            throw RequestRejected.invalid(field, field + " must be at most 2^63 - 1, got " + Long.toUnsignedString(inode));
        }
    }

    /**
     * Refuses a set the core would refuse ({@link ScopeTable#problem}: empty, over
     * {@value ScopeTable#MAX_SCOPES} parts, a named scope, a part named twice, overlapping parts),
     * as INVALID_ARGUMENT naming {@code field} ({@code scopes}) or the part at fault ({@code scopes[2]}).
     */
    public static void checkSet(String field, List<ScopeRequest> scopes) {
        String problem = ScopeTable.problem(scopes);
        if (problem == null) {
            return;
        }
        String message = field.equals("scopes") ? problem
                : problem.replace("scopes[", field + "[").replaceFirst("^scopes ", java.util.regex.Matcher.quoteReplacement(field + " "));
        if (scopes == null || scopes.isEmpty() || scopes.size() > ScopeTable.MAX_SCOPES) {
            throw RequestRejected.invalid(field, message);
        }
        // The first part whose set up to it has the problem is the part at fault.
        for (int i = 1; i <= scopes.size(); i++) {
            if (ScopeTable.problem(scopes.subList(0, i)) != null) {
                throw RequestRejected.invalid(field + "[" + (i - 1) + "]", message);
            }
        }
        throw RequestRejected.invalid(field, message);
    }

    /** The resource a permission names for a scope: {@code inode/<n>} for an inode and its byte ranges, the normalized path for a path, the name for a lock. */
    public static String resourceOf(LockScope scope) {
        if (scope instanceof LockScope.Inode i) {
            return "inode/" + i.inode();
        } else if (scope instanceof LockScope.ByteRange r) {
            return "inode/" + r.inode();
        } else if (scope instanceof LockScope.Path p) {
            return p.path();
        } else if (scope instanceof LockScope.Named n) {
            return n.name();
        }
        throw new IllegalArgumentException("not a scope: " + scope);
    }

    private static String resources(List<ScopeRequest> scopes) {
        return scopes.stream().map(part -> resourceOf(part.scope())).distinct().collect(Collectors.joining(","));
    }

    // ---- acquire -----------------------------------------------------------------------------

    /** One acquire call: completes once, acquired, not acquired, failed, or handed back. */
    public final class Wait implements Waits.Parked {
        private final long leaseId;
        private final List<ScopeRequest> scopes;
        /** The acquire's request id (the client's, or one made here for a call that may time out): its timeout withdraws it. */
        private final long requestId;
        private final CompletableFuture<Outcome> outcome = new CompletableFuture<>();
        /** The request that started the wait, for the log line of its grant. */
        private final String traceId = RequestIds.current();
        /** Where the call parks: known once its acquire is applied and queued. */
        private volatile WaitKey key;
        private volatile ScheduledFuture<?> timeout;
        private volatile boolean abandoned;

        private Wait(long leaseId, List<ScopeRequest> scopes, long requestId) {
            this.leaseId = leaseId;
            this.scopes = scopes;
            this.requestId = requestId;
        }

        public CompletableFuture<Outcome> outcome() {
            return outcome;
        }

        /** The caller went away: forget the call and change nothing; the lease keeps the set's place, or its grant. */
        public void abandon() {
            abandoned = true;
            WaitKey k = key;
            if (k != null) {
                waits.unpark(k, this);
            }
            cancelTimeout();
        }

        /** The log decided: granted the set, withdrew its wait, or ended the lease. */
        @Override
        public void woken(Result result) {
            cancelTimeout();
            if (result instanceof Result.Rejected ended) {
                outcome.completeExceptionally(new RequestRejected(ended.code(), "lease_id", ended.message()));
            } else if (result instanceof ScopeResult.Granted g) {
                granted(g, "hand_off", traceId);
                if (abandoned) {
                    LOG.info("event=scope_grant_unanswered lease={} token={} scopes=\"{}\" note=\"the caller went away; the set stays with the lease\"",
                            g.leaseId(), g.fencingToken(), g.scopes());
                } else {
                    outcome.complete(Outcome.of(g));
                }
            } else if (result instanceof ScopeResult.Cancelled) {
                outcome.complete(Outcome.notAcquired(leaseId, scopes, blockersNow(scopes)));
            } else {
                fail(new IllegalStateException("unexpected wake-up " + result));
            }
        }

        @Override
        public void handedBack(NotServingException reason) {
            fail(reason);
        }

        private void fail(Throwable error) {
            cancelTimeout();
            outcome.completeExceptionally(error);
        }

        private void cancelTimeout() {
            ScheduledFuture<?> t = timeout;
            if (t != null) {
                t.cancel(false);
            }
        }
    }

    /**
     * Acquires the set for the lease, all or nothing. A set that conflicts with a holder or an
     * earlier waiter is answered not acquired (with the blockers) when {@code timeoutMs} is 0,
     * and otherwise waits as one claim until granted, the timeout withdraws it (acquired after
     * all when the grant won that race), or the lease ends (NOT_FOUND). A wait that would close a
     * cycle of waits fails with FAILED_PRECONDITION naming it, and nothing is queued.
     *
     * @param scopes    the set, built with {@link #inode}, {@link #path} and {@link #range}
     * @param timeoutMs 0 = do not wait, positive = wait at most that long, -1 = until granted or the lease ends
     * @param requestId the client's id for this acquire, the same on its retries (0 = none): a
     *                  retry keeps the place or answers the same grant
     */
    public Wait acquire(Principal caller, long leaseId, List<ScopeRequest> scopes, byte[] metadata, long timeoutMs, long requestId) {
        Wait wait = new Wait(leaseId, scopes == null ? List.of() : List.copyOf(scopes), requestId != 0 || timeoutMs <= 0 ? requestId : newRequestId());
        long started = System.nanoTime();
        wait.outcome.whenComplete((outcome, error) -> {
            metrics.latency("scope_acquire", System.nanoTime() - started);
            metrics.scopeChange("acquire", error != null ? ServerMetrics.failureResult(error) : outcome.acquired() ? "acquired" : "not_acquired");
        });
        try {
            checkSet("scopes", wait.scopes);
            String tooBig = Limits.checkMetadata("metadata", metadata);
            if (tooBig != null) {
                throw RequestRejected.invalid("metadata", tooBig);
            }
            if (timeoutMs < -1) {
                throw RequestRejected.invalid("timeout_ms", "timeout_ms must be -1 (wait until granted), 0 (do not wait) or positive, got "
                        + timeoutMs);
            }
            for (ScopeRequest part : wait.scopes) {
                permissions.requireWithLease(caller, leaseId, KIND, resourceOf(part.scope()));
            }
            checkLimits(leaseId, wait.scopes);
            admission.admit("acquire");
        } catch (RequestRejected | PermissionDenied | LimitExceeded | Overloaded e) {
            wait.outcome.completeExceptionally(e);
            return wait;
        }
        proposer.propose(new ScopeAcquire(leaseId, wait.scopes, metadata == null ? new byte[0] : metadata, timeoutMs != 0, wait.requestId),
                new Proposer.Answer() {
                    @Override
                    public void applied(Applied applied) {
                        acquired(wait, applied.result(), timeoutMs);
                    }

                    @Override
                    public void failed(Throwable error) {
                        wait.fail(error);
                    }
                });
        permissions.trail().whenDone(wait.outcome, caller, "acquire", KIND, resources(wait.scopes), leaseId, Outcome::fencingToken,
                o -> o.acquired() ? "granted" : "not_granted");
        return wait;
    }

    /** Nonzero and random: names a member-made acquire of a lease without naming any other. */
    private static long newRequestId() {
        long id;
        do {
            id = ThreadLocalRandom.current().nextLong();
        } while (id == 0);
        return id;
    }

    /** The acquire's own result, on the apply thread: answered now, or parked until the log decides. */
    private void acquired(Wait wait, Result r, long timeoutMs) {
        if (r instanceof Result.Rejected rejected) {
            wait.fail(refusal(rejected, "request_id"));
        } else if (r instanceof ScopeResult.Deadlock deadlock) {
            wait.fail(new RequestRejected(Result.Code.FAILED_PRECONDITION, "scopes", deadlock.message()));
        } else if (r instanceof ScopeResult.Granted g) {
            if (!g.again()) {
                granted(g, "immediate", wait.traceId);
            }
            wait.outcome.complete(Outcome.of(g));
        } else if (r instanceof ScopeResult.Busy busy) {
            wait.outcome.complete(Outcome.notAcquired(wait.leaseId, wait.scopes, busy.blockers()));
        } else if (r instanceof ScopeResult.Queued queued && timeoutMs == 0) {
            // A try of a set the lease already waits for (the same request id, through another call):
            // it does not wait, and the other call keeps the place.
            wait.outcome.complete(Outcome.notAcquired(wait.leaseId, wait.scopes, queued.blockers()));
        } else if (r instanceof ScopeResult.Queued queued) {
            WaitKey key = ScopeTable.waitKey(queued.leaseId(), queued.joinedAt());
            wait.key = key;
            if (wait.abandoned || !waits.park(key, wait)) {
                return; // the caller went away while the acquire was in the log, or the member is stopping
            }
            if (wait.abandoned) {
                waits.unpark(key, wait); // it went away while parking: abandon() may have looked before the key was set
                return;
            }
            if (timeoutMs > 0) {
                wait.timeout = timer.schedule(() -> withdraw(wait), timeoutMs, TimeUnit.MILLISECONDS);
            }
        } else {
            wait.fail(new IllegalStateException("unexpected result " + r));
        }
    }

    /**
     * The wait timed out: withdraws it through the log. The withdrawal wakes the calls parked for
     * it ("not acquired"); if the grant won the race, its wake-up came first and answered them.
     */
    private void withdraw(Wait wait) {
        if (wait.abandoned) {
            return; // the caller went away just as the timeout was set: its wait stays the lease's
        }
        WaitKey key = wait.key;
        proposer.propose(new ScopeCancel(wait.leaseId, wait.requestId), new Proposer.Answer() {
            @Override
            public void applied(Applied applied) {
                // Answered already by a wake-up, unless this member missed it (an installed snapshot).
                if (waits.unpark(key, wait)) {
                    wait.woken(applied.result());
                }
            }

            @Override
            public void failed(Throwable error) {
                if (waits.unpark(key, wait)) {
                    wait.fail(error);
                }
            }
        });
    }

    private void granted(ScopeResult.Granted g, String via, String traceId) {
        metrics.granted(ScopeTable.NAME, via);
        if (LOG.isDebugEnabled()) {
            LOG.debug("event=scope_granted lease={} token={} via={} request_id={} scopes=\"{}\"", g.leaseId(), g.fencingToken(), via,
                    traceId, g.scopes());
        }
    }

    /** Who would keep {@code scopes} from being granted now, as this member has applied it (a hint for a "not acquired" answer). */
    private List<ScopeResult.Blocker> blockersNow(List<ScopeRequest> scopes) {
        return stateMachine.read(s -> s.primitive(ScopeTable.class).blockers(scopes));
    }

    /**
     * Refuses a set that would take the lease, its client or its user over the member's limits of
     * held and waited-for resources (each part counts as one, as each lock does). A lease that
     * already holds or waits for the set's first part (a retry) is not refused here; the core
     * answers it. Read from the applied state: a guard, not an invariant.
     */
    private void checkLimits(long leaseId, List<ScopeRequest> scopes) {
        int parts = scopes.size();
        LimitExceeded refusal = stateMachine.read(s -> {
            ScopeTable table = s.primitive(ScopeTable.class);
            String first = scopes.get(0).toString();
            if (table.tiedTo(leaseId, first)) {
                return null;
            }
            String clientId = s.clientOf(leaseId);
            if (clientId == null) {
                return null; // the state machine answers NOT_FOUND
            }
            int leaseCount = s.tiesOf(leaseId);
            if (leaseCount + parts > limits.maxLocksPerLease()) {
                return new LimitExceeded("max-locks-per-lease", "lease " + leaseId + " already holds or waits for " + leaseCount
                        + " resources of every kind; " + parts + " more scopes would pass the most one lease may, "
                        + limits.maxLocksPerLease() + " (--max-locks-per-lease)");
            }
            int clientCount = s.holdsAndWaits(clientId);
            if (clientCount + parts > limits.maxLocksPerClient()) {
                return new LimitExceeded("max-locks-per-client", "client id '" + clientId + "' already holds or waits for "
                        + clientCount + " resources; " + parts + " more scopes would pass the most a client may, "
                        + limits.maxLocksPerClient() + " (--max-locks-per-client)");
            }
            String owner = stateMachine.accessEnabled() ? s.leaseOwner(leaseId).orElse(null) : null;
            if (owner != null && permissions.userHolds().estimate(owner, s) + parts > limits.maxLocksPerUser()) {
                return new LimitExceeded("max-locks-per-user", "user '" + owner + "' already holds or waits for nearly "
                        + limits.maxLocksPerUser() + " resources with its leases; " + parts + " more scopes would pass the most a user may"
                        + " (--max-locks-per-user)");
            }
            if (owner != null) {
                permissions.userHolds().admitted(owner);
            }
            return null;
        });
        if (refusal != null) {
            throw refusal;
        }
    }

    // ---- release and cancel ---------------------------------------------------------------------

    /**
     * Lets go the set lease {@code leaseId} holds with {@code fencingToken}; completes with how
     * many waiting sets were granted as a result. A retried release succeeds again (within the
     * last {@value ScopeTable#RECENT_RELEASES}); a stale token fails with FAILED_PRECONDITION naming
     * {@code fencing_token}, an unknown lease with NOT_FOUND naming {@code lease_id}.
     */
    public CompletableFuture<Integer> release(Principal caller, long leaseId, long fencingToken) {
        List<ScopeRequest> held;
        try {
            if (fencingToken <= 0) {
                throw RequestRejected.invalid("fencing_token", "fencing_token must be positive, got " + fencingToken);
            }
            held = heldWith(leaseId, fencingToken);
            if (held == null) {
                // Nothing here to name (a stale token, or a retry of a release): only the lease's owner may ask.
                permissions.requireLease(caller, leaseId);
            } else {
                for (ScopeRequest part : held) {
                    permissions.requireWithLease(caller, leaseId, KIND, resourceOf(part.scope()));
                }
            }
        } catch (RequestRejected | PermissionDenied e) {
            metrics.scopeChange("release", ServerMetrics.failureResult(e));
            return CompletableFuture.failedFuture(e);
        }
        CompletableFuture<Integer> release = proposer.propose(new ScopeRelease(leaseId, fencingToken)).whenComplete((applied, error) -> {
            if (error != null) {
                metrics.scopeChange("release", ServerMetrics.failureResult(error));
            } else {
                metrics.scopeChange("release", applied.result() instanceof ScopeResult.Released ? "released"
                        : applied.result() instanceof Result.Rejected r && (r.code() == Result.Code.FAILED_PRECONDITION
                        || r.code() == Result.Code.NOT_FOUND) ? "stale" : "rejected");
            }
        }).thenApply(applied -> {
            if (applied.result() instanceof ScopeResult.Released released) {
                return released.granted();
            }
            if (applied.result() instanceof Result.Rejected r) {
                throw refusal(r, "fencing_token");
            }
            throw RequestRejected.of(applied);
        });
        permissions.trail().whenDone(release, caller, "release", KIND, held == null ? "" : resources(held), leaseId, granted -> fencingToken,
                granted -> "released");
        return release;
    }

    /** The parts of the set lease {@code leaseId} holds with {@code fencingToken}, as this member has applied it; null when none. */
    public List<ScopeRequest> heldWith(long leaseId, long fencingToken) {
        return stateMachine.read(s -> {
            for (ScopeView.Holder h : s.primitive(ScopeTable.class).heldSets(leaseId)) {
                if (h.fencingToken() == fencingToken) {
                    return h.scopes();
                }
            }
            return null;
        });
    }

    /**
     * The set a lease of client {@code clientId} holds that is exactly {@code scopes} (the same
     * parts in the same modes), as this member has applied it; null when none. For a front end
     * that grants a lease per acquire, to answer a retried acquire with its grant.
     */
    public ScopeView.Holder heldByClient(String clientId, List<ScopeRequest> scopes) {
        checkSet("scopes", scopes);
        return stateMachine.read(s -> {
            for (ScopeView.Holder h : s.primitive(ScopeTable.class).view(scopes.get(0).scope()).holders()) {
                if (h.clientId().equals(clientId) && h.scopes().equals(scopes)) {
                    return h;
                }
            }
            return null;
        });
    }

    /**
     * Gives up the wait of the lease's acquire {@code requestId}: calls parked for it, here and on
     * any member, are answered not acquired. When the grant came first the outcome is acquired,
     * with its token: the caller owns the set and must release it. A wait that is not there (any
     * more) changes nothing, and a copy of that acquire applied later is refused.
     */
    public CompletableFuture<Outcome> cancel(Principal caller, long leaseId, long requestId) {
        CompletableFuture<Outcome> cancel = RequestRejected.unless("request_id", requestId == 0
                        ? "request_id must name the acquire whose wait to give up (the request_id it was sent with), got 0" : null)
                .thenCompose(ok -> permissions.allowedLease(caller, leaseId))
                .thenCompose(ok -> proposer.propose(new ScopeCancel(leaseId, requestId)))
                .thenApply(applied -> {
                    if (applied.result() instanceof ScopeResult.Granted g) {
                        return Outcome.of(g);
                    }
                    if (applied.result() instanceof ScopeResult.Cancelled) {
                        return Outcome.notAcquired(leaseId, List.of(), List.of());
                    }
                    throw RequestRejected.of(applied);
                });
        cancel.whenComplete((o, error) -> metrics.scopeChange("cancel", error != null ? ServerMetrics.failureResult(error)
                : o.acquired() ? "acquired" : "withdrawn"));
        return cancel;
    }

    // ---- describe -----------------------------------------------------------------------------

    /**
     * Read linearizably (after a read barrier): the sets held and waited for that overlap
     * {@code scope} (null: none asked), and who would block {@code blocked} now (empty: none
     * asked). A named scope describes that lock, its holders and waiters as one-part sets of the
     * name (shared for its read mode).
     */
    public CompletableFuture<Read> read(Principal caller, LockScope scope, List<ScopeRequest> blocked) {
        try {
            if (scope == null && blocked.isEmpty()) {
                throw RequestRejected.invalid("scope", "scope must name an inode, a path, a byte range or a lock name"
                        + " (or blocked the parts to ask \"who blocks me\" about)");
            }
            if (!blocked.isEmpty()) {
                checkSet("blocked", blocked);
            }
            if (scope instanceof LockScope.Named n) {
                permissions.require(caller, Permissions.kind(LockTable.NAME), n.name(), Level.READ);
            } else if (scope != null) {
                permissions.require(caller, KIND, resourceOf(scope), Level.READ);
            }
            for (ScopeRequest part : blocked) {
                permissions.require(caller, KIND, resourceOf(part.scope()), Level.READ);
            }
        } catch (RequestRejected | PermissionDenied e) {
            return CompletableFuture.failedFuture(e);
        }
        return admission.admitRead(proposer::readBarrier).thenApply(ignored -> stateMachine.read(s -> {
            ScopeTable table = s.primitive(ScopeTable.class);
            List<ScopeResult.Blocker> blockers = blocked.isEmpty() ? List.of() : table.blockers(blocked);
            if (scope == null) {
                return new Read(List.of(), List.of(), blockers, s.revision());
            }
            if (scope instanceof LockScope.Named n) {
                return lockAsSets(n, s.primitive(LockTable.class).lock(n.name()), blockers, s.revision());
            }
            ScopeView view = table.view(scope);
            return new Read(view.holders(), view.waiters(), blockers, s.revision());
        }));
    }

    /** A named lock's holders and waiters as sets of one part, the name, exclusive for its write mode. */
    private static Read lockAsSets(LockScope.Named name, LockView lock, List<ScopeResult.Blocker> blockers, long revision) {
        if (lock == null) {
            return new Read(List.of(), List.of(), blockers, revision);
        }
        List<ScopeRequest> held = List.of(new ScopeRequest(name, !lock.shared()));
        List<ScopeView.Holder> holders = new ArrayList<>();
        for (LockView.Holder h : lock.holders()) {
            holders.add(new ScopeView.Holder(h.leaseId(), h.clientId(), h.fencingToken(), held, h.metadata(), 0));
        }
        List<ScopeView.Waiter> waiters = new ArrayList<>();
        for (LockView.Waiter w : lock.waiters()) {
            waiters.add(new ScopeView.Waiter(w.leaseId(), w.clientId(), w.joinedAt(), List.of(new ScopeRequest(name, !w.shared())), 0));
        }
        return new Read(List.copyOf(holders), List.copyOf(waiters), blockers, revision);
    }

    /** A core refusal as the front ends answer it: NOT_FOUND names {@code lease_id}, FAILED_PRECONDITION {@code preconditionField}. */
    private static RequestRejected refusal(Result.Rejected r, String preconditionField) {
        String field = switch (r.code()) {
            case NOT_FOUND -> "lease_id";
            case FAILED_PRECONDITION -> preconditionField;
            default -> null;
        };
        return new RequestRejected(r.code(), field, r.message());
    }
}
