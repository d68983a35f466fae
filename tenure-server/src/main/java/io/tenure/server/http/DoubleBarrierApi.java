package io.tenure.server.http;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tenure.core.barrier.DoubleBarrierTable;
import io.tenure.core.barrier.DoubleBarrierView;
import io.tenure.core.kernel.LeaseView;
import io.tenure.server.Acquires;
import io.tenure.server.Member;
import io.tenure.server.security.Principal;
import io.tenure.server.RequestIds;
import io.tenure.server.barrier.DoubleBarriers;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The {@code /v1/double-barriers} endpoints: double barriers on the member's double barrier and
 * lease services (the ones gRPC's {@code DoubleBarrierService} calls). The services decide; this
 * translates:
 *
 * <ul>
 *   <li><b>enter</b> grants a fresh lease for {@code owner_id} ({@link LeaseRecipe}: renewed
 *       while the call waits), enters with it and waits up to {@code wait_ms} for {@code parties}
 *       leases to have entered. Let in, the party keeps its lease: it is the party's while it is
 *       inside, and leave names it (its TTL is how long the party may stay inside unheard: a lease
 *       that ends leaves). Not let in when the wait ends: the entry is withdrawn through the log
 *       (as gRPC's {@code Enter} does when its timeout passes), the lease is revoked, and the
 *       answer is 409 {@code not_entered}.</li>
 *   <li><b>cancel</b> withdraws the entry of an enter still waiting, named by its lease.</li>
 *   <li><b>leave</b> leaves with the party's lease and waits up to {@code wait_ms} for every party
 *       of its generation to have left; then the lease holds nothing and is revoked. The call
 *       renews the lease at once and every TTL/3 while it waits, as a two-phase acquire's wait
 *       does. When {@code wait_ms} passes the leave stops waiting through the log (as gRPC's
 *       {@code Leave} timeout does): the party has left all the same, the answer is 409
 *       {@code not_left}, and the lease stays, renewed by nothing until the next leave, which
 *       waits again.</li>
 * </ul>
 */
final class DoubleBarrierApi {
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private final Member member;
    private final LeaseRecipe leases;
    private final ScheduledExecutorService timer;

    DoubleBarrierApi(Member member, LeaseRecipe leases, ScheduledExecutorService timer) {
        this.member = member;
        this.leases = leases;
        this.timer = timer;
    }

    CompletableFuture<Answer> enter(Principal caller, String name, JsonBody body, String requestId) {
        LeaseRecipe.Ask ask = LeaseRecipe.Ask.of(body);
        int parties = body.requiredInt("parties");
        NamePath.DOUBLE_BARRIERS.check(name);
        String problem = DoubleBarrierTable.checkParties(parties);
        if (problem != null) {
            throw Failure.invalid("parties", problem);
        }
        return member.doubleBarriers().read(caller, name).thenCompose(read -> {
            DoubleBarrierView current = read.barrier();
            checkParties(current, parties);
            checkOwner(name, current, ask.owner());
            return leases.acquire(caller, ask, requestId, new LeaseRecipe.Attempt<>(
                    lease -> member.doubleBarriers().enter(caller, name, lease, parties, ask.waitMs(), 0).outcome(),
                    DoubleBarriers.Entry::entered,
                    (lease, entry) -> entered(name, ask.owner(), lease, entry),
                    entry -> notEntered(name, entry))).exceptionally(error -> {
                        throw new CompletionException(conflictOf(name, parties, error));
                    });
        });
    }

    /** Refuses, as 409 {@code conflict} naming {@code parties}, an enter with another number of parties than the live double barrier's. */
    private static void checkParties(DoubleBarrierView current, int parties) {
        if (current != null && current.parties() != parties) {
            throw new Failure(ErrorCode.CONFLICT, "parties", "double barrier '" + current.key() + "' has " + current.parties()
                    + " parties, not " + parties + " (the number of parties is fixed while the double barrier exists)");
        }
    }

    /**
     * Refuses, as 409 {@code conflict} naming {@code owner_id}, an enter by an owner that already
     * has a lease at the double barrier (waiting to enter, inside, or left and waiting): an owner
     * id is one party.
     */
    private static void checkOwner(String name, DoubleBarrierView current, String owner) {
        if (current == null) {
            return;
        }
        String[] places = {"waits to enter", "is inside", "has left and waits for the others at"};
        List<List<DoubleBarrierView.Party>> lists = List.of(current.entering(), current.inside(), current.leaving());
        for (int i = 0; i < places.length; i++) {
            for (DoubleBarrierView.Party p : lists.get(i)) {
                if (p.clientId().equals(owner)) {
                    throw new Failure(ErrorCode.CONFLICT, "owner_id", "owner '" + owner + "' " + places[i] + " double barrier '" + name
                            + "' (lease " + p.leaseId() + "); an owner is one party: " + (i == 0 ? "wait for that enter's answer"
                            : "leave with lease " + p.leaseId() + " first"));
                }
            }
        }
    }

    /**
     * An enter's or a leave's FAILED_PRECONDITION is a conflict: the name is a barrier's, or the
     * double barrier was made with other parties since it was read; the double barrier read again
     * says which field. Anything else is answered as {@link Failures} maps it.
     */
    private Failure conflictOf(String name, int parties, Throwable error) {
        Failure f = Failures.of(error);
        if (f.code != ErrorCode.STALE) {
            return f;
        }
        DoubleBarrierView now = view(name);
        boolean otherParties = parties > 0 && now != null && now.parties() != parties;
        return new Failure(ErrorCode.CONFLICT, otherParties ? "parties" : "double_barrier", f.getMessage());
    }

    private DoubleBarrierView view(String name) {
        return member.stateMachine().read(s -> s.primitive(DoubleBarrierTable.class).barrier(name));
    }

    /** The 200 answer of a party let in: the double barrier, the owner, its lease and expiry, the parties, the revision it entered at. */
    private Answer entered(String name, String owner, long leaseId, DoubleBarriers.Entry entry) {
        ObjectNode body = NODES.objectNode();
        body.put("double_barrier", name);
        body.put("owner_id", owner);
        body.put("lease_id", leaseId);
        body.put("parties", entry.parties());
        body.put("revision", entry.revision());
        return Answer.ok(leases.expiryOf(body, leaseId));
    }

    /** The 409 {@code not_entered} answer: the entry was withdrawn; the parties, and the leases entering and inside now. */
    private Failure notEntered(String name, DoubleBarriers.Entry refused) {
        DoubleBarrierView now = view(name);
        int entering = now == null ? refused.entering() : now.entering().size();
        int inside = now == null ? 0 : now.inside().size();
        Map<String, Object> extra = new LinkedHashMap<>();
        extra.put("double_barrier", name);
        extra.put("parties", refused.parties());
        extra.put("entering", entering);
        extra.put("inside", inside);
        return new Failure(ErrorCode.NOT_ENTERED, null, "double barrier '" + name + "' did not let this party in within wait_ms: "
                + entering + " of " + refused.parties() + " leases wait to enter now" + (inside > 0 ? " (behind " + inside
                + " parties of a generation still inside)" : "") + ", and this party's entry was withdrawn; enter again to wait again",
                extra);
    }

    /**
     * Withdraws the lease's wait to enter ({@link LeaseRecipe#withdraw}), the lease an enter still
     * waiting entered with (its {@code lease_id} is among those entering in GET): that enter ends
     * 409 {@code not_entered}, as when its {@code wait_ms} passes. 200 with {@code entered} false
     * and the leases entering now; or, when the party was let in first, the enter's answer with
     * {@code entered} true (the party is inside: leave with its lease). A lease that is not
     * entering is answered the same way, so a retry answers the same.
     */
    CompletableFuture<Answer> cancel(Principal caller, String name, JsonBody body, String requestId) {
        LeaseRecipe.Waiting waiting = LeaseRecipe.Waiting.of(body);
        NamePath.DOUBLE_BARRIERS.check(name);
        return leases.withdraw(waiting, "double barrier '" + name + "'", requestId,
                () -> member.doubleBarriers().cancel(caller, name, waiting.leaseId(), 0)).thenApply(entry -> {
                    if (entry.entered()) {
                        Answer inside = entered(name, waiting.owner(), waiting.leaseId(), entry);
                        inside.body().put("entered", true);
                        return inside;
                    }
                    ObjectNode withdrawn = waiting.answer("double_barrier", name);
                    withdrawn.put("entered", false);
                    withdrawn.put("parties", entry.parties());
                    withdrawn.put("entering", entry.entering());
                    return Answer.ok(withdrawn);
                });
    }

    CompletableFuture<Answer> leave(Principal caller, String name, JsonBody body, String requestId) {
        long waitMs = body.optionalLong("wait_ms", 0);
        if (waitMs < 0 || waitMs > LeaseRecipe.MAX_WAIT_MS) {
            throw Failure.invalid("wait_ms", "wait_ms must be between 0 (leave without waiting for the others) and "
                    + LeaseRecipe.MAX_WAIT_MS + ", got " + waitMs);
        }
        LeaseRecipe.Place place = LeaseRecipe.Place.of(body);
        NamePath.DOUBLE_BARRIERS.check(name);
        return member.readBarrier().thenCompose(ignored -> {
            LeaseView lease = member.leases().view(place.leaseId());
            if (lease == null) {
                throw new Failure(ErrorCode.LEASE_NOT_FOUND, "lease_id", "lease " + place.leaseId() + " has ended (expired or revoked):"
                        + " a party whose lease ends has left double barrier '" + name + "' already");
            }
            if (!place.owner().equals(lease.clientId())) {
                throw new Failure(ErrorCode.NOT_HOLDER, "owner_id", "lease " + place.leaseId() + " is not owner '" + place.owner()
                        + "''s; nothing left double barrier '" + name + "'");
            }
            return RequestIds.traced(requestId, () -> member.leases().keepAlive(caller, place.leaseId())).thenCompose(ttl -> {
                if (ttl == 0) {
                    throw new Failure(ErrorCode.LEASE_NOT_FOUND, "lease_id", "lease " + place.leaseId() + " ended before it was renewed:"
                            + " a party whose lease ends has left double barrier '" + name + "' already");
                }
                return waitToLeave(caller, name, place, requestId, lease.ttlMillis());
            });
        }).exceptionally(error -> {
            throw new CompletionException(conflictOf(name, 0, error));
        });
    }

    /** Leaves, renewing the lease every TTL/3 while the leave waits, and answers as the class comment says. */
    private CompletableFuture<Answer> waitToLeave(Principal caller, String name, LeaseRecipe.Place place, String requestId, long ttlMs) {
        Acquires.Wait<DoubleBarriers.Exit> wait = RequestIds.traced(requestId,
                () -> member.doubleBarriers().leave(caller, name, place.leaseId(), place.waitMs()));
        ScheduledFuture<?> renewing = null;
        if (place.waitMs() > 0) {
            long period = Math.max(100, ttlMs / 3);
            renewing = timer.scheduleAtFixedRate(
                    () -> RequestIds.traced(requestId, () -> member.leases().keepAlive(caller, place.leaseId())), period, period, TimeUnit.MILLISECONDS);
        }
        ScheduledFuture<?> renewal = renewing;
        CompletableFuture<DoubleBarriers.Exit> outcome = wait.outcome()
                .orTimeout(place.waitMs() + LeaseRecipe.WAIT_SLACK_MS, TimeUnit.MILLISECONDS)
                .whenComplete((exit, error) -> {
                    if (renewal != null) {
                        renewal.cancel(false);
                    }
                });
        return outcome.thenCompose(exit -> {
            if (!exit.left()) {
                throw notLeft(name, place.leaseId(), exit);
            }
            // Every party left: the lease holds and waits for nothing here, and is revoked.
            return leases.revokeIfIdle(caller, place.leaseId(), requestId).thenApply(revoked -> {
                ObjectNode body = NODES.objectNode();
                body.put("double_barrier", name);
                body.put("left", true);
                body.put("revision", exit.revision());
                return Answer.ok(body);
            });
        });
    }

    /** The 409 {@code not_left} answer: the party has left and no longer waits; the parties, and those still inside. */
    private Failure notLeft(String name, long leaseId, DoubleBarriers.Exit exit) {
        Map<String, Object> extra = new LinkedHashMap<>();
        extra.put("double_barrier", name);
        extra.put("lease_id", leaseId);
        extra.put("parties", exit.parties());
        extra.put("inside", exit.inside());
        return new Failure(ErrorCode.NOT_LEFT, null, "not every party of double barrier '" + name + "' had left within wait_ms: "
                + exit.inside() + " of " + exit.parties() + " are still inside; this party has left all the same, and its lease "
                + leaseId + " stays until a leave with it waits again (only a leave renews it: leave again within its TTL)", extra);
    }

    /**
     * The double barrier's parties, who waits to enter (in arrival order), who is inside, who has
     * left and waits for the others, and who has left without waiting, read linearizably; 404
     * {@code not_found} when it does not exist (nobody waits to enter and no generation is inside).
     */
    CompletableFuture<Answer> describe(Principal caller, String name) {
        NamePath.DOUBLE_BARRIERS.check(name);
        return member.doubleBarriers().read(caller, name).thenApply(read -> {
            DoubleBarrierView view = read.barrier();
            if (view == null) {
                throw new Failure(ErrorCode.NOT_FOUND, null, "double barrier '" + name
                        + "' does not exist: nobody waits to enter it and no generation is inside");
            }
            ObjectNode body = NODES.objectNode();
            body.put("double_barrier", view.key());
            body.put("parties", view.parties());
            body.put("entered_revision", view.revision());
            parties(body.putArray("entering"), view.entering(), "arrived_revision");
            parties(body.putArray("inside"), view.inside(), "entered_revision");
            parties(body.putArray("leaving"), view.leaving(), "left_revision");
            parties(body.putArray("left"), view.left(), "left_revision");
            body.put("create_revision", view.createRevision());
            body.put("revision", read.revision());
            return Answer.ok(body);
        });
    }

    private static void parties(ArrayNode list, List<DoubleBarrierView.Party> parties, String at) {
        for (DoubleBarrierView.Party p : parties) {
            list.addObject().put("lease_id", p.leaseId()).put("owner_id", p.clientId()).put(at, p.at());
        }
    }
}
