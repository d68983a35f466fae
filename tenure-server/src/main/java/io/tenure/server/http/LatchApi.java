package io.tenure.server.http;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tenure.core.latch.LatchTable;
import io.tenure.core.latch.LatchView;
import io.tenure.server.Member;
import io.tenure.server.security.Principal;
import io.tenure.server.latch.Latches;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * The {@code /v1/latches} endpoints: count-down latches on the member's latch service (the one
 * gRPC's {@code LatchService} calls). Setting and counting down take no lease; an await takes the
 * lease recipe of every HTTP wait ({@link LeaseRecipe}): a fresh lease for {@code owner_id}, renewed
 * while it waits. The services decide; this translates:
 *
 * <ul>
 *   <li><b>count</b> sets the count when the latch does not exist: 200 with {@code set} true, or
 *       false with the existing latch's {@code count} (it is unchanged).</li>
 *   <li><b>count-down</b> lowers the count by one: 200 with the count after it, and
 *       {@code counted_down} false when the latch did not exist (nothing changed). A
 *       {@code request_id} makes a retry count down once.</li>
 *   <li><b>await</b> waits up to {@code wait_ms} for the count to reach zero (0 = only look): 200
 *       at once when the latch does not exist, or with the {@code revision} of the count-down
 *       that released every waiter together; the lease waits for nothing then and is revoked.
 *       Not zero when the wait ends: the wait is withdrawn through the log, the lease revoked,
 *       and the answer is 409 {@code not_released} with the count now.</li>
 *   <li><b>cancel</b> withdraws the wait of an await still waiting, named by its lease.</li>
 * </ul>
 * A name that is a lock's, a semaphore's, an election's or a barrier's is 409 {@code conflict}
 * naming {@code latch}.
 */
final class LatchApi {
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private final Member member;
    private final LeaseRecipe leases;

    LatchApi(Member member, LeaseRecipe leases) {
        this.member = member;
        this.leases = leases;
    }

    CompletableFuture<Answer> setCount(Principal caller, String name, JsonBody body, String requestId) {
        int count = body.requiredInt("count");
        long request = body.optionalLong("request_id", 0);
        NamePath.LATCHES.check(name);
        String problem = LatchTable.checkCount(count);
        if (problem != null) {
            throw Failure.invalid("count", problem);
        }
        return conflicts(member.latches().trySetCount(caller, name, count, request)).thenApply(set -> {
            ObjectNode answer = NODES.objectNode();
            answer.put("latch", name);
            answer.put("set", set.set());
            answer.put("count", set.count());
            return Answer.ok(answer);
        });
    }

    CompletableFuture<Answer> countDown(Principal caller, String name, JsonBody body, String requestId) {
        long request = body.optionalLong("request_id", 0);
        NamePath.LATCHES.check(name);
        return conflicts(member.latches().countDown(caller, name, request)).thenApply(down -> {
            ObjectNode answer = NODES.objectNode();
            answer.put("latch", name);
            answer.put("count", down.count());
            answer.put("counted_down", down.countedDown());
            return Answer.ok(answer);
        });
    }

    CompletableFuture<Answer> await(Principal caller, String name, JsonBody body, String requestId) {
        LeaseRecipe.Ask ask = LeaseRecipe.Ask.of(body);
        NamePath.LATCHES.check(name);
        return conflicts(leases.acquire(caller, ask, requestId, new LeaseRecipe.Attempt<>(
                lease -> member.latches().await(caller, name, lease, ask.waitMs(), 0).outcome(),
                Latches.Outcome::open,
                (lease, outcome) -> open(name, ask.owner(), lease, outcome),
                outcome -> notReleased(name, outcome)))).thenCompose(answer -> {
                    // Open, the lease waits for nothing: revoked, as a released barrier party's is.
                    long lease = answer.body().get("lease_id").asLong();
                    return leases.revokeIfIdle(caller, lease, requestId).thenApply(revoked -> answer);
                });
    }

    /**
     * Withdraws the lease's wait at the latch ({@link LeaseRecipe#withdraw}), the lease an await
     * still waiting waits with (its {@code lease_id} is among those waiting in GET): that await
     * ends 409 {@code not_released}, as when its {@code wait_ms} passes. 200 with the count now (0
     * when the latch does not exist). A lease that is not waiting is answered the same way, so a
     * retry answers the same.
     */
    CompletableFuture<Answer> cancel(Principal caller, String name, JsonBody body, String requestId) {
        LeaseRecipe.Waiting waiting = LeaseRecipe.Waiting.of(body);
        NamePath.LATCHES.check(name);
        return leases.withdraw(waiting, "latch '" + name + "'", requestId,
                () -> member.latches().cancel(caller, name, waiting.leaseId(), 0)).thenApply(outcome -> {
                    ObjectNode withdrawn = waiting.answer("latch", name);
                    withdrawn.put("withdrawn", true);
                    withdrawn.put("count", outcome.count());
                    return Answer.ok(withdrawn);
                });
    }

    /** A latch request's FAILED_PRECONDITION is a conflict: the name is another kind's. */
    private static <T> CompletableFuture<T> conflicts(CompletableFuture<T> call) {
        return call.exceptionally(error -> {
            Failure f = Failures.of(error);
            throw new CompletionException(f.code == ErrorCode.STALE ? new Failure(ErrorCode.CONFLICT, "latch", f.getMessage()) : f);
        });
    }

    /** The 200 answer of an await: the latch, the owner, its lease, the revision of the release (0: the latch did not exist). */
    private static Answer open(String name, String owner, long leaseId, Latches.Outcome outcome) {
        ObjectNode body = NODES.objectNode();
        body.put("latch", name);
        body.put("owner_id", owner);
        body.put("lease_id", leaseId);
        body.put("revision", outcome.revision());
        return Answer.ok(body);
    }

    /** The 409 {@code not_released} answer: the wait was withdrawn; the count now. */
    private Failure notReleased(String name, Latches.Outcome refused) {
        int count = member.stateMachine().read(s -> s.primitive(LatchTable.class).count(name));
        Map<String, Object> extra = new LinkedHashMap<>();
        extra.put("latch", name);
        extra.put("count", count);
        return new Failure(ErrorCode.NOT_RELEASED, null, "latch '" + name + "' did not reach zero within wait_ms: its count is " + count
                + " now, and this wait was withdrawn; await again to wait again", extra);
    }

    /**
     * The latch's count and who waits, in arrival order, read linearizably; 404 {@code not_found}
     * when it does not exist (its count is zero).
     */
    CompletableFuture<Answer> describe(Principal caller, String name) {
        NamePath.LATCHES.check(name);
        return member.latches().read(caller, name).thenApply(read -> {
            LatchView view = read.latch();
            if (view == null) {
                throw new Failure(ErrorCode.NOT_FOUND, null, "latch '" + name + "' does not exist (its count is zero)");
            }
            ObjectNode body = NODES.objectNode();
            body.put("latch", view.key());
            body.put("count", view.count());
            body.put("initial_count", view.initialCount());
            ArrayNode waiting = body.putArray("waiting");
            for (LatchView.Waiter w : view.waiting()) {
                waiting.addObject().put("lease_id", w.leaseId()).put("owner_id", w.clientId()).put("arrived_revision", w.arrivedAt());
            }
            body.put("create_revision", view.createRevision());
            body.put("mod_revision", view.modRevision());
            body.put("revision", read.revision());
            return Answer.ok(body);
        });
    }
}
