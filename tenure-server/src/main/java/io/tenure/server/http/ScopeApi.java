package io.tenure.server.http;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tenure.core.scope.LockScope;
import io.tenure.core.scope.ScopeRequest;
import io.tenure.core.scope.ScopeResult;
import io.tenure.core.scope.ScopeView;
import io.tenure.server.Member;
import io.tenure.server.scope.Scopes;
import io.tenure.server.security.Principal;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * The {@code /v1/scopes} endpoints: lock scopes (sets of inodes, paths and byte ranges, all or
 * nothing, one fencing token per set) on the member's scope service, the one gRPC's
 * {@code ScopeService} calls. A part is {@code {"inode": 42}}, {@code {"path": "/data/a"}} or
 * {@code {"range": {"inode": 42, "start": 0, "end": 4096}}}, with {@code "mode": "exclusive"}
 * (the default) or {@code "shared"}; a bad part is 400 naming its field ({@code scopes[1].range.end}).
 *
 * <ul>
 *   <li><b>acquire</b> {@code {"scopes": [...], "wait_ms", "request_id", "metadata"}} with either
 *       {@code "lease_id"} (a lease the caller keeps alive, granted over gRPC; 404
 *       {@code lease_not_found} when it has ended) or {@code "owner_id", "ttl_ms"}: the lease recipe
 *       of every HTTP grant ({@link LeaseRecipe}), a fresh lease per acquire, renewed while it
 *       waits and revoked when nothing is acquired; a retried acquire whose answer was lost is
 *       answered the owner's grant of the same set again. Not acquired when {@code wait_ms} ends:
 *       409 {@code held} with the {@code blockers}; a wait that would close a cycle of waits: 409
 *       {@code conflict} naming {@code scopes}, the message naming the cycle ("deadlock: ..."),
 *       and nothing is queued.</li>
 *   <li><b>release</b> {@code {"lease_id", "fencing_token"}} lets the set go; with the acquire's
 *       {@code owner_id} it is the recipe's release (the owner checked, the lease revoked when it
 *       holds nothing more). A stale token is 409 {@code stale}.</li>
 *   <li><b>renew</b> {@code {"owner_id", "lease_id", "fencing_token"}} renews a recipe lease that
 *       holds the set with that token.</li>
 *   <li><b>cancel</b> {@code {"lease_id", "request_id"}} gives up an acquire's wait; when the
 *       grant came first it answers the grant, {@code acquired} true.</li>
 *   <li><b>describe</b>, GET with {@code ?inode=42}, {@code ?inode=42&start=0&end=4096},
 *       {@code ?path=/data/a} or {@code ?name=lock}, or POST {@code {"scope": part, "blocked":
 *       [...]}}: the holders and waiters of the sets overlapping the scope, and who would block the
 *       {@code blocked} parts now, read linearizably.</li>
 * </ul>
 */
final class ScopeApi {
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static final String EXCLUSIVE = "exclusive";
    private static final String SHARED = "shared";

    private final Member member;
    private final LeaseRecipe leases;

    ScopeApi(Member member, LeaseRecipe leases) {
        this.member = member;
        this.leases = leases;
    }

    CompletableFuture<Answer> acquire(Principal caller, JsonBody body, String requestId) {
        List<ScopeRequest> scopes = parts(body, "scopes");
        Scopes.checkSet("scopes", scopes);
        String text = body.optionalString("metadata");
        byte[] metadata = text == null ? new byte[0] : text.getBytes(StandardCharsets.UTF_8);
        long acquireRequest = body.optionalLong("request_id", 0);
        if (body.has("lease_id")) {
            if (body.has("owner_id") || body.has("ttl_ms")) {
                throw Failure.invalid("lease_id", "an acquire takes either lease_id (a lease the caller keeps alive) or owner_id and ttl_ms"
                        + " (a fresh lease for this acquire), not both");
            }
            long lease = body.requiredPositive("lease_id");
            long waitMs = waitMs(body);
            return member.scopes().acquire(caller, lease, scopes, metadata, waitMs, acquireRequest).outcome()
                    .handle((outcome, error) -> {
                        if (error != null) {
                            throw new CompletionException(failureOf(error));
                        }
                        if (!outcome.acquired()) {
                            throw held(outcome, lease);
                        }
                        return Answer.ok(grant(null, lease, outcome.fencingToken(), outcome.scopes()));
                    });
        }
        LeaseRecipe.Ask ask = LeaseRecipe.Ask.of(body);
        return member.readBarrier().thenCompose(ignored -> {
            ScopeView.Holder mine = member.scopes().heldByClient(ask.owner(), scopes);
            if (mine != null) {
                return CompletableFuture.completedFuture(granted(ask.owner(), mine.leaseId(), mine.fencingToken(), mine.scopes()));
            }
            LeaseRecipe.Attempt<Scopes.Outcome> attempt = new LeaseRecipe.Attempt<>(
                    lease -> member.scopes().acquire(caller, lease, scopes, metadata, ask.waitMs(), acquireRequest).outcome(),
                    Scopes.Outcome::acquired,
                    (lease, outcome) -> granted(ask.owner(), lease, outcome.fencingToken(), outcome.scopes()),
                    outcome -> held(outcome, 0));
            return leases.acquire(caller, ask, requestId, attempt).exceptionally(error -> {
                throw new CompletionException(failureOf(error));
            });
        });
    }

    private static long waitMs(JsonBody body) {
        long waitMs = body.optionalLong("wait_ms", 0);
        if (waitMs < 0 || waitMs > LeaseRecipe.MAX_WAIT_MS) {
            throw Failure.invalid("wait_ms", "wait_ms must be between 0 (try once) and " + LeaseRecipe.MAX_WAIT_MS + ", got " + waitMs);
        }
        return waitMs;
    }

    CompletableFuture<Answer> release(Principal caller, JsonBody body, String requestId) {
        long lease = body.requiredPositive("lease_id");
        long token = body.requiredPositive("fencing_token");
        if (body.has("owner_id")) {
            LeaseRecipe.Claim claim = LeaseRecipe.Claim.of(body);
            return leases.release(caller, claim, what(lease, token), requestId, () -> member.scopes().release(caller, lease, token),
                    ScopeApi::released);
        }
        return member.scopes().release(caller, lease, token).thenApply(ScopeApi::released);
    }

    private static Answer released(int granted) {
        return Answer.ok(NODES.objectNode().put("released", true).put("granted", granted));
    }

    CompletableFuture<Answer> renew(Principal caller, JsonBody body, String requestId) {
        LeaseRecipe.Claim claim = LeaseRecipe.Claim.of(body);
        return leases.renew(caller, claim, what(claim.leaseId(), claim.token()), requestId, () -> {
            List<ScopeRequest> held = member.scopes().heldWith(claim.leaseId(), claim.token());
            if (held == null) {
                throw new Failure(ErrorCode.NOT_HOLDER, "fencing_token", "lease " + claim.leaseId() + " holds no set of scopes with fencing token "
                        + claim.token() + " (released, or never granted)");
            }
            return held;
        }, held -> granted(claim.owner(), claim.leaseId(), claim.token(), held));
    }

    CompletableFuture<Answer> cancel(Principal caller, JsonBody body, String requestId) {
        long lease = body.requiredPositive("lease_id");
        long acquireRequest = body.requiredLong("request_id");
        if (acquireRequest == 0) {
            throw Failure.invalid("request_id", "request_id must name the acquire whose wait to give up (the request_id it was sent with), got 0");
        }
        CompletableFuture<Scopes.Outcome> withdrawn;
        if (body.has("owner_id")) {
            withdrawn = leases.withdraw(LeaseRecipe.Waiting.of(body), "acquire " + Long.toUnsignedString(acquireRequest), requestId,
                    () -> member.scopes().cancel(caller, lease, acquireRequest));
        } else {
            withdrawn = member.readBarrier().thenCompose(ignored -> {
                if (member.leases().view(lease) == null) {
                    throw new Failure(ErrorCode.LEASE_NOT_FOUND, "lease_id", "lease " + lease + " not found: never granted, expired or revoked;"
                            + " a lease that ends waits for nothing, so there is no wait to give up");
                }
                return member.scopes().cancel(caller, lease, acquireRequest);
            });
        }
        return withdrawn.thenApply(outcome -> {
            if (outcome.acquired()) {
                ObjectNode grant = grant(null, lease, outcome.fencingToken(), outcome.scopes());
                grant.put("acquired", true);
                return Answer.ok(grant);
            }
            return Answer.ok(NODES.objectNode().put("lease_id", lease).put("request_id", acquireRequest).put("acquired", false));
        });
    }

    /** POST: {@code {"scope": part, "blocked": [parts]}}. */
    CompletableFuture<Answer> describe(Principal caller, JsonBody body) {
        JsonBody part = body.optionalObject("scope");
        LockScope scope = part == null ? null : scope(part);
        List<ScopeRequest> blocked = parts(body, "blocked");
        return describe(caller, scope, blocked);
    }

    /** GET: {@code ?inode=42}, {@code ?inode=42&start=0&end=4096}, {@code ?path=/data/a} or {@code ?name=lock}. */
    CompletableFuture<Answer> describe(Principal caller, Map<String, List<String>> query) {
        List<String> kinds = new ArrayList<>();
        for (String kind : List.of("inode", "path", "name")) {
            if (query.containsKey(kind)) {
                kinds.add(kind);
            }
        }
        if (kinds.size() != 1) {
            throw Failure.invalid("scope", "describe one scope: ?inode=N, ?inode=N&start=S&end=E (a byte range), ?path=/p or ?name=lock"
                    + (kinds.isEmpty() ? "" : ", not " + String.join(" and ", kinds)));
        }
        LockScope scope = switch (kinds.get(0)) {
            case "inode" -> query.containsKey("start") || query.containsKey("end") ? range(query) : Scopes.inode("inode", number(query, "inode"));
            case "path" -> Scopes.path("path", one(query, "path"));
            default -> Scopes.name("name", one(query, "name"));
        };
        return describe(caller, scope, List.of());
    }

    private CompletableFuture<Answer> describe(Principal caller, LockScope scope, List<ScopeRequest> blocked) {
        return member.scopes().read(caller, scope, blocked).thenApply(read -> {
            ObjectNode body = NODES.objectNode();
            if (scope != null) {
                body.set("scope", json(new ScopeRequest(scope, true)).without("mode"));
            }
            ArrayNode holders = body.putArray("holders");
            for (ScopeView.Holder h : read.holders()) {
                ObjectNode holder = holders.addObject().put("lease_id", h.leaseId()).put("owner_id", h.clientId())
                        .put("fencing_token", h.fencingToken());
                holder.set("scopes", json(h.scopes()));
                holder.put("metadata", new String(h.metadata(), StandardCharsets.UTF_8));
            }
            ArrayNode waiters = body.putArray("waiters");
            for (ScopeView.Waiter w : read.waiters()) {
                ObjectNode waiter = waiters.addObject().put("lease_id", w.leaseId()).put("owner_id", w.clientId())
                        .put("joined_revision", w.joinedAt());
                waiter.set("scopes", json(w.scopes()));
            }
            body.set("blockers", blockers(read.blockers()));
            body.put("revision", read.revision());
            return Answer.ok(body);
        });
    }

    /** A byte range from {@code ?inode=N&start=S&end=E}, refused naming the query parameter at fault. */
    private static LockScope range(Map<String, List<String>> query) {
        long inode = number(query, "inode");
        long start = number(query, "start");
        long end = number(query, "end");
        if (start < 0) {
            throw Failure.invalid("start", "start must not be negative, got " + start);
        }
        if (end <= start) {
            throw Failure.invalid("end", "end must be above start (a range is half-open [start, end)), got [" + start + ", " + end + ")");
        }
        return Scopes.range("range", inode, start, end);
    }

    private static String one(Map<String, List<String>> query, String name) {
        List<String> values = query.get(name);
        if (values == null || values.size() != 1) {
            throw Failure.invalid(name, name + " must be given once, got " + (values == null ? "none" : values.size() + " values"));
        }
        return values.get(0);
    }

    private static long number(Map<String, List<String>> query, String name) {
        String text = one(query, name);
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw Failure.invalid(name, name + " must be an integer, got \"" + text + "\"");
        }
    }

    // ---- JSON scopes and back ---------------------------------------------------------------------

    /** The parts of array {@code field} (none when absent), each checked on its own; the set's rules are the service's. */
    private static List<ScopeRequest> parts(JsonBody body, String field) {
        List<ScopeRequest> parts = new ArrayList<>();
        for (JsonBody part : body.optionalObjects(field)) {
            boolean exclusive = part.optionalChoice("mode", EXCLUSIVE, EXCLUSIVE, SHARED).equals(EXCLUSIVE);
            parts.add(new ScopeRequest(scope(part), exclusive));
        }
        return parts;
    }

    /** One part's scope: exactly one of {@code inode}, {@code path}, {@code range} (and {@code name}, which a set refuses naming its place). */
    private static LockScope scope(JsonBody part) {
        String at = where(part);
        List<String> kinds = new ArrayList<>();
        for (String kind : List.of("inode", "path", "range", "name")) {
            if (part.has(kind)) {
                kinds.add(kind);
            }
        }
        if (kinds.size() != 1) {
            throw Failure.invalid(at, at + " must set exactly one of inode, path or range (or name, to describe a lock)"
                    + (kinds.isEmpty() ? "" : ", got " + String.join(" and ", kinds)));
        }
        switch (kinds.get(0)) {
            case "inode":
                return Scopes.inode(part.named("inode"), part.requiredLong("inode"));
            case "path":
                return Scopes.path(part.named("path"), part.requiredString("path"));
            case "range":
                JsonBody range = part.optionalObject("range");
                return Scopes.range(where(range), range.requiredLong("inode"), range.requiredLong("start"), range.requiredLong("end"));
            default:
                return Scopes.name(part.named("name"), part.requiredString("name"));
        }
    }

    /** Where a nested object sits in the request, as failures name it: {@code scopes[1]}, {@code scopes[1].range}. */
    private static String where(JsonBody object) {
        String prefix = object.named("");
        return prefix.endsWith(".") ? prefix.substring(0, prefix.length() - 1) : prefix;
    }

    static ObjectNode json(ScopeRequest part) {
        ObjectNode node = NODES.objectNode();
        LockScope scope = part.scope();
        if (scope instanceof LockScope.Inode i) {
            node.put("inode", i.inode());
        } else if (scope instanceof LockScope.Path p) {
            node.put("path", p.path());
        } else if (scope instanceof LockScope.ByteRange r) {
            node.putObject("range").put("inode", r.inode()).put("start", r.start()).put("end", r.end());
        } else if (scope instanceof LockScope.Named n) {
            node.put("name", n.name());
        }
        node.put("mode", part.exclusive() ? EXCLUSIVE : SHARED);
        return node;
    }

    private static ArrayNode json(List<ScopeRequest> parts) {
        ArrayNode array = NODES.arrayNode();
        parts.forEach(part -> array.add(json(part)));
        return array;
    }

    private static ArrayNode blockers(List<ScopeResult.Blocker> blockers) {
        ArrayNode array = NODES.arrayNode();
        for (ScopeResult.Blocker b : blockers) {
            ObjectNode blocker = array.addObject().put("lease_id", b.leaseId()).put("owner_id", b.clientId());
            blocker.set("part", json(new ScopeRequest(b.scope(), b.exclusive())));
            blocker.put("holding", b.holding()).put("fencing_token", b.fencingToken());
        }
        return array;
    }

    // ---- answers ----------------------------------------------------------------------------------

    /** A grant: {@code owner_id} (recipe leases only), {@code lease_id}, {@code fencing_token}, {@code scopes}. */
    private static ObjectNode grant(String owner, long leaseId, long token, List<ScopeRequest> scopes) {
        ObjectNode body = NODES.objectNode();
        if (owner != null) {
            body.put("owner_id", owner);
        }
        body.put("lease_id", leaseId);
        body.put("fencing_token", token);
        body.set("scopes", json(scopes));
        return body;
    }

    /** A recipe lease's grant, with the lease's expiry. */
    private Answer granted(String owner, long leaseId, long token, List<ScopeRequest> scopes) {
        return Answer.ok(leases.expiryOf(grant(owner, leaseId, token, scopes), leaseId));
    }

    /** The 409 {@code held} answer: whom the set waited for when the wait ended; {@code leaseId} when the caller's lease keeps nothing else. */
    private static Failure held(Scopes.Outcome refused, long leaseId) {
        Map<String, Object> extra = new LinkedHashMap<>();
        if (leaseId != 0) {
            extra.put("lease_id", leaseId);
        }
        extra.put("blockers", blockers(refused.blockers()));
        String who = refused.blockers().stream().map(b -> "lease " + b.leaseId() + " ('" + b.clientId() + "') "
                + (b.holding() ? "holding " : "waiting ahead for ") + b.scope() + (b.exclusive() ? " exclusive" : " shared"))
                .distinct().reduce((a, b) -> a + ", " + b).orElse("nobody now");
        return new Failure(ErrorCode.HELD, null, "the scopes " + refused.scopes() + " were not acquired: in the way: " + who
                + (leaseId != 0 ? "; lease " + leaseId + " does not wait for them (its wait, if any, was withdrawn)" : "; its lease was revoked")
                + ": acquire again, with wait_ms to wait for them", extra);
    }

    /** A wait that would close a cycle of waits (FAILED_PRECONDITION on the set) is a conflict with what the lease holds, not a stale token. */
    private static Failure failureOf(Throwable error) {
        Failure f = Failures.of(error);
        if (f.code == ErrorCode.STALE && "scopes".equals(f.field)) {
            return new Failure(ErrorCode.CONFLICT, "scopes", f.getMessage());
        }
        return f;
    }

    private static String what(long leaseId, long token) {
        return "the scopes of lease " + leaseId + " with fencing token " + token;
    }
}
