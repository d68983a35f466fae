package io.tenure.server.http;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tenure.core.Limits;
import io.tenure.core.counter.CounterAdd;
import io.tenure.core.counter.CounterSet;
import io.tenure.core.counter.CounterTable;
import io.tenure.core.kernel.Command;
import io.tenure.core.kernel.Txn;
import io.tenure.core.kernel.TxnCompare;
import io.tenure.core.kernel.TxnResult;
import io.tenure.core.kv.KvDelete;
import io.tenure.core.kv.KvPut;
import io.tenure.core.kv.KvTable;
import io.tenure.core.kv.KvView;
import io.tenure.server.Causes;
import io.tenure.server.RequestRejected;
import io.tenure.server.kv.KeyValues;
import io.tenure.server.Member;
import io.tenure.server.security.Principal;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * The {@code /v1/kv} endpoints: the key-value store on the member's key-value service (the one
 * gRPC's {@code KvService} calls). The service decides; this translates.
 *
 * <p><b>Values in JSON.</b> A value travels as {@code "value"}, a string sent and stored as UTF-8,
 * or as {@code "value_base64"}, any bytes in standard base64: a request sends exactly one of
 * them; an answer carries {@code "value"} when the stored bytes are valid UTF-8 and
 * {@code "value_base64"} otherwise (never both). The expected value of a compare-and-set is
 * {@code "expected_value"} or {@code "expected_value_base64"} alike.
 *
 * <ul>
 *   <li><b>POST /v1/kv/{key}/put</b> {@code {"value": "...", "ttl_ms": n, "lease_id": n, "request_id": n}}
 *       (ttl_ms, lease_id and request_id optional; not both ttl_ms and lease_id): 200 with the
 *       put's {@code revision}, {@code prev_mod_revision}, {@code created} and {@code version}.
 *       An unknown lease is 404 {@code lease_not_found}; a store at its key limit 429
 *       {@code limit_exceeded}.</li>
 *   <li><b>POST /v1/kv/{key}/compare-and-set</b> with the new value, and exactly one of
 *       {@code expected_mod_revision} (0 = the key must be absent: a create-if-absent) or an
 *       expected value: 200 with {@code swapped} true and the put's {@code mod_revision}; or
 *       false with the key's {@code mod_revision} (0 when absent) and its value when known.</li>
 *   <li><b>POST /v1/kv/{key}/delete</b> {@code {"expected_mod_revision": n, "request_id": n}}
 *       (both optional): 200 with {@code deleted}, {@code revision} and {@code compare_failed}.</li>
 *   <li><b>GET /v1/kv/{key}</b>: the key, read linearizably; 404 {@code not_found} when absent.</li>
 *   <li><b>GET /v1/kv?prefix=&amp;limit=&amp;after=</b>: keys with the prefix after key {@code after},
 *       in key order, with {@code more} and {@code next_after} to continue from.</li>
 *   <li><b>POST /v1/txn</b> (not under {@code /v1/kv/}, where it would be a key's path): a
 *       transaction over keys and counters (etcd's Txn). {@code "compare"}: objects of
 *       {@code kind} ("kv" or "counter"), {@code key} (the key or counter name), {@code target}
 *       ("value", "mod_revision", "create_revision" or "version"), {@code result} ("equal",
 *       "not_equal", "less" or "greater") and {@code value} (an integer, or for a key's value the
 *       bytes as above); {@code "success"} and {@code "failure"}: operations, each one of
 *       {@code {"put": {"key", "value", "ttl_ms", "lease_id"}}}, {@code {"delete": {"key"}}},
 *       {@code {"add": {"counter", "delta"}}} and {@code {"set": {"counter", "value"}}}; at most
 *       128 comparisons and 128 operations per branch; optional {@code request_id}. 200 with
 *       {@code succeeded} (every comparison held: the success operations were applied, else the
 *       failure ones), the {@code revision} after it, and {@code results}, one per applied
 *       operation under its name, with the fields its own endpoint answers.</li>
 * </ul>
 * A change that names its {@code request_id} is applied once and a retry answered as the first
 * copy was. Bad input is 400 {@code invalid_argument} naming the field.
 */
final class KvApi {
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private final Member member;

    KvApi(Member member) {
        this.member = member;
    }

    CompletableFuture<Answer> put(Principal caller, String key, JsonBody body, String requestId) {
        byte[] value = JsonValues.read(body, "value", true);
        long ttl = body.optionalLong("ttl_ms", 0);
        long lease = body.optionalLong("lease_id", 0);
        long request = body.optionalLong("request_id", 0);
        NamePath.KV.check(key);
        return answered(member.keyValues().put(caller, key, value, lease, ttl, request).thenApply(written -> {
            ObjectNode answer = NODES.objectNode();
            answer.put("key", written.key());
            answer.put("revision", written.revision());
            answer.put("prev_mod_revision", written.prevModRevision());
            answer.put("created", written.created());
            answer.put("version", written.version());
            return Answer.ok(answer);
        }));
    }

    CompletableFuture<Answer> compareAndSet(Principal caller, String key, JsonBody body, String requestId) {
        byte[] value = JsonValues.read(body, "value", true);
        boolean byRevision = body.has("expected_mod_revision");
        byte[] expectedValue = JsonValues.read(body, "expected_value", false);
        if (byRevision == (expectedValue != null)) {
            throw Failure.invalid("expected_mod_revision", "a compare-and-set needs exactly one of expected_mod_revision"
                    + " (0 = the key must be absent), expected_value or expected_value_base64");
        }
        long expectedRevision = byRevision ? body.requiredLong("expected_mod_revision") : -1;
        if (byRevision && expectedRevision < 0) {
            throw Failure.invalid("expected_mod_revision", "expected_mod_revision must be at least 0 (0 = the key must be absent), got "
                    + expectedRevision);
        }
        long ttl = body.optionalLong("ttl_ms", 0);
        long lease = body.optionalLong("lease_id", 0);
        long request = body.optionalLong("request_id", 0);
        NamePath.KV.check(key);
        KeyValues.Compare compare = !byRevision ? KeyValues.Compare.VALUE
                : expectedRevision == 0 ? KeyValues.Compare.ABSENT : KeyValues.Compare.MOD_REVISION;
        return answered(member.keyValues().compareAndSet(caller, key, compare, expectedRevision, expectedValue, value, lease, ttl, request)
                .thenApply(swap -> {
                    ObjectNode answer = NODES.objectNode();
                    answer.put("key", swap.key());
                    answer.put("swapped", swap.swapped());
                    answer.put("mod_revision", swap.modRevision());
                    if (swap.swapped()) {
                        answer.put("prev_mod_revision", swap.prevModRevision());
                        answer.put("version", swap.version());
                    } else if (swap.value() != null) {
                        JsonValues.put(answer, swap.value());
                    }
                    return Answer.ok(answer);
                }));
    }

    CompletableFuture<Answer> delete(Principal caller, String key, JsonBody body, String requestId) {
        long expected = body.optionalLong("expected_mod_revision", KvDelete.ANY_REVISION);
        if (body.has("expected_mod_revision") && expected < 0) {
            throw Failure.invalid("expected_mod_revision", "expected_mod_revision must be at least 0 (0 = the key must be absent), got "
                    + expected);
        }
        long request = body.optionalLong("request_id", 0);
        NamePath.KV.check(key);
        return answered(member.keyValues().delete(caller, key, expected, request).thenApply(removal -> {
            ObjectNode answer = NODES.objectNode();
            answer.put("key", removal.key());
            answer.put("deleted", removal.deleted());
            answer.put("revision", removal.revision());
            answer.put("compare_failed", removal.compareFailed());
            return Answer.ok(answer);
        }));
    }

    /** The key, read linearizably: 404 not_found when it is absent. */
    CompletableFuture<Answer> get(Principal caller, String key) {
        NamePath.KV.check(key);
        return answered(member.keyValues().read(caller, key).thenApply(read -> {
            if (read.entry() == null) {
                throw new Failure(ErrorCode.NOT_FOUND, null, "key '" + key + "' does not exist (at revision " + read.revision() + ")");
            }
            ObjectNode body = entryJson(read.entry());
            body.put("revision", read.revision());
            return Answer.ok(body);
        }));
    }

    /** Keys that start with {@code prefix} after key {@code after}, in key order, at most {@code limit} (default {@value Limits#DEFAULT_LIST}). */
    CompletableFuture<Answer> list(Principal caller, String prefix, String after, String limitText) {
        int limit = LockApi.listLimit(limitText);
        return answered(member.keyValues().list(caller, prefix == null ? "" : prefix, after == null ? "" : after, limit).thenApply(listing -> {
            ObjectNode body = NODES.objectNode();
            ArrayNode entries = body.putArray("entries");
            listing.entries().forEach(view -> entries.add(entryJson(view)));
            body.put("more", listing.more());
            body.put("next_after", listing.nextAfterKey());
            body.put("revision", listing.revision());
            return Answer.ok(body);
        }));
    }

    /**
     * A transaction over keys and counters: the comparisons, then the success or the failure
     * operations, all or none (see the class comment for the body). Bad input names the field as
     * sent ({@code compare[1].target}, {@code success[0].put.value}); a put bound to a lease that
     * is gone is 404 {@code lease_not_found}; an operation the store refuses (a new key over its
     * limit, an add out of the 64-bit range) is 409 {@code conflict} naming it; nothing changes then.
     */
    CompletableFuture<Answer> txn(Principal caller, JsonBody body) {
        List<TxnCompare> compares = new ArrayList<>();
        for (JsonBody compare : body.optionalObjects("compare")) {
            compares.add(compare(compare));
        }
        List<Command> success = operations(body.optionalObjects("success"));
        List<Command> failure = operations(body.optionalObjects("failure"));
        long request = body.optionalLong("request_id", 0);
        return member.keyValues().transact(caller, new Txn(compares, success, failure, request)).thenApply(transacted -> {
            ObjectNode answer = NODES.objectNode();
            answer.put("succeeded", transacted.succeeded());
            answer.put("revision", transacted.revision());
            ArrayNode results = answer.putArray("results");
            for (int i = 0; i < transacted.results().size(); i++) {
                results.add(result(transacted.applied().get(i), transacted.results().get(i)));
            }
            return Answer.ok(answer);
        }).exceptionally(error -> {
            Failure f = Failures.of(error);
            // The shared table's FAILED_PRECONDITION (stale) is, here, an operation the store refuses.
            throw new CompletionException(f.code == ErrorCode.STALE ? new Failure(ErrorCode.CONFLICT, null, f.getMessage()) : f);
        });
    }

    private static TxnCompare compare(JsonBody compare) {
        String kind = choice(compare, "kind", KvTable.NAME, CounterTable.NAME);
        String key = compare.requiredString("key");
        TxnCompare.Target target = TxnCompare.Target.valueOf(choice(compare, "target", "value", "mod_revision", "create_revision", "version")
                .toUpperCase(Locale.ROOT));
        TxnCompare.Relation relation = TxnCompare.Relation.valueOf(choice(compare, "result", "equal", "not_equal", "less", "greater")
                .toUpperCase(Locale.ROOT));
        if (kind.equals(KvTable.NAME) && target == TxnCompare.Target.VALUE) {
            return TxnCompare.ofValue(kind, key, relation, JsonValues.read(compare, "value", true));
        }
        return TxnCompare.of(kind, key, target, relation, compare.requiredLong("value"));
    }

    /** The string {@code field}, required, one of {@code choices}. */
    private static String choice(JsonBody body, String field, String... choices) {
        String value = body.optionalString(field);
        if (value == null || !List.of(choices).contains(value)) {
            throw Failure.invalid(body.named(field), body.named(field) + " must be \"" + String.join("\", \"", choices) + "\", got "
                    + (value == null ? "nothing" : "\"" + value + "\""));
        }
        return value;
    }

    private static List<Command> operations(List<JsonBody> operations) {
        List<Command> commands = new ArrayList<>(operations.size());
        for (JsonBody operation : operations) {
            JsonBody put = operation.optionalObject("put");
            JsonBody delete = operation.optionalObject("delete");
            JsonBody add = operation.optionalObject("add");
            JsonBody set = operation.optionalObject("set");
            if ((put == null ? 0 : 1) + (delete == null ? 0 : 1) + (add == null ? 0 : 1) + (set == null ? 0 : 1) != 1) {
                String at = operation.named("");
                throw Failure.invalid(at.substring(0, at.length() - 1), at.substring(0, at.length() - 1)
                        + " must be an object with exactly one of put, delete, add and set");
            }
            if (put != null) {
                commands.add(new KvPut(put.requiredString("key"), JsonValues.read(put, "value", true), put.optionalLong("lease_id", 0),
                        put.optionalLong("ttl_ms", 0), 0));
            } else if (delete != null) {
                commands.add(new KvDelete(delete.requiredString("key"), KvDelete.ANY_REVISION, 0));
            } else if (add != null) {
                commands.add(new CounterAdd(add.requiredString("counter"), add.optionalLong("delta", 1), 0));
            } else {
                commands.add(new CounterSet(set.requiredString("counter"), set.requiredLong("value"), 0));
            }
        }
        return commands;
    }

    /** One applied operation's answer, under its name: the fields of the put, delete, add or set endpoints' answers. */
    private static ObjectNode result(Command applied, TxnResult.Done done) {
        ObjectNode result = NODES.objectNode();
        if (applied instanceof KvPut put) {
            ObjectNode body = result.putObject("put");
            body.put("key", put.key());
            body.put("revision", done.revision());
            body.put("prev_mod_revision", done.previous());
            body.put("created", done.previous() == 0);
            body.put("version", done.value());
        } else if (applied instanceof KvDelete delete) {
            ObjectNode body = result.putObject("delete");
            body.put("key", delete.key());
            body.put("deleted", done.changed());
            body.put("revision", done.revision());
        } else {
            ObjectNode body = result.putObject(applied instanceof CounterAdd ? "add" : "set");
            body.put("counter", applied instanceof CounterAdd add ? add.key() : ((CounterSet) applied).key());
            body.put("value", done.value());
            body.put("previous", done.previous());
            body.put("mod_revision", done.revision());
        }
        return result;
    }

    /**
     * The store's refusals in its own words: a bad field is named as sent here (the shared table
     * calls a {@code key} a lock's), an unknown lease is {@code lease_not_found} on
     * {@code lease_id}, and the one FAILED_PRECONDITION, the store's key limit, is
     * {@code limit_exceeded}.
     */
    private static CompletableFuture<Answer> answered(CompletableFuture<Answer> call) {
        return call.exceptionally(error -> {
            Throwable e = Causes.unwrap(error);
            if (e instanceof RequestRejected r) {
                throw new CompletionException(switch (r.code()) {
                    case INVALID_ARGUMENT -> Failure.invalid(r.field(), r.getMessage());
                    case NOT_FOUND -> new Failure(ErrorCode.LEASE_NOT_FOUND, "lease_id", r.getMessage());
                    case FAILED_PRECONDITION -> new Failure(ErrorCode.LIMIT_EXCEEDED, null, r.getMessage());
                    case ALREADY_EXISTS -> new Failure(ErrorCode.ALREADY_EXISTS, null, r.getMessage());
                });
            }
            throw e instanceof RuntimeException runtime ? new CompletionException(runtime) : new CompletionException(e);
        });
    }

    private static ObjectNode entryJson(KvView view) {
        ObjectNode body = NODES.objectNode();
        body.put("key", view.key());
        JsonValues.put(body, view.value());
        body.put("create_revision", view.createRevision());
        body.put("mod_revision", view.modRevision());
        body.put("version", view.version());
        body.put("lease_id", view.leaseId());
        body.put("ttl_ms", view.ttlMillis());
        return body;
    }
}
