package io.tenure.server.lease;

import io.tenure.core.Limits;
import io.tenure.core.access.Level;
import io.tenure.core.kernel.LeaseExpire;
import io.tenure.core.kernel.LeaseGrant;
import io.tenure.core.kernel.LeaseRenew;
import io.tenure.core.kernel.LeaseResult;
import io.tenure.core.kernel.LeaseRevoke;
import io.tenure.core.kernel.LeaseView;
import io.tenure.core.lease.LeaseDeadlines;
import io.tenure.server.Admission;
import io.tenure.server.LimitExceeded;
import io.tenure.server.NotServingException;
import io.tenure.server.Overloaded;
import io.tenure.server.PermissionDenied;
import io.tenure.server.RequestIds;
import io.tenure.server.RequestRejected;
import io.tenure.server.metrics.ServerMetrics;
import io.tenure.server.raft.Proposer;
import io.tenure.server.raft.TenureStateMachine;
import io.tenure.server.security.Permissions;
import io.tenure.server.security.Principal;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Leases on the server side: grants with unguessable ids, keep-alives renewed through the log in
 * batches, and the leader's expiry loop.
 *
 * <p><b>Renewals.</b> Keep-alives received within {@link #RENEW_WINDOW_NANOS} travel in one
 * {@code LeaseRenew} command, and each is acknowledged only after that command commits, which also
 * proves this member still leads. The cost is one log entry per batch, not per keep-alive.
 *
 * <p><b>Expiry.</b> Only the ready leader proposes expiries, for leases whose TTL passed on its
 * own monotonic clock since it applied their latest renewal; each expiry is conditional on that
 * renewal, and a lease still known after {@link #EXPIRY_RETRY_NANOS} is proposed again, so an
 * expiry is never fired and forgotten. Nothing here changes state by itself (I4).
 */
public final class LeaseKeeper implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LeaseKeeper.class);
    /** Keep-alives gathered into one renewal: 2 ms, a sliver of the shortest safe window (4.2 s). */
    static final long RENEW_WINDOW_NANOS = TimeUnit.MILLISECONDS.toNanos(2);
    /** How often the leader looks for expired leases: the expiry lag is at most this. */
    static final long EXPIRY_TICK_MILLIS = 50;
    /** How long before an expiry that did not take effect is proposed again. */
    static final long EXPIRY_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

    private final Proposer proposer;
    private final TenureStateMachine stateMachine;
    private final ScheduledExecutorService timer;
    private final LongSupplier nanoClock;
    private final SecureRandom random = new SecureRandom();
    private final ScheduledFuture<?> expiryLoop;
    /**
     * Closes each renewal window: a thread of its own, so that renewals never wait behind the
     * member's other timers (lock-wait timeouts, the expiry loop) on a busy member.
     */
    private final ScheduledExecutorService renewalTimer = Executors.newSingleThreadScheduledExecutor(runnable -> {
        Thread thread = new Thread(runnable, "tenure-renewals");
        thread.setDaemon(true);
        return thread;
    });
    private final long minTtlMillis;
    private final Permissions permissions;

    private final Object lock = new Object();
    /** Keep-alive requests waiting for the next renewal command, each answered as a whole. Guarded by lock. */
    private List<Renewals> pendingRenewals = new ArrayList<>();
    private boolean renewalScheduled;

    private record Renewals(long[] leaseIds, CompletableFuture<long[]> ack) {}
    private volatile boolean leading;

    private final ServerMetrics metrics;
    private final Admission admission;
    private final int maxLeasesPerClient;
    private final int maxLeasesPerUser;

    public LeaseKeeper(Proposer proposer, TenureStateMachine stateMachine, Permissions permissions, Admission admission, ScheduledExecutorService timer,
                       LongSupplier nanoClock, java.time.Duration minTtl, ServerMetrics metrics, int maxLeasesPerClient,
                       int maxLeasesPerUser) {
        this.admission = admission;
        this.metrics = metrics;
        this.maxLeasesPerClient = maxLeasesPerClient;
        this.maxLeasesPerUser = maxLeasesPerUser;
        this.minTtlMillis = minTtl.toMillis();
        this.proposer = proposer;
        this.stateMachine = stateMachine;
        this.permissions = permissions;
        this.timer = timer;
        this.nanoClock = nanoClock;
        this.expiryLoop = timer.scheduleWithFixedDelay(this::expireDue, EXPIRY_TICK_MILLIS, EXPIRY_TICK_MILLIS, TimeUnit.MILLISECONDS);
    }

    /** The shortest TTL this member grants (a cluster's minimum; 1 s on a member alone). */
    public long minTtlMillis() {
        return Math.max(minTtlMillis, Limits.MIN_TTL_MILLIS);
    }

    /** A granted lease: its id and TTL. */
    public record Granted(long leaseId, long ttlMillis) {}

    /**
     * Grants a lease. {@code requestedId} 0 picks an unguessable id on this member (carried in the
     * command, so apply stays deterministic); a retried grant of the same id, client and TTL
     * returns the same lease.
     */
    public CompletableFuture<Granted> grant(Principal caller, long requestedId, long ttlMillis, String clientId) {
        try {
            return grantAll(caller, List.of(new GrantRequest(requestedId, ttlMillis, clientId))).get(0);
        } catch (Overloaded shed) {
            return CompletableFuture.failedFuture(shed);
        }
    }

    /** One lease asked for: its id (0 = pick one), TTL and client id. */
    public record GrantRequest(long requestedId, long ttlMillis, String clientId) {}

    /**
     * Grants several leases, as {@link #grant} does each: one admission for them all (a member
     * that is behind sheds them together), then each checked and proposed on its own, so one
     * refused grant does not refuse the others; the log carries them together in its entries.
     *
     * @return one outcome per request, in order
     * @throws Overloaded when the member is behind and sheds them all
     */
    public List<CompletableFuture<Granted>> grantAll(Principal caller, List<GrantRequest> requests) {
        admission.admit("grant");
        // Whether each would take its client (or, while authentication is on, its user) over the limit, read from one
        // state for the whole batch: NOT_OVER, OVER_CLIENT or OVER_USER.
        boolean userQuota = stateMachine.accessEnabled() && !caller.isNobody();
        int[] over = stateMachine.read(state -> {
            int[] refused = new int[requests.size()];
            Map<String, Integer> added = new HashMap<>();
            int owned = userQuota ? state.leaseCountOfOwner(caller.user()) : 0;
            Set<Long> asked = new HashSet<>();
            for (int i = 0; i < refused.length; i++) {
                GrantRequest r = requests.get(i);
                String client = r.clientId() == null ? "" : r.clientId();
                if (r.requestedId() != 0 && (state.renewedAt(r.requestedId()) >= 0 || !asked.add(r.requestedId()))) {
                    continue; // a retried grant of a lease that exists, or is asked for earlier in this batch
                }
                refused[i] = state.leaseCount(client) + added.getOrDefault(client, 0) >= maxLeasesPerClient ? OVER_CLIENT
                        : userQuota && owned >= maxLeasesPerUser ? OVER_USER : NOT_OVER;
                if (refused[i] == NOT_OVER) {
                    added.merge(client, 1, Integer::sum);
                    owned++;
                }
            }
            return refused;
        });
        boolean batch = requests.size() > 1;
        List<CompletableFuture<Granted>> outcomes = new ArrayList<>(requests.size());
        for (int i = 0; i < requests.size(); i++) {
            outcomes.add(grantAdmitted(requests.get(i), caller, over[i], batch));
        }
        if (batch) {
            logBatch(requests, outcomes);
        }
        return outcomes;
    }

    /**
     * One line for a batch (each of its grants is logged at debug): 100,000 grants logged one line
     * each took a third of the time a member spent granting them.
     */
    private void logBatch(List<GrantRequest> requests, List<CompletableFuture<Granted>> outcomes) {
        String requestId = RequestIds.current();
        CompletableFuture.allOf(outcomes.toArray(CompletableFuture[]::new)).whenComplete((ignored, error) -> {
            long granted = outcomes.stream().filter(o -> !o.isCompletedExceptionally()).count();
            java.util.Set<String> holders = new java.util.TreeSet<>();
            requests.forEach(r -> holders.add(r.clientId() == null ? "" : r.clientId()));
            LOG.info("event=leases_granted count={} refused={} holders={} request_id={}", granted, outcomes.size() - granted,
                    holders.size() <= 5 ? holders : holders.size() + " client ids", requestId);
        });
    }

    private static final int NOT_OVER = 0;
    private static final int OVER_CLIENT = 1;
    private static final int OVER_USER = 2;

    private CompletableFuture<Granted> grantAdmitted(GrantRequest request, Principal caller, int overLimit, boolean inBatch) {
        long ttlMillis = request.ttlMillis();
        long requestedId = request.requestedId();
        String problem = Limits.checkTtl("ttl", ttlMillis);
        if (problem == null && ttlMillis < minTtlMillis) {
            problem = "ttl must be at least " + minTtlMillis + " ms in a cluster (10 election timeouts, so a kept-alive"
                    + " lease survives a failover), got " + ttlMillis + " ms";
        }
        if (problem != null) {
            return CompletableFuture.failedFuture(RequestRejected.invalid("ttl", problem));
        }
        problem = Limits.checkClientId("client_id", request.clientId());
        if (problem != null) {
            return CompletableFuture.failedFuture(RequestRejected.invalid("client_id", problem));
        }
        if (requestedId < 0) {
            return CompletableFuture.failedFuture(RequestRejected.invalid("id", "id must not be negative, got " + requestedId));
        }
        String client = request.clientId() == null ? "" : request.clientId();
        if (overLimit == OVER_USER) {
            return CompletableFuture.failedFuture(new LimitExceeded("max-leases-per-user", "user '" + caller.user()
                    + "' already owns " + maxLeasesPerUser + " live leases, the most a user may (--max-leases-per-user);"
                    + " revoke some or let them expire"));
        }
        if (overLimit == OVER_CLIENT) {
            return CompletableFuture.failedFuture(new LimitExceeded("max-leases-per-client", "client id '" + client
                    + "' already has " + maxLeasesPerClient + " live leases, the most a client may have (--max-leases-per-client);"
                    + " revoke some or let them expire"));
        }
        long id = requestedId != 0 ? requestedId : newLeaseId();
        String requestId = RequestIds.current();
        CompletableFuture<Granted> granted = proposer.propose(new LeaseGrant(id, ttlMillis, client, Permissions.owner(caller)))
                .thenApply(applied -> {
                    if (applied.result() instanceof LeaseResult.LeaseGranted g) {
                        if (!inBatch) {
                            LOG.info("event=lease_granted lease={} holder=\"{}\" ttl_ms={} request_id={}", g.leaseId(), client,
                                    g.ttlMillis(), requestId);
                        } else if (LOG.isDebugEnabled()) {
                            LOG.debug("event=lease_granted lease={} holder=\"{}\" ttl_ms={} request_id={}", g.leaseId(), client,
                                    g.ttlMillis(), requestId);
                        }
                        return new Granted(g.leaseId(), g.ttlMillis());
                    }
                    throw RequestRejected.of(applied);
                });
        permissions.trail().whenDone(granted, caller, "lease_grant", Permissions.LEASE, client, id, g -> 0, g -> "granted");
        return granted;
    }

    /** The client id of a lease, for log lines; empty once it is gone. */
    private String holderOf(long leaseId) {
        LeaseView lease = stateMachine.read(s -> s.lease(leaseId));
        return lease == null ? "" : lease.clientId();
    }

    /** Positive, so it prints and parses the same everywhere; 63 random bits. */
    private long newLeaseId() {
        long id;
        do {
            id = random.nextLong() & Long.MAX_VALUE;
        } while (id == 0);
        return id;
    }

    /** Revokes a lease: its locks pass to their next waiters. Fails NOT_FOUND for an unknown lease. */
    public CompletableFuture<Void> revoke(Principal caller, long leaseId) {
        try {
            permissions.requireLease(caller, leaseId);
        } catch (PermissionDenied e) {
            return CompletableFuture.failedFuture(e);
        }
        String requestId = RequestIds.current();
        String holder = holderOf(leaseId);
        CompletableFuture<Void> revoked = proposer.propose(new LeaseRevoke(leaseId)).thenApply(applied -> {
            if (applied.result() instanceof LeaseResult.LeaseEnded ended) {
                LOG.info("event=lease_revoked lease={} holder=\"{}\" released={} request_id={}", leaseId, holder, ended.released(), requestId);
                return null;
            }
            throw RequestRejected.of(applied);
        });
        permissions.trail().whenDone(revoked, caller, "lease_revoke", Permissions.LEASE, "", leaseId, ok -> 0, ok -> "revoked");
        return revoked;
    }

    /**
     * Renews a lease; completes with its TTL in milliseconds once the renewal is committed, or 0
     * when the lease does not exist (any more).
     */
    public CompletableFuture<Long> keepAlive(Principal caller, long leaseId) {
        return keepAliveAll(caller, new long[] {leaseId}).thenApply(ttls -> ttls[0]);
    }

    /**
     * Renews a lease to a new TTL (at least this member's shortest, as a grant); completes with the
     * TTL in milliseconds once committed, or 0 when the lease does not exist (any more).
     */
    public CompletableFuture<Long> renewTo(Principal caller, long leaseId, long ttlMillis) {
        String problem = Limits.checkTtl("ttl", ttlMillis);
        if (problem == null && ttlMillis < minTtlMillis) {
            problem = "ttl must be at least " + minTtlMillis + " ms in a cluster, got " + ttlMillis + " ms";
        }
        if (problem != null) {
            return CompletableFuture.failedFuture(RequestRejected.invalid("ttl", problem));
        }
        try {
            permissions.requireLease(caller, leaseId);
        } catch (PermissionDenied e) {
            return CompletableFuture.failedFuture(e);
        }
        return proposer.propose(new io.tenure.core.kernel.LeaseRetime(leaseId, ttlMillis), Proposer.Lane.RENEWAL).thenApply(applied -> {
            if (applied.result() instanceof LeaseResult.LeasesRenewed renewed) {
                return renewed.ttlMillis()[0];
            }
            throw RequestRejected.of(applied);
        });
    }

    /**
     * Renews several leases for one request (a client keeping many alive sends those due
     * together); completes with each one's TTL in milliseconds, in the order given, 0 for a lease
     * that does not exist (any more). Every request received within {@link #RENEW_WINDOW_NANOS}
     * travels in one renewal command.
     */
    public CompletableFuture<long[]> keepAliveAll(Principal caller, long[] leaseIds) {
        if (leaseIds.length > Limits.MAX_BATCH) {
            return CompletableFuture.failedFuture(RequestRejected.invalid("ids", "ids: at most " + Limits.MAX_BATCH
                    + " leases per keep-alive request, got " + leaseIds.length));
        }
        try {
            permissions.requireLeases(caller, leaseIds);
        } catch (PermissionDenied e) {
            return CompletableFuture.failedFuture(e);
        }
        CompletableFuture<long[]> ack = new CompletableFuture<>();
        long started = System.nanoTime();
        ack.whenComplete((ttls, error) -> {
            metrics.latency("renew", System.nanoTime() - started);
            for (int i = 0; i < leaseIds.length; i++) {
                metrics.renew(error != null ? ServerMetrics.failureResult(error) : ttls[i] > 0 ? "renewed" : "expired");
            }
        });
        boolean schedule;
        synchronized (lock) {
            pendingRenewals.add(new Renewals(leaseIds, ack));
            schedule = !renewalScheduled;
            renewalScheduled = true;
        }
        if (schedule) {
            renewalTimer.schedule(this::proposeRenewals, RENEW_WINDOW_NANOS, TimeUnit.NANOSECONDS);
        }
        return ack;
    }

    private void proposeRenewals() {
        List<Renewals> requests;
        synchronized (lock) {
            requests = pendingRenewals;
            pendingRenewals = new ArrayList<>();
            renewalScheduled = false;
        }
        if (requests.isEmpty()) {
            return;
        }
        // Each lease once, in the order first asked (a lease may be in several requests).
        Map<Long, Integer> slotById = new LinkedHashMap<>();
        for (Renewals request : requests) {
            for (long id : request.leaseIds()) {
                slotById.putIfAbsent(id, slotById.size());
            }
        }
        long[] ids = slotById.keySet().stream().mapToLong(Long::longValue).toArray();
        proposer.propose(new LeaseRenew(ids), Proposer.Lane.RENEWAL).whenComplete((applied, error) -> {
            if (error != null) {
                requests.forEach(r -> r.ack().completeExceptionally(error));
                return;
            }
            long[] renewed = ((LeaseResult.LeasesRenewed) applied.result()).ttlMillis();
            for (Renewals request : requests) {
                long[] ttls = new long[request.leaseIds().length];
                for (int i = 0; i < ttls.length; i++) {
                    ttls[i] = renewed[slotById.get(request.leaseIds()[i])];
                }
                request.ack().complete(ttls);
            }
        });
    }

    /** The lease as this member has applied it (no read barrier), or null when it does not exist. */
    public LeaseView view(long leaseId) {
        return stateMachine.read(s -> s.lease(leaseId));
    }

    /** One page of leases, read from one state: {@code revision} is that state's. */
    public record Page(List<LeaseView> leases, boolean more, long revision) {}

    /**
     * The live leases in id order after {@code afterId}, at most {@code limit}
     * (0 = {@link Limits#DEFAULT_LIST}), read linearizably.
     */
    public CompletableFuture<Page> list(Principal caller, long afterId, int limit) {
        int max = Limits.listLimit(limit);
        return RequestRejected.unless("limit", Limits.checkListLimit("limit", limit))
                .thenCompose(ok -> permissions.allowed(caller, Permissions.LEASE, "", Level.READ))
                .thenCompose(ok -> admission.admitRead(proposer::readBarrier))
                .thenApply(ignored -> stateMachine.read(state -> {
                    // One more than asked, to tell whether there are more.
                    List<LeaseView> leases = state.leases().stream().filter(lease -> lease.leaseId() > afterId).limit(max + 1L).toList();
                    return new Page(leases.subList(0, Math.min(max, leases.size())), leases.size() > max, state.revision());
                }));
    }

    /**
     * The lease and its remaining TTL, read linearizably (after a read barrier); null when the
     * lease does not exist. See {@link #timeToLive}.
     */
    public CompletableFuture<TimeToLive> lookup(Principal caller, long leaseId) {
        return permissions.allowedLease(caller, leaseId).thenCompose(ok -> admission.admitRead(proposer::readBarrier))
                .thenApply(ignored -> timeToLive(leaseId));
    }

    /** What a lease has left before this member could expire it. */
    public record TimeToLive(LeaseView lease, long remainingMillis) {}

    /**
     * The lease and its remaining TTL on this member's clock, or null when the lease does not
     * exist. Call it after a linearizable read barrier. Every member records when it applied each
     * renewal; a follower applies a little after the leader, so its figure may exceed the leader's
     * by that lag.
     * Fails with {@link NotServingException} (retryable) when this member has no deadline for the
     * lease yet (it just restarted or caught up), rather than guess.
     */
    public TimeToLive timeToLive(long leaseId) {
        LeaseView lease = stateMachine.read(s -> s.lease(leaseId));
        if (lease == null) {
            return null;
        }
        long remaining;
        LeaseDeadlines deadlines = stateMachine.deadlines();
        synchronized (deadlines) {
            remaining = deadlines.remaining(leaseId, nanoClock.getAsLong());
        }
        if (remaining < 0) {
            throw new NotServingException("lease " + leaseId + " has no deadline on this member yet; retry");
        }
        return new TimeToLive(lease, TimeUnit.NANOSECONDS.toMillis(remaining));
    }

    /**
     * The lease's remaining TTL on this member's clock in milliseconds, or -1 when this member has
     * no deadline for it yet (just restarted or caught up) or the lease is gone: for display
     * beside a holder, where a guess must not stand in for the figure.
     */
    public long remainingMillis(long leaseId) {
        try {
            TimeToLive ttl = timeToLive(leaseId);
            return ttl == null ? -1 : ttl.remainingMillis();
        } catch (NotServingException noDeadlineYet) {
            return -1;
        }
    }

    /** Called when this member becomes the ready leader or stops leading. */
    public void leadership(boolean ready) {
        leading = ready;
    }

    public boolean leading() {
        return leading;
    }

    private void expireDue() {
        if (!leading) {
            return;
        }
        try {
            List<LeaseDeadlines.Due> due;
            LeaseDeadlines deadlines = stateMachine.deadlines();
            synchronized (deadlines) {
                due = deadlines.due(nanoClock.getAsLong(), EXPIRY_RETRY_NANOS);
            }
            for (LeaseDeadlines.Due d : due) {
                String holder = holderOf(d.leaseId());
                proposer.propose(new LeaseExpire(d.leaseId(), d.renewedAt())).whenComplete((applied, error) -> {
                    if (error != null) {
                        LOG.debug("event=lease_expiry_not_committed lease={} reason=\"{}\"", d.leaseId(), error.getMessage());
                    } else if (applied.result() instanceof LeaseResult.LeaseEnded ended) {
                        LOG.info("event=lease_expired lease={} holder=\"{}\" released={} request_id=-", d.leaseId(), holder, ended.released());
                    }
                });
            }
        } catch (RuntimeException e) {
            LOG.warn("event=expiry_loop_error reason=\"{}\"", e.toString());
        }
    }

    @Override
    public void close() {
        expiryLoop.cancel(false);
        renewalTimer.shutdownNow();
    }
}
