package io.tenure.server.http;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tenure.core.Limits;
import io.tenure.core.counter.CounterView;
import io.tenure.server.Member;
import io.tenure.server.security.Principal;
import io.tenure.server.counter.Counters;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * The {@code /v1/counters} endpoints: counters on the member's counter service (the one gRPC's
 * {@code CounterService} calls). No lease is involved. The service decides; this translates:
 *
 * <ul>
 *   <li><b>add</b> adds {@code delta} (default 1; negative to decrement): 200 with the
 *       {@code value} after it and the {@code previous} one. A sum outside the signed 64-bit range
 *       is 409 {@code conflict}, and nothing changes.</li>
 *   <li><b>set</b> sets {@code value}: 200 with it and the previous one.</li>
 *   <li><b>compare-and-set</b> sets {@code value} if the counter is {@code expected} now (0 when
 *       it does not exist): 200 with {@code swapped} true, or false with the {@code value} it has.</li>
 * </ul>
 * Each takes an optional {@code request_id}: a retry with the same one is applied once and answered
 * as the first copy was. GET of a counter reads it linearizably: a counter that does not exist is
 * 200 with {@code value} 0 and {@code exists} false, as it reads 0 everywhere.
 */
final class CounterApi {
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private final Member member;

    CounterApi(Member member) {
        this.member = member;
    }

    CompletableFuture<Answer> add(Principal caller, String name, JsonBody body, String requestId) {
        long delta = body.optionalLong("delta", 1);
        long request = body.optionalLong("request_id", 0);
        NamePath.COUNTERS.check(name);
        return changed(member.counters().add(caller, name, delta, request));
    }

    CompletableFuture<Answer> set(Principal caller, String name, JsonBody body, String requestId) {
        long value = body.requiredLong("value");
        long request = body.optionalLong("request_id", 0);
        NamePath.COUNTERS.check(name);
        return changed(member.counters().set(caller, name, value, request));
    }

    CompletableFuture<Answer> compareAndSet(Principal caller, String name, JsonBody body, String requestId) {
        long expected = body.requiredLong("expected");
        long value = body.requiredLong("value");
        long request = body.optionalLong("request_id", 0);
        NamePath.COUNTERS.check(name);
        return changed(member.counters().compareAndSet(caller, name, expected, value, request));
    }

    private static CompletableFuture<Answer> changed(CompletableFuture<Counters.Change> call) {
        return call.exceptionally(error -> {
            Failure f = Failures.of(error);
            // The one FAILED_PRECONDITION of a counter: the sum would leave the 64-bit range.
            throw new CompletionException(f.code == ErrorCode.STALE ? new Failure(ErrorCode.CONFLICT, "delta", f.getMessage()) : f);
        }).thenApply(change -> {
            ObjectNode answer = NODES.objectNode();
            answer.put("counter", change.name());
            answer.put("value", change.value());
            answer.put("previous", change.previous());
            answer.put("swapped", change.swapped());
            answer.put("mod_revision", change.revision());
            return Answer.ok(answer);
        });
    }

    /** The counter, read linearizably: 200 with value 0 and exists false when it does not exist. */
    CompletableFuture<Answer> get(Principal caller, String name) {
        NamePath.COUNTERS.check(name);
        return member.counters().read(caller, name).thenApply(read -> {
            ObjectNode body = counterJson(name, read.counter());
            body.put("revision", read.revision());
            return Answer.ok(body);
        });
    }

    /** Counters whose name starts with {@code prefix}, in name order, at most {@code limit} (default {@value Limits#DEFAULT_LIST}). */
    CompletableFuture<Answer> list(Principal caller, String prefix, String limitText) {
        int limit = LockApi.listLimit(limitText);
        return member.counters().list(caller, prefix == null ? "" : prefix, limit).thenApply(listing -> {
            ObjectNode body = NODES.objectNode();
            ArrayNode counters = body.putArray("counters");
            listing.counters().forEach(view -> counters.add(counterJson(view.key(), view)));
            body.put("more", listing.more());
            body.put("revision", listing.revision());
            return Answer.ok(body);
        });
    }

    private static ObjectNode counterJson(String name, CounterView view) {
        ObjectNode body = NODES.objectNode();
        body.put("counter", name);
        body.put("value", view == null ? 0 : view.value());
        body.put("exists", view != null);
        if (view != null) {
            body.put("create_revision", view.createRevision());
            body.put("mod_revision", view.modRevision());
            body.put("version", view.version());
        }
        return body;
    }
}
