package io.tenure.server.http;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tenure.core.Limits;
import io.tenure.core.list.ListTable;
import io.tenure.server.Acquires;
import io.tenure.server.Causes;
import io.tenure.server.Member;
import io.tenure.server.security.Principal;
import io.tenure.server.RequestIds;
import io.tenure.server.RequestRejected;
import io.tenure.server.list.Lists;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The {@code /v1/lists} endpoints: lists and queues on the member's list service (the one gRPC's
 * {@code ListService} calls). The service decides; this translates. Items travel as key-value
 * values do ({@link JsonValues}): {@code "value"} (UTF-8) or {@code "value_base64"} (any bytes).
 *
 * <ul>
 *   <li><b>POST /v1/lists/{list}/push</b> {@code {"value": "...", "left": false, "request_id": n}}
 *       (left and request_id optional): pushes at the tail, or at the head with {@code left}; 200
 *       with the {@code length} after it and {@code handed_to}, the lease of the waiting pop the
 *       item went to (0: stored). An item over {@value ListTable#MAX_VALUE_BYTES} bytes is 400
 *       naming {@code value}; a list holding {@value ListTable#MAX_LENGTH} items is 429
 *       {@code limit_exceeded} (a state, not bad input: retry once consumers have popped).</li>
 *   <li><b>POST /v1/lists/{list}/pop</b> {@code {"right": false, "timeout_ms": 0, "request_id": n}}
 *       (all optional): pops from the head, or the tail with {@code right}, waiting up to
 *       {@code timeout_ms} (at most {@value LeaseRecipe#MAX_WAIT_MS}) for a push when the list is
 *       empty: 200 with the item, or 404 {@code not_found} when the list is still empty when the
 *       wait ends (as a GET of an absent key is). Waiting pops are served in arrival order.</li>
 *   <li><b>GET /v1/lists/{list}</b>: its {@code length} and the number of pops {@code waiting},
 *       read linearizably; a list that does not exist has length 0.</li>
 *   <li><b>GET /v1/lists/{list}/range?start=0&amp;stop=-1</b>: items {@code start} to {@code stop},
 *       both included, as Redis's LRANGE (negative counts from the tail), at most
 *       {@value Limits#MAX_LIST}, with {@code more} when the range holds more. A list whose name
 *       ends in {@code /range} is named with the slash encoded ({@code %2Frange}).</li>
 * </ul>
 *
 * <p><b>A waiting pop</b> holds no server thread: the call is parked in the list service until a
 * push, its timeout or its lease decides it, as an HTTP lock acquire is. It waits bound to a
 * fresh lease of client id {@value #POP_OWNER}, renewed while it waits and revoked once it is
 * answered, so a member that dies with the call parked leaves no waiter behind for longer than
 * the lease's {@value #POP_LEASE_TTL_MS} ms. The connection is looked at while the pop waits and
 * before its answer ({@link ClientConnection}): when the client went away, the wait is withdrawn
 * through the log, and an item already popped for it goes back to the list (to the next waiter,
 * or to the end it came from). An item written to a connection that the client closes during the
 * write is the client's: a pop that names its {@code request_id} is answered the same item again
 * on a retry.
 */
final class ListApi {
    private static final Logger LOG = LoggerFactory.getLogger(ListApi.class);
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    /** The client id of the leases waiting HTTP pops wait with. */
    static final String POP_OWNER = "http-list-pop";
    /** The TTL of a waiting pop's lease: how long a pop parked on a member that died can still take an item. */
    static final long POP_LEASE_TTL_MS = 10_000;
    /** How often a waiting pop's connection is looked at, to withdraw the wait of a client that went away. */
    static final long LOOK_EVERY_MS = 1_000;

    private final Member member;
    private final ScheduledExecutorService timer;

    ListApi(Member member, ScheduledExecutorService timer) {
        this.member = member;
        this.timer = timer;
    }

    CompletableFuture<Answer> push(Principal caller, String name, JsonBody body, String requestId) {
        byte[] value = JsonValues.read(body, "value", true);
        boolean left = body.optionalBoolean("left", false);
        long request = body.optionalLong("request_id", 0);
        NamePath.LISTS.check(name);
        String tooLarge = ListTable.checkValue(value);
        if (tooLarge != null) {
            throw Failure.invalid("value", tooLarge);
        }
        return answered(member.lists().push(caller, name, value, left, request).thenApply(pushed -> {
            ObjectNode answer = NODES.objectNode();
            answer.put("list", pushed.name());
            answer.put("length", pushed.length());
            answer.put("handed_to", pushed.handedTo());
            return Answer.ok(answer);
        }));
    }

    CompletableFuture<Answer> pop(Principal caller, String name, JsonBody body, String requestId, ClientConnection connection) {
        boolean right = body.optionalBoolean("right", false);
        long timeoutMs = body.optionalLong("timeout_ms", 0);
        if (timeoutMs < 0 || timeoutMs > LeaseRecipe.MAX_WAIT_MS) {
            throw Failure.invalid("timeout_ms", "timeout_ms must be between 0 (do not wait) and " + LeaseRecipe.MAX_WAIT_MS
                    + ", got " + timeoutMs);
        }
        long request = body.optionalLong("request_id", 0);
        NamePath.LISTS.check(name);
        Lists lists = member.lists();
        if (timeoutMs == 0) {
            return answered(lists.popNow(caller, name, !right, request).thenApply(popped -> delivered(name, 0, request, popped, connection, 0)));
        }
        return answered(RequestIds.traced(requestId, () -> member.leases().grant(caller, 0, POP_LEASE_TTL_MS, POP_OWNER)).thenCompose(granted -> {
            long lease = granted.leaseId();
            Acquires.Wait<Lists.Outcome> wait = RequestIds.traced(requestId, () -> lists.pop(caller, name, !right, lease, timeoutMs, request));
            long period = Math.max(100, granted.ttlMillis() / 3);
            ScheduledFuture<?> renewing = timer.scheduleAtFixedRate(
                    () -> RequestIds.traced(requestId, () -> member.leases().keepAlive(caller, lease)), period, period, TimeUnit.MILLISECONDS);
            ScheduledFuture<?> looking = timer.scheduleAtFixedRate(() -> {
                if (!wait.outcome().isDone() && connection.gone()) {
                    // Parked for a client that left: withdraw the wait, or give back what a push handed it meanwhile.
                    wait.abandon();
                    lists.abandon(name, lease, request, null);
                    wait.outcome().completeExceptionally(new Failure(ErrorCode.UNAVAILABLE, null, "the client went away"));
                }
            }, LOOK_EVERY_MS, LOOK_EVERY_MS, TimeUnit.MILLISECONDS);
            return wait.outcome().orTimeout(timeoutMs + LeaseRecipe.WAIT_SLACK_MS, TimeUnit.MILLISECONDS).whenComplete((o, error) -> {
                renewing.cancel(false);
                looking.cancel(false);
                // No look at the connection after this one: Jetty reads it once the answer is written.
                connection.lastLook();
                RequestIds.traced(requestId, () -> member.leases().revoke(caller, lease)).whenComplete((ignored, revokeError) -> {
                    if (revokeError != null && Failures.of(revokeError).code != ErrorCode.LEASE_NOT_FOUND) {
                        LOG.debug("event=http_pop_lease_not_revoked lease={} reason=\"{}\": it ends by its TTL", lease, revokeError.toString());
                    }
                });
            }).thenApply(popped -> delivered(name, lease, request, popped, connection, timeoutMs));
        }));
    }

    /**
     * The pop's answer, unless its client went away before it: then the item goes back through
     * the log ({@link Lists#abandon}), and the answer nobody reads is a 503.
     */
    private Answer delivered(String name, long lease, long request, Lists.Outcome popped, ClientConnection caller, long waitedMs) {
        boolean gone = caller.lastLook();
        if (popped.popped() && gone) {
            member.lists().abandon(name, lease, request, popped);
            throw new Failure(ErrorCode.UNAVAILABLE, null, "the client went away before the item of list '" + name
                    + "' was answered: it went back to the list");
        }
        if (!popped.popped()) {
            throw new Failure(ErrorCode.NOT_FOUND, null, "list '" + name + "' is empty"
                    + (waitedMs > 0 ? " (waited " + waitedMs + " ms)" : ""));
        }
        ObjectNode answer = NODES.objectNode();
        answer.put("list", name);
        JsonValues.put(answer, popped.value());
        return Answer.ok(answer);
    }

    /** The list's length and waiting pops, read linearizably. */
    CompletableFuture<Answer> length(Principal caller, String name) {
        NamePath.LISTS.check(name);
        // An empty range (start after stop): the length alone, no items copied.
        return answered(member.lists().read(caller, name, 1, 0).thenApply(read -> Answer.ok(describe(read))));
    }

    /** Items {@code start} to {@code stop} (both included; negative counts from the tail), read linearizably. */
    CompletableFuture<Answer> range(Principal caller, String name, String startText, String stopText) {
        long start = index("start", startText, 0);
        long stop = index("stop", stopText, -1);
        NamePath.LISTS.check(name);
        return answered(member.lists().read(caller, name, start, stop).thenApply(read -> {
            ObjectNode body = describe(read);
            ArrayNode items = body.putArray("items");
            read.values().forEach(v -> {
                ObjectNode item = NODES.objectNode();
                JsonValues.put(item, v);
                items.add(item);
            });
            int n = read.length();
            long from = start < 0 ? Math.max(0, n + start) : start;
            long to = stop < 0 ? n + stop : Math.min(n - 1L, stop);
            body.put("more", to - from + 1 > read.values().size());
            return Answer.ok(body);
        }));
    }

    private static ObjectNode describe(Lists.Read read) {
        ObjectNode body = NODES.objectNode();
        body.put("list", read.name());
        body.put("length", read.length());
        body.put("waiting", read.waiting().size());
        body.put("revision", read.revision());
        return body;
    }

    private static long index(String field, String text, long absent) {
        if (text == null) {
            return absent;
        }
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw Failure.invalid(field, field + " must be an integer (negative counts from the tail, -1 the last item), got '"
                    + text + "'");
        }
    }

    /**
     * The list service's refusals in a list's words: a bad field as sent here, an ended lease (a
     * waiting pop's, revoked under it) as 503 to retry, and the one FAILED_PRECONDITION, a full
     * list, as {@code limit_exceeded}.
     */
    private static CompletableFuture<Answer> answered(CompletableFuture<Answer> call) {
        return call.exceptionally(error -> {
            Throwable e = Causes.unwrap(error);
            if (e instanceof RequestRejected r) {
                throw new CompletionException(switch (r.code()) {
                    case INVALID_ARGUMENT -> Failure.invalid("name".equals(r.field()) ? "list" : r.field(), r.getMessage());
                    case NOT_FOUND -> new Failure(ErrorCode.UNAVAILABLE, null, r.getMessage() + "; retry");
                    case FAILED_PRECONDITION -> new Failure(ErrorCode.LIMIT_EXCEEDED, "list", r.getMessage());
                    case ALREADY_EXISTS -> new Failure(ErrorCode.ALREADY_EXISTS, null, r.getMessage());
                });
            }
            throw e instanceof RuntimeException runtime ? new CompletionException(runtime) : new CompletionException(e);
        });
    }
}
