package io.tenure.server.election;

import io.tenure.core.Limits;
import io.tenure.core.access.Level;
import io.tenure.core.election.ElectionCampaign;
import io.tenure.core.election.ElectionCancel;
import io.tenure.core.election.ElectionProclaim;
import io.tenure.core.election.ElectionResign;
import io.tenure.core.election.ElectionResult;
import io.tenure.core.election.ElectionTable;
import io.tenure.core.election.ElectionView;
import io.tenure.core.kernel.Result;
import io.tenure.server.Acquires;
import io.tenure.server.Admission;
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

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;

/**
 * Leader elections' operations, for every front end, on the path every waiting primitive takes
 * ({@link Acquires}): a campaign is validated once, guarded by the member's limits, proposed
 * through the log, and parks under (election, lease) until the log elects it, its timeout
 * withdraws it, or its lease ends. Proclaim, resign and cancel are plain proposals; the leader is
 * read after a read barrier.
 */
public final class Elections {
    private static final Logger LOG = LoggerFactory.getLogger(Elections.class);

    /** What a campaign answered: elected with a token, or not, with the leader and the candidates ahead at the time. */
    public record Outcome(String name, boolean elected, long fencingToken, String leader, int candidates) implements Acquires.Outcome {
        @Override
        public boolean acquired() {
            return elected;
        }
    }

    private final Proposer proposer;
    private final TenureStateMachine stateMachine;
    private final Admission admission;
    private final ServerMetrics metrics;
    private final Acquires<Outcome> acquires;
    private final Permissions permissions;
    /** The kind its permissions name. */
    private static final String KIND = Permissions.kind(ElectionTable.NAME);

    public Elections(Proposer proposer, TenureStateMachine stateMachine, Permissions permissions, Waits waits, Admission admission, ScheduledExecutorService timer,
                     ServerMetrics metrics, ServerLimits limits) {
        this.proposer = proposer;
        this.stateMachine = stateMachine;
        this.permissions = permissions;
        this.admission = admission;
        this.metrics = metrics;
        this.acquires = new Acquires<>(new Acquires.Kind<>(ElectionTable.class, ElectionTable::candidateCount, ElectionCancel::new,
                Elections::decide, new Acquires.Wording("election", "an election", "locks, semaphores and elections")),
                new Journal(), proposer, stateMachine, permissions.userHolds(), waits, admission, timer, limits, metrics);
    }

    /**
     * Stands the lease for leader of {@code name} with {@code value}, waiting behind earlier
     * candidates.
     *
     * @param timeoutMs 0 = do not wait, positive = wait at most that long, -1 = until elected or the lease ends
     * @param requestId the client's id for this campaign, the same on its retries (0 = none)
     */
    public Acquires.Wait<Outcome> campaign(Principal caller, String name, long leaseId, byte[] value, long timeoutMs, long requestId) {
        Acquires.Wait<Outcome> wait = acquires.acquire(name, leaseId, timeoutMs, requestId, false, () -> {
            checkName(name);
            checkValue(value);
            permissions.requireWithLease(caller, leaseId, KIND, name);
        }, queue -> new ElectionCampaign(name, leaseId, value, queue, requestId));
        permissions.trail().whenDone(wait.outcome(), caller, "campaign", KIND, name, leaseId, Outcome::fencingToken, o -> o.elected() ? "elected" : "not_elected");
        return wait;
    }

    private static Acquires.Decision<Outcome> decide(Result r) {
        if (r instanceof ElectionResult.Elected e) {
            return new Acquires.Decision.Granted<>(new Outcome(e.key(), true, e.fencingToken(), "", 0), e.key(), e.leaseId(), e.fencingToken(),
                    e.again());
        } else if (r instanceof ElectionResult.Candidate c) {
            return new Acquires.Decision.Queued<>(new Outcome(c.key(), false, 0, c.leader(), c.ahead()));
        } else if (r instanceof ElectionResult.Led l) {
            return new Acquires.Decision.NotGranted<>(new Outcome(l.key(), false, 0, l.leader(), l.candidates()));
        } else if (r instanceof ElectionResult.Withdrawn w) {
            return new Acquires.Decision.NotGranted<>(new Outcome(w.key(), false, 0, w.leader(), w.candidates()));
        }
        return null;
    }

    /** Withdraws the lease's candidacy; when it was elected first, the outcome is elected with its token. */
    public CompletableFuture<Outcome> cancel(Principal caller, String name, long leaseId, long requestId) {
        return RequestRejected.unless("name", Limits.checkKey("name", name))
                .thenCompose(ok -> permissions.allowedWithLease(caller, leaseId, KIND, name))
                .thenCompose(ok -> proposer.propose(new ElectionCancel(name, leaseId, requestId)))
                .thenApply(applied -> {
                    Acquires.Decision<Outcome> decision = decide(applied.result());
                    if (decision instanceof Acquires.Decision.Granted<Outcome> g) {
                        return g.outcome();
                    }
                    if (decision instanceof Acquires.Decision.NotGranted<Outcome> n) {
                        return n.outcome();
                    }
                    throw RequestRejected.of(applied);
                });
    }

    /** The leader (lease, token) announces {@code value}; completes with the revision from which it holds. */
    public CompletableFuture<Long> proclaim(Principal caller, String name, long leaseId, long fencingToken, byte[] value) {
        try {
            checkName(name);
            checkValue(value);
            checkToken(fencingToken);
            permissions.requireWithLease(caller, leaseId, KIND, name);
        } catch (RequestRejected | PermissionDenied e) {
            return CompletableFuture.failedFuture(e);
        }
        return proposer.propose(new ElectionProclaim(name, leaseId, fencingToken, value)).thenApply(applied -> {
            if (applied.result() instanceof ElectionResult.Proclaimed p) {
                metrics.electionChange("proclaimed");
                return p.revision();
            }
            throw RequestRejected.of(applied);
        });
    }

    /** The leader (lease, token) steps down; completes with the next leader's token (0 when nobody leads). */
    public CompletableFuture<Long> resign(Principal caller, String name, long leaseId, long fencingToken) {
        try {
            checkName(name);
            checkToken(fencingToken);
            permissions.requireWithLease(caller, leaseId, KIND, name);
        } catch (RequestRejected | PermissionDenied e) {
            return CompletableFuture.failedFuture(e);
        }
        String requestId = RequestIds.current();
        CompletableFuture<Long> resigned = proposer.propose(new ElectionResign(name, leaseId, fencingToken)).thenApply(applied -> {
            if (applied.result() instanceof ElectionResult.Resigned r) {
                metrics.electionChange("resigned");
                LOG.info("event=election_resigned election=\"{}\" lease={} token={} next_token={} request_id={}", name, leaseId, fencingToken,
                        r.nextFencingToken(), requestId);
                return r.nextFencingToken();
            }
            throw RequestRejected.of(applied);
        });
        permissions.trail().whenDone(resigned, caller, "resign", KIND, name, leaseId, next -> fencingToken, next -> "resigned");
        return resigned;
    }

    /** An election read from one state: null when nobody leads; {@code revision} is that state's. */
    public record Read(ElectionView election, long revision) {}

    /** The leader and candidates, read linearizably (after a read barrier). */
    public CompletableFuture<Read> leader(Principal caller, String name) {
        return RequestRejected.unless("name", Limits.checkKey("name", name))
                .thenCompose(ok -> permissions.allowed(caller, KIND, name, Level.READ))
                .thenCompose(ok -> admission.admitRead(proposer::readBarrier))
                .thenApply(ignored -> current(name));
    }

    /** The election as this member has applied it (no read barrier), with the revision of that state. */
    public Read current(String name) {
        return stateMachine.read(s -> new Read(s.primitive(ElectionTable.class).election(name), s.revision()));
    }

    /** Why a (lease, token) does not lead an election: the request field at fault and the core's message. */
    public record NotLeader(String field, String message) {}

    /** An election read from one state (null when nobody leads), and why a (lease, token) does not lead it (null when it does). */
    public record Leadership(ElectionView election, NotLeader notLeader) {}

    /**
     * Whether lease {@code leaseId} leads election {@code name} with {@code fencingToken}, by the
     * core's leader check (the one proclaim and resign make), naming {@code fencing_token} when
     * the lease leads with another token and {@code lease_id} otherwise. As this member has
     * applied it (no read barrier: callers that need a linearizable answer pass one first).
     */
    public Leadership leadership(String name, long leaseId, long fencingToken) {
        return stateMachine.read(s -> {
            ElectionTable elections = s.primitive(ElectionTable.class);
            ElectionView view = elections.election(name);
            Result.Rejected refused = elections.notLeader(name, leaseId, fencingToken);
            if (refused == null) {
                return new Leadership(view, null);
            }
            String field = view != null && view.leaderLeaseId() == leaseId ? "fencing_token" : "lease_id";
            return new Leadership(view, new NotLeader(field, refused.message()));
        });
    }

    private static void checkName(String name) {
        String problem = Limits.checkKey("name", name);
        if (problem != null) {
            throw RequestRejected.invalid("name", problem);
        }
    }

    private static void checkValue(byte[] value) {
        String problem = Limits.checkMetadata("value", value);
        if (problem != null) {
            throw RequestRejected.invalid("value", problem);
        }
    }

    private static void checkToken(long fencingToken) {
        if (fencingToken <= 0) {
            throw RequestRejected.invalid("fencing_token", "fencing_token must be positive, got " + fencingToken);
        }
    }

    /** Campaign metrics and log lines. */
    private final class Journal implements Acquires.Journal<Outcome> {
        @Override
        public void measured(String result, long nanos) {
            metrics.latency("campaign", nanos);
            metrics.electionChange(result.equals("acquired") ? "elected" : result.equals(Acquires.NOT_ACQUIRED) ? "not_elected" : result);
        }

        @Override
        public void granted(Acquires.Decision.Granted<Outcome> grant, String via, String requestId) {
            LOG.info("event=election_won election=\"{}\" lease={} token={} via={} request_id={}", grant.name(), grant.leaseId(),
                    grant.fencingToken(), via, requestId);
        }

        @Override
        public void leftToLease(Acquires.Decision.Granted<Outcome> grant) {
            LOG.info("event=election_win_unanswered election=\"{}\" lease={} token={} note=\"the caller went away; the lease leads\"",
                    grant.name(), grant.leaseId(), grant.fencingToken());
        }
    }
}
