package io.tenure.server.http;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tenure.core.Limits;
import io.tenure.core.election.ElectionView;
import io.tenure.server.Member;
import io.tenure.server.security.Principal;
import io.tenure.server.election.Elections;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * The {@code /v1/elections} endpoints: leader elections on the member's election and lease
 * services (the ones gRPC's {@code ElectionService} calls), with the lease recipe of every HTTP
 * grant ({@link LeaseRecipe}): a fresh lease for {@code owner_id} per campaign, renewed while it
 * waits, revoked when it is not elected and when its leader resigns. Leadership is held as a lock
 * is: the services decide; this translates:
 *
 * <ul>
 *   <li><b>campaign</b> stands for leader with {@code value} (a UTF-8 string, at most 64 KiB),
 *       waiting up to {@code wait_ms} behind earlier candidates (0 = try once). Still led by
 *       another when the wait ends: 409 {@code held} naming the {@code leader}, with the
 *       candidates waiting and a retry hint ({@link RetryHint}). A name that is a lock's or a
 *       semaphore's is 409 {@code conflict} naming {@code election}. <b>Idempotent</b> as lock
 *       acquire is: when a lease of this {@code owner_id} leads (a retried campaign whose answer
 *       was lost), that leadership is answered again, with the value it announces now (proclaim
 *       to change it).</li>
 *   <li><b>proclaim</b> changes the leader's value without a new election (same token);
 *       refused as a release is when (lease, token) does not lead.</li>
 *   <li><b>renew</b> checks the lease leads with this token ({@link Elections#leadership}).</li>
 *   <li><b>resign</b> steps down, handing leadership to the first candidate, whose token
 *       ({@code next_fencing_token}, 0 when nobody) is above the resigned one's. A retried resign
 *       succeeds again, as a lock's release does.</li>
 *   <li><b>cancel</b> withdraws the candidacy of a campaign still waiting, named by its lease.</li>
 * </ul>
 */
final class ElectionApi {
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private final Member member;
    private final LeaseRecipe leases;

    ElectionApi(Member member, LeaseRecipe leases) {
        this.member = member;
        this.leases = leases;
    }

    CompletableFuture<Answer> campaign(Principal caller, String name, JsonBody body, String requestId) {
        LeaseRecipe.Ask ask = LeaseRecipe.Ask.of(body);
        byte[] value = value(body);
        NamePath.ELECTIONS.check(name);
        return member.elections().leader(caller, name).thenCompose(read -> {
            ElectionView current = read.election();
            if (current != null && current.leader().equals(ask.owner())) {
                return CompletableFuture.completedFuture(elected(name, ask.owner(), current.leaderLeaseId(), current.fencingToken(),
                        current.value()));
            }
            return leases.acquire(caller, ask, requestId, new LeaseRecipe.Attempt<>(
                    lease -> member.elections().campaign(caller, name, lease, value, ask.waitMs(), 0).outcome(),
                    Elections.Outcome::elected,
                    (lease, outcome) -> elected(name, ask.owner(), lease, outcome.fencingToken(), value),
                    outcome -> led(name, outcome))).exceptionally(error -> {
                        throw new CompletionException(conflictOf(error));
                    });
        });
    }

    /** The body's {@code value}, required, as UTF-8 within the metadata limit. */
    private static byte[] value(JsonBody body) {
        byte[] value = body.requiredString("value").getBytes(StandardCharsets.UTF_8);
        String problem = Limits.checkMetadata("value", value);
        if (problem != null) {
            throw Failure.invalid("value", problem);
        }
        return value;
    }

    /**
     * A campaign's FAILED_PRECONDITION is not a stale resign: the name is another kind's while it
     * is held or waited for (a lock, a semaphore), which is a 409 {@code conflict} naming the election.
     */
    private static Failure conflictOf(Throwable error) {
        Failure f = Failures.of(error);
        return f.code == ErrorCode.STALE ? new Failure(ErrorCode.CONFLICT, "election", f.getMessage()) : f;
    }

    /**
     * The 409 {@code held} answer of a campaign that was not elected: the leader and the
     * candidates waiting now, and a hint from the leader's lease and the line of candidates.
     */
    private Failure led(String name, Elections.Outcome refused) {
        ElectionView now = member.elections().current(name).election();
        String leader = now == null ? refused.leader() : now.leader();
        int candidates = now == null ? refused.candidates() : now.candidates().size();
        long hint = leases.retryHint(now == null ? List.of() : List.of(now.leaderLeaseId()), candidates);
        Map<String, Object> extra = new LinkedHashMap<>();
        extra.put("election", name);
        extra.put("leader", leader);
        extra.put("candidates", candidates);
        extra.put("recommended_retry_ms", hint);
        return new Failure(ErrorCode.HELD, null, "election '" + name + "' is led by '" + leader + "'"
                + (candidates > 0 ? " with " + candidates + " candidate(s) waiting" : "") + "; retry in about " + hint
                + " ms, or campaign with wait_ms to stand in line", extra);
    }

    /**
     * Withdraws the lease's candidacy ({@link LeaseRecipe#withdraw}), the lease a campaign still
     * waiting stands with (its {@code lease_id} is among the candidates of GET): that campaign
     * ends not elected, as when its {@code wait_ms} passes. 200 with {@code elected} false, the
     * leader and the candidates left; or, when the election came first, the leadership's answer
     * with {@code elected} true (resign to step down).
     */
    CompletableFuture<Answer> cancel(Principal caller, String name, JsonBody body, String requestId) {
        LeaseRecipe.Waiting waiting = LeaseRecipe.Waiting.of(body);
        NamePath.ELECTIONS.check(name);
        return leases.withdraw(waiting, "election '" + name + "'", requestId,
                () -> member.elections().cancel(caller, name, waiting.leaseId(), 0)).thenApply(outcome -> {
                    if (outcome.elected()) {
                        ElectionView now = member.elections().current(name).election();
                        byte[] value = now != null && now.leaderLeaseId() == waiting.leaseId() ? now.value() : new byte[0];
                        Answer leads = elected(name, waiting.owner(), waiting.leaseId(), outcome.fencingToken(), value);
                        leads.body().put("elected", true);
                        return leads;
                    }
                    ObjectNode withdrawn = waiting.answer("election", name);
                    withdrawn.put("elected", false);
                    withdrawn.put("leader", outcome.leader().isEmpty() ? null : outcome.leader());
                    withdrawn.put("candidates", outcome.candidates());
                    return Answer.ok(withdrawn);
                });
    }

    CompletableFuture<Answer> proclaim(Principal caller, String name, JsonBody body, String requestId) {
        LeaseRecipe.Claim claim = LeaseRecipe.Claim.of(body);
        byte[] value = value(body);
        NamePath.ELECTIONS.check(name);
        return leases.asOwner(claim, "election '" + name + "'", "proclaim", requestId,
                () -> member.elections().proclaim(caller, name, claim.leaseId(), claim.token(), value))
                .thenApply(revision -> Answer.ok(NODES.objectNode().put("election", name).put("fencing_token", claim.token())
                        .put("revision", revision)));
    }

    CompletableFuture<Answer> renew(Principal caller, String name, JsonBody body, String requestId) {
        LeaseRecipe.Claim claim = LeaseRecipe.Claim.of(body);
        NamePath.ELECTIONS.check(name);
        return leases.renew(caller, claim, "leadership of election '" + name + "'", requestId, () -> {
            Elections.Leadership leadership = member.elections().leadership(name, claim.leaseId(), claim.token());
            if (leadership.notLeader() != null) {
                throw new Failure(ErrorCode.NOT_HOLDER, leadership.notLeader().field(), leadership.notLeader().message());
            }
            return leadership.election().value();
        }, value -> elected(name, claim.owner(), claim.leaseId(), claim.token(), value));
    }

    CompletableFuture<Answer> resign(Principal caller, String name, JsonBody body, String requestId) {
        LeaseRecipe.Claim claim = LeaseRecipe.Claim.of(body);
        NamePath.ELECTIONS.check(name);
        return leases.release(caller, claim, "leadership of election '" + name + "'", "resign", requestId,
                () -> member.elections().resign(caller, name, claim.leaseId(), claim.token()),
                next -> Answer.ok(NODES.objectNode().put("election", name).put("resigned", true).put("next_fencing_token", next)));
    }

    /**
     * The leader (owner, lease, token, value and its revision, expiry) and the candidates in the
     * order they will lead, read linearizably; 404 {@code not_found} when nobody leads, as for a
     * free lock (an election exists while someone leads).
     */
    CompletableFuture<Answer> describe(Principal caller, String name) {
        NamePath.ELECTIONS.check(name);
        return member.elections().leader(caller, name).thenApply(read -> {
            ElectionView view = read.election();
            if (view == null) {
                throw new Failure(ErrorCode.NOT_FOUND, null, "election '" + name + "' has no leader (nobody campaigns)");
            }
            ObjectNode body = LeaseRecipe.grant("election", view.key(), view.leader(), view.leaderLeaseId(), view.fencingToken());
            body.put("value", new String(view.value(), StandardCharsets.UTF_8));
            body.put("value_revision", view.valueRevision());
            body.put("create_revision", view.createRevision());
            body.put("version", view.version());
            leases.expiryOf(body, view.leaderLeaseId());
            ArrayNode candidates = body.putArray("candidates");
            for (ElectionView.Candidate c : view.candidates()) {
                candidates.addObject().put("lease_id", c.leaseId()).put("owner_id", c.clientId()).put("joined_revision", c.joinedAt());
            }
            body.put("revision", read.revision());
            return Answer.ok(body);
        });
    }

    /** The answer of a leadership (campaign, renew): the election, owner, lease, token, value and the lease's expiry. */
    private Answer elected(String name, String owner, long leaseId, long token, byte[] value) {
        ObjectNode body = LeaseRecipe.grant("election", name, owner, leaseId, token);
        body.put("value", new String(value, StandardCharsets.UTF_8));
        return Answer.ok(leases.expiryOf(body, leaseId));
    }
}
