package io.tenure.server.http;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tenure.core.barrier.BarrierTable;
import io.tenure.core.barrier.BarrierView;
import io.tenure.server.Member;
import io.tenure.server.security.Principal;
import io.tenure.server.barrier.Barriers;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * The {@code /v1/barriers} endpoints: barriers on the member's barrier and lease services (the
 * ones gRPC's {@code BarrierService} calls), with the lease recipe of every HTTP grant
 * ({@link LeaseRecipe}): a fresh lease for {@code owner_id} per await, renewed while it waits.
 * The services decide; this translates:
 *
 * <ul>
 *   <li><b>await</b> arrives at a barrier of {@code parties} and waits up to {@code wait_ms} for
 *       the others (0 = pass only as the last party). The last arrival releases every party
 *       together, each answered with the same {@code revision}; the party's lease holds nothing
 *       then and is revoked. Not released when the wait ends: the party leaves the barrier
 *       through the log (as gRPC's {@code Await} does when its timeout passes), its lease is
 *       revoked, and the answer is 409 {@code not_released} with the parties waiting now. Another
 *       {@code parties} than the live barrier's, a name that is a lock's, a semaphore's or an
 *       election's, and an owner that already waits at the barrier (an owner id is one party)
 *       are 409 {@code conflict} naming the field.</li>
 *   <li><b>leave</b>: the party of an await still waiting, named by its lease, leaves the barrier
 *       before it releases.</li>
 * </ul>
 */
final class BarrierApi {
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private final Member member;
    private final LeaseRecipe leases;

    BarrierApi(Member member, LeaseRecipe leases) {
        this.member = member;
        this.leases = leases;
    }

    CompletableFuture<Answer> await(Principal caller, String name, JsonBody body, String requestId) {
        LeaseRecipe.Ask ask = LeaseRecipe.Ask.of(body);
        int parties = body.requiredInt("parties");
        NamePath.BARRIERS.check(name);
        String problem = BarrierTable.checkParties(parties);
        if (problem != null) {
            throw Failure.invalid("parties", problem);
        }
        return member.barriers().read(caller, name).thenCompose(read -> {
            BarrierView current = read.barrier();
            checkConflict(current, parties);
            BarrierView.Party mine = partyOf(current, ask.owner());
            if (mine != null) {
                throw new Failure(ErrorCode.CONFLICT, "owner_id", "owner '" + ask.owner() + "' already waits at barrier '" + name
                        + "' (lease " + mine.leaseId() + "); an owner is one party: wait for that await's answer, or leave with that lease");
            }
            return leases.acquire(caller, ask, requestId, new LeaseRecipe.Attempt<>(
                    lease -> member.barriers().await(caller, name, lease, parties, ask.waitMs(), 0).outcome(),
                    Barriers.Outcome::released,
                    (lease, outcome) -> released(name, ask.owner(), lease, outcome),
                    outcome -> notReleased(name, outcome))).exceptionally(error -> {
                        throw new CompletionException(conflictOf(name, parties, error));
                    }).thenCompose(answer -> {
                        // Released, the party's lease holds and waits for nothing: revoked, as a released lock's is.
                        long lease = answer.body().get("lease_id").asLong();
                        return leases.revokeIfIdle(caller, lease, requestId).thenApply(revoked -> answer);
                    });
        });
    }

    /**
     * The lease's party leaves the barrier before it releases ({@link LeaseRecipe#withdraw}), the
     * lease an await still waiting arrived with (its {@code lease_id} is among the parties waiting
     * in GET): that await ends 409 {@code not_released}, as when its {@code wait_ms} passes, and
     * the barrier counts one party fewer. 200 with the parties waiting now ({@code parties} 0 when
     * no barrier of the name has anyone waiting: it released, or nobody arrived). A party that is
     * not waiting is answered the same way, so a retry answers the same.
     */
    CompletableFuture<Answer> leave(Principal caller, String name, JsonBody body, String requestId) {
        LeaseRecipe.Waiting waiting = LeaseRecipe.Waiting.of(body);
        NamePath.BARRIERS.check(name);
        return leases.withdraw(waiting, "barrier '" + name + "'", requestId,
                () -> member.barriers().leave(caller, name, waiting.leaseId(), 0)).thenApply(outcome -> {
                    ObjectNode left = waiting.answer("barrier", name);
                    left.put("left", true);
                    left.put("parties", outcome.parties());
                    left.put("waiting", outcome.arrived());
                    return Answer.ok(left);
                });
    }

    /** Refuses, as 409 {@code conflict} naming {@code parties}, an await with another number of parties than the live barrier's. */
    private static void checkConflict(BarrierView current, int parties) {
        if (current != null && current.parties() != parties) {
            throw new Failure(ErrorCode.CONFLICT, "parties", "barrier '" + current.key() + "' has " + current.parties()
                    + " parties, not " + parties + " (the number of parties is fixed while anyone waits at it)");
        }
    }

    /**
     * An await's FAILED_PRECONDITION is a conflict: the name is another kind's (a lock, a
     * semaphore, an election), or the barrier was made with other parties since it was read;
     * the barrier read again says which field.
     */
    private Failure conflictOf(String name, int parties, Throwable error) {
        Failure f = Failures.of(error);
        if (f.code != ErrorCode.STALE) {
            return f;
        }
        BarrierView now = member.stateMachine().read(s -> s.primitive(BarrierTable.class).barrier(name));
        boolean otherParties = now != null && now.parties() != parties;
        return new Failure(ErrorCode.CONFLICT, otherParties ? "parties" : "barrier", f.getMessage());
    }

    private static BarrierView.Party partyOf(BarrierView view, String owner) {
        if (view == null) {
            return null;
        }
        return view.waiting().stream().filter(p -> p.clientId().equals(owner)).findFirst().orElse(null);
    }

    /** The 200 answer of a released party: the barrier, the owner, its lease, the parties, the revision of the release. */
    private static Answer released(String name, String owner, long leaseId, Barriers.Outcome outcome) {
        ObjectNode body = NODES.objectNode();
        body.put("barrier", name);
        body.put("owner_id", owner);
        body.put("lease_id", leaseId);
        body.put("parties", outcome.parties());
        body.put("revision", outcome.revision());
        return Answer.ok(body);
    }

    /** The 409 {@code not_released} answer: the party left; the parties and those waiting now. */
    private Failure notReleased(String name, Barriers.Outcome refused) {
        BarrierView now = member.stateMachine().read(s -> s.primitive(BarrierTable.class).barrier(name));
        int waiting = now == null ? refused.arrived() : now.waiting().size();
        Map<String, Object> extra = new LinkedHashMap<>();
        extra.put("barrier", name);
        extra.put("parties", refused.parties());
        extra.put("waiting", waiting);
        return new Failure(ErrorCode.NOT_RELEASED, null, "barrier '" + name + "' was not released within wait_ms: " + waiting + " of "
                + refused.parties() + " parties wait at it now, and this party left it; await again to arrive again", extra);
    }

    /**
     * The barrier's parties and the parties waiting at it in arrival order, read linearizably;
     * 404 {@code not_found} when nobody waits (a barrier exists while someone waits at it).
     */
    CompletableFuture<Answer> describe(Principal caller, String name) {
        NamePath.BARRIERS.check(name);
        return member.barriers().read(caller, name).thenApply(read -> {
            BarrierView view = read.barrier();
            if (view == null) {
                throw new Failure(ErrorCode.NOT_FOUND, null, "barrier '" + name + "' has nobody waiting at it");
            }
            ObjectNode body = NODES.objectNode();
            body.put("barrier", view.key());
            body.put("parties", view.parties());
            ArrayNode waiting = body.putArray("waiting");
            for (BarrierView.Party p : view.waiting()) {
                waiting.addObject().put("lease_id", p.leaseId()).put("owner_id", p.clientId()).put("arrived_revision", p.arrivedAt());
            }
            body.put("create_revision", view.createRevision());
            body.put("revision", read.revision());
            return Answer.ok(body);
        });
    }
}
