package io.tenure.server.http;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tenure.core.semaphore.SemaphoreTable;
import io.tenure.core.semaphore.SemaphoreView;
import io.tenure.server.Member;
import io.tenure.server.semaphore.Semaphores;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * The {@code /v1/semaphores} endpoints: counting semaphores on the member's semaphore and lease
 * services (the ones gRPC's {@code SemaphoreService} calls), with the lease recipe of every HTTP
 * grant ({@link LeaseRecipe}): a fresh lease for {@code owner_id} per acquire, renewed while it
 * waits, revoked when nothing is acquired and when its grant is released. The services decide;
 * this translates:
 *
 * <ul>
 *   <li><b>acquire</b> asks for {@code permits} (default 1) of a semaphore whose limit is
 *       {@code limit}, waiting up to {@code wait_ms} in its strict FIFO queue. Too few permits
 *       free when the wait ends gets 409 {@code held} with the permits free, the waiters and a
 *       retry hint. An acquire the semaphore refuses whatever its lease (another limit than the
 *       live semaphore's, a lock's name) is 409 {@code conflict}, found before a lease is granted,
 *       so it leaves nothing behind. <b>Idempotent</b> as for locks: when a lease of this
 *       {@code owner_id} already holds a grant of the semaphore (a retried acquire whose answer
 *       was lost), that grant is answered again; an owner id names one client, which holds at
 *       most one grant of a semaphore over HTTP.</li>
 *   <li><b>renew</b> checks the lease holds the grant with this token ({@link SemaphoreTable#notHeld}).</li>
 *   <li><b>release</b> returns the grant's permits; {@code handed_to} says how many waiters were
 *       granted with them. A retried release succeeds again, as for locks.</li>
 * </ul>
 */
final class SemaphoreApi {
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private final Member member;
    private final LeaseRecipe leases;

    SemaphoreApi(Member member, LeaseRecipe leases) {
        this.member = member;
        this.leases = leases;
    }

    CompletableFuture<Answer> acquire(String name, JsonBody body, String requestId) {
        LeaseRecipe.Ask ask = LeaseRecipe.Ask.of(body);
        int limit = body.requiredInt("limit");
        int permits = body.optionalInt("permits", 1);
        NamePath.SEMAPHORES.check(name);
        Semaphores.checkPermits(limit, permits);
        return member.semaphores().read(name).thenCompose(read -> {
            checkConflict(name, limit);
            SemaphoreView.Holder mine = holderOf(read.semaphore(), ask.owner());
            if (mine != null) {
                return CompletableFuture.completedFuture(again(name, ask.owner(), mine, permits));
            }
            LeaseRecipe.Attempt<Semaphores.Outcome> attempt = new LeaseRecipe.Attempt<>(
                    lease -> member.semaphores().acquire(name, lease, limit, permits, ask.waitMs(), 0).outcome(),
                    Semaphores.Outcome::acquired,
                    (lease, outcome) -> granted(name, ask.owner(), lease, outcome.fencingToken(), outcome.permits()),
                    outcome -> held(name, limit, permits, outcome));
            return leases.acquire(ask, requestId, attempt).exceptionally(error -> {
                throw new CompletionException(conflictOf(name, limit, error));
            });
        });
    }

    /** Refuses, as 409 {@code conflict} naming the field, an acquire the semaphore would refuse whatever its lease. */
    private void checkConflict(String name, int limit) {
        SemaphoreTable.Refusal conflict = member.semaphores().conflict(name, limit);
        if (conflict != null) {
            throw new Failure(ErrorCode.CONFLICT, field(conflict), conflict.message());
        }
    }

    /**
     * The failure of an acquire that got past {@link #checkConflict}: the semaphore's
     * FAILED_PRECONDITION then means the name changed in between (made a lock, or a semaphore
     * with another limit), which is a conflict; checked again to name the field.
     */
    private Failure conflictOf(String name, int limit, Throwable error) {
        Failure f = Failures.of(error);
        if (f.code != ErrorCode.STALE) {
            return f;
        }
        SemaphoreTable.Refusal now = member.semaphores().conflict(name, limit);
        return now == null ? new Failure(ErrorCode.CONFLICT, f.field, f.getMessage())
                : new Failure(ErrorCode.CONFLICT, field(now), now.message());
    }

    /** The core names the semaphore's field as gRPC does ({@code name}); here it is {@code semaphore}. */
    private static String field(SemaphoreTable.Refusal refusal) {
        return refusal.field().equals("name") ? "semaphore" : refusal.field();
    }

    private static SemaphoreView.Holder holderOf(SemaphoreView view, String owner) {
        if (view == null) {
            return null;
        }
        return view.holders().stream().filter(h -> h.clientId().equals(owner)).findFirst().orElse(null);
    }

    /** The owner's grant answered again, when this acquire asks for as many permits as it holds. */
    private Answer again(String name, String owner, SemaphoreView.Holder mine, int permits) {
        if (mine.permits() != permits) {
            throw new Failure(ErrorCode.CONFLICT, "permits", "owner '" + owner + "' already holds " + mine.permits()
                    + " permits of semaphore '" + name + "' (lease " + mine.leaseId() + ", fencing token " + mine.fencingToken()
                    + "), not " + permits + "; an owner holds one grant of a semaphore: release it first");
        }
        return granted(name, owner, mine.leaseId(), mine.fencingToken(), mine.permits());
    }

    /** The 409 {@code held} answer: the permits free and the waiters now, and a hint from the holders' leases. */
    private Failure held(String name, int limit, int permits, Semaphores.Outcome refused) {
        SemaphoreView now = member.semaphores().describe(name);
        int available = now == null ? refused.available() : now.available();
        int waiters = now == null ? refused.waiters() : now.waiters().size();
        List<Long> holders = now == null ? List.of() : now.holders().stream().map(SemaphoreView.Holder::leaseId).toList();
        long hint = leases.retryHint(holders, waiters);
        Map<String, Object> extra = new LinkedHashMap<>();
        extra.put("semaphore", name);
        extra.put("limit", limit);
        extra.put("available", available);
        extra.put("waiters", waiters);
        extra.put("recommended_retry_ms", hint);
        return new Failure(ErrorCode.HELD, null, "semaphore '" + name + "' has " + available + " of " + limit + " permits free"
                + (waiters > 0 ? " and " + waiters + " waiting" : "") + ", so " + permits + " could not be granted; retry in about "
                + hint + " ms, or acquire with wait_ms to queue for them", extra);
    }

    CompletableFuture<Answer> renew(String name, JsonBody body, String requestId) {
        LeaseRecipe.Claim claim = LeaseRecipe.Claim.of(body);
        NamePath.SEMAPHORES.check(name);
        return leases.renew(claim, "semaphore '" + name + "'", requestId, () -> {
            Semaphores.Holding holding = member.semaphores().holding(name, claim.leaseId(), claim.token());
            if (holding.notHeld() != null) {
                throw new Failure(ErrorCode.NOT_HOLDER, field(holding.notHeld()), holding.notHeld().message());
            }
            return holding.permits();
        }, permits -> granted(name, claim.owner(), claim.leaseId(), claim.token(), permits));
    }

    CompletableFuture<Answer> release(String name, JsonBody body, String requestId) {
        LeaseRecipe.Claim claim = LeaseRecipe.Claim.of(body);
        NamePath.SEMAPHORES.check(name);
        return leases.release(claim, "semaphore '" + name + "'", requestId,
                () -> member.semaphores().release(name, claim.leaseId(), claim.token()),
                handedTo -> Answer.ok(NODES.objectNode().put("semaphore", name).put("released", true).put("handed_to", handedTo)));
    }

    /**
     * The semaphore's limit, permits free, holders and waiters, and since when it is idle (0 in
     * use), read linearizably; 404 {@code not_found} when it does not exist (never used, or idle
     * and forgotten).
     */
    CompletableFuture<Answer> describe(String name) {
        NamePath.SEMAPHORES.check(name);
        return member.semaphores().read(name).thenApply(read -> {
            SemaphoreView view = read.semaphore();
            if (view == null) {
                throw new Failure(ErrorCode.NOT_FOUND, null, "semaphore '" + name
                        + "' does not exist (nobody holds or waits for it, and it was not used within the idle time)");
            }
            ObjectNode body = NODES.objectNode();
            body.put("semaphore", view.key());
            body.put("limit", view.limit());
            body.put("available", view.available());
            ArrayNode holders = body.putArray("holders");
            for (SemaphoreView.Holder h : view.holders()) {
                holders.addObject().put("lease_id", h.leaseId()).put("owner_id", h.clientId()).put("permits", h.permits())
                        .put("fencing_token", h.fencingToken());
            }
            ArrayNode waiters = body.putArray("waiters");
            for (SemaphoreView.Waiter w : view.waiters()) {
                waiters.addObject().put("lease_id", w.leaseId()).put("owner_id", w.clientId()).put("permits", w.permits())
                        .put("joined_revision", w.joinedAt());
            }
            body.put("create_revision", view.createRevision());
            body.put("version", view.version());
            body.put("idle_since_revision", view.idleSince());
            body.put("revision", read.revision());
            return Answer.ok(body);
        });
    }

    private Answer granted(String name, String owner, long leaseId, long token, int permits) {
        ObjectNode body = LeaseRecipe.grant("semaphore", name, owner, leaseId, token);
        body.put("permits", permits);
        return Answer.ok(leases.expiryOf(body, leaseId));
    }
}
