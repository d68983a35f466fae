package io.tenure.server.http;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tenure.core.semaphore.SemaphoreTable;
import io.tenure.core.semaphore.SemaphoreView;
import io.tenure.server.Member;
import io.tenure.server.security.Principal;
import io.tenure.server.semaphore.Semaphores;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

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
 *   <li><b>acquire</b> with {@code enqueue} and <b>wait</b>: the two-phase acquire, as for locks
 *       ({@link LockApi}), for the permits the lease enqueued for; <b>cancel</b> gives the place up.</li>
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

    CompletableFuture<Answer> acquire(Principal caller, String name, JsonBody body, String requestId) {
        LeaseRecipe.Ask ask = LeaseRecipe.Ask.of(body);
        int limit = body.requiredInt("limit");
        int permits = body.optionalInt("permits", 1);
        NamePath.SEMAPHORES.check(name);
        Semaphores.checkPermits(limit, permits);
        boolean enqueue = LockApi.enqueue(body, ask);
        return member.semaphores().read(caller, name).thenCompose(read -> {
            checkConflict(name, limit);
            SemaphoreView.Holder mine = holderOf(read.semaphore(), ask.owner());
            if (mine != null) {
                return CompletableFuture.completedFuture(again(name, ask.owner(), mine, permits));
            }
            SemaphoreView.Waiter waiting = enqueue ? waiterOf(read.semaphore(), ask.owner()) : null;
            if (waiting != null) {
                return CompletableFuture.completedFuture(queuedAgain(name, ask.owner(), read.semaphore(), waiting, permits));
            }
            // Enqueued as request id the lease's own, as a lock's enqueue is (LockApi).
            LeaseRecipe.Attempt<Semaphores.Outcome> attempt = enqueue
                    ? new LeaseRecipe.Attempt<>(
                            lease -> member.semaphores().acquire(caller, name, lease, limit, permits, 0, lease, true).outcome(),
                            outcome -> true,
                            (lease, outcome) -> outcome.acquired()
                                    ? granted(name, ask.owner(), lease, outcome.fencingToken(), outcome.permits())
                                    : queued(name, ask.owner(), lease, outcome.waiters() + 1, permits),
                            outcome -> null)
                    : new LeaseRecipe.Attempt<>(
                            lease -> member.semaphores().acquire(caller, name, lease, limit, permits, ask.waitMs(), 0).outcome(),
                            Semaphores.Outcome::acquired,
                            (lease, outcome) -> granted(name, ask.owner(), lease, outcome.fencingToken(), outcome.permits()),
                            outcome -> held(name, limit, permits, outcome, null));
            return leases.acquire(caller, ask, requestId, attempt).exceptionally(error -> {
                throw new CompletionException(conflictOf(name, limit, error));
            });
        });
    }

    private static SemaphoreView.Waiter waiterOf(SemaphoreView view, String owner) {
        if (view == null) {
            return null;
        }
        return view.waiters().stream().filter(w -> w.clientId().equals(owner)).findFirst().orElse(null);
    }

    /** The lease's place in {@code view}'s queue, from 1; 0 when it does not wait. */
    private static int positionOf(SemaphoreView view, long leaseId) {
        if (view != null) {
            for (int i = 0; i < view.waiters().size(); i++) {
                if (view.waiters().get(i).leaseId() == leaseId) {
                    return i + 1;
                }
            }
        }
        return 0;
    }

    /** A retried enqueue of an owner whose lease already waits: its place answered again, for as many permits. */
    private Answer queuedAgain(String name, String owner, SemaphoreView current, SemaphoreView.Waiter waiting, int permits) {
        if (waiting.permits() != permits) {
            throw new Failure(ErrorCode.CONFLICT, "permits", "owner '" + owner + "' already waits for " + waiting.permits()
                    + " permits of semaphore '" + name + "' (lease " + waiting.leaseId() + "), not " + permits + ": one wait per owner");
        }
        return queued(name, owner, waiting.leaseId(), positionOf(current, waiting.leaseId()), permits);
    }

    /** The 202 answer of an enqueue that was not granted at once: the lease keeps its place, {@code position} from 1. */
    private Answer queued(String name, String owner, long leaseId, int position, int permits) {
        ObjectNode body = NODES.objectNode();
        body.put("semaphore", name);
        body.put("owner_id", owner);
        body.put("lease_id", leaseId);
        body.put("queued", true);
        body.put("position", position);
        body.put("permits", permits);
        return new Answer(202, leases.expiryOf(body, leaseId));
    }

    /**
     * The second phase of a two-phase acquire: the grant of the place's lease, waiting up to
     * {@code wait_ms} for it ({@link LeaseRecipe#await}); for the permits the lease waits for.
     */
    CompletableFuture<Answer> await(Principal caller, String name, JsonBody body, String requestId) {
        LeaseRecipe.Place place = LeaseRecipe.Place.of(body);
        NamePath.SEMAPHORES.check(name);
        String what = "semaphore '" + name + "'";
        AtomicReference<SemaphoreView> asked = new AtomicReference<>();
        AtomicInteger permits = new AtomicInteger();
        return leases.await(caller, place, what, requestId, new LeaseRecipe.SecondPhase<Semaphores.Outcome>(
                () -> {
                    SemaphoreView view = member.semaphores().describe(name);
                    SemaphoreView.Holder held = view == null ? null
                            : view.holders().stream().filter(h -> h.leaseId() == place.leaseId()).findFirst().orElse(null);
                    if (held != null) {
                        return () -> granted(name, place.owner(), place.leaseId(), held.fencingToken(), held.permits());
                    }
                    SemaphoreView.Waiter waiting = view == null ? null
                            : view.waiters().stream().filter(w -> w.leaseId() == place.leaseId()).findFirst().orElse(null);
                    if (waiting == null) {
                        throw LockApi.notQueued(what, place.leaseId());
                    }
                    asked.set(view);
                    permits.set(waiting.permits());
                    return null;
                },
                () -> member.semaphores().acquire(caller, name, place.leaseId(), asked.get().limit(), permits.get(), -1, place.leaseId(), false),
                outcome -> granted(name, place.owner(), place.leaseId(), outcome.fencingToken(), outcome.permits()),
                () -> held(name, asked.get().limit(), permits.get(), new Semaphores.Outcome(name, false, 0, 0, asked.get().available(),
                        asked.get().waiters().size()), place),
                () -> LockApi.notQueued(what, place.leaseId())));
    }

    /**
     * Withdraws the lease's place in the semaphore's queue ({@link LeaseRecipe#withdraw}): 200 with
     * {@code acquired} false, the permits free and the waiters now, or, when the grant came first,
     * the grant's answer with {@code acquired} true, as for locks ({@link LockApi#cancel}).
     */
    CompletableFuture<Answer> cancel(Principal caller, String name, JsonBody body, String requestId) {
        LeaseRecipe.Waiting waiting = LeaseRecipe.Waiting.of(body);
        NamePath.SEMAPHORES.check(name);
        // The enqueue's request id is its lease's own (see acquire).
        return leases.withdraw(waiting, "semaphore '" + name + "'", requestId,
                () -> member.semaphores().cancel(caller, name, waiting.leaseId(), waiting.leaseId())).thenApply(outcome -> {
                    if (outcome.acquired()) {
                        Answer grant = granted(name, waiting.owner(), waiting.leaseId(), outcome.fencingToken(), outcome.permits());
                        grant.body().put("acquired", true);
                        return grant;
                    }
                    ObjectNode withdrawn = waiting.answer("semaphore", name);
                    withdrawn.put("acquired", false);
                    SemaphoreView now = member.semaphores().describe(name);
                    withdrawn.put("available", now == null ? outcome.available() : now.available());
                    withdrawn.put("waiters", now == null ? 0 : now.waiters().size());
                    return Answer.ok(withdrawn);
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
    private Failure held(String name, int limit, int permits, Semaphores.Outcome refused, LeaseRecipe.Place queued) {
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
        String advice = "; retry in about " + hint + " ms, or acquire with wait_ms to queue for them";
        if (queued != null) {
            int position = positionOf(now, queued.leaseId());
            extra.put("lease_id", queued.leaseId());
            extra.put("position", position);
            advice = "; lease " + queued.leaseId() + " keeps its place" + (position > 0 ? " (position " + position + ")" : "")
                    + ": wait again, at least once per TTL to keep the lease alive";
        }
        return new Failure(ErrorCode.HELD, null, "semaphore '" + name + "' has " + available + " of " + limit + " permits free"
                + (waiters > 0 ? " and " + waiters + " waiting" : "") + ", so " + permits + " could not be granted" + advice, extra);
    }

    CompletableFuture<Answer> renew(Principal caller, String name, JsonBody body, String requestId) {
        LeaseRecipe.Claim claim = LeaseRecipe.Claim.of(body);
        NamePath.SEMAPHORES.check(name);
        return leases.renew(caller, claim, "semaphore '" + name + "'", requestId, () -> {
            Semaphores.Holding holding = member.semaphores().holding(name, claim.leaseId(), claim.token());
            if (holding.notHeld() != null) {
                throw new Failure(ErrorCode.NOT_HOLDER, field(holding.notHeld()), holding.notHeld().message());
            }
            return holding.permits();
        }, permits -> granted(name, claim.owner(), claim.leaseId(), claim.token(), permits));
    }

    CompletableFuture<Answer> release(Principal caller, String name, JsonBody body, String requestId) {
        LeaseRecipe.Claim claim = LeaseRecipe.Claim.of(body);
        NamePath.SEMAPHORES.check(name);
        return leases.release(caller, claim, "semaphore '" + name + "'", requestId,
                () -> member.semaphores().release(caller, name, claim.leaseId(), claim.token()),
                handedTo -> Answer.ok(NODES.objectNode().put("semaphore", name).put("released", true).put("handed_to", handedTo)));
    }

    /**
     * The semaphore's limit, permits free, holders and waiters, and since when it is idle (0 in
     * use), read linearizably; 404 {@code not_found} when it does not exist (never used, or idle
     * and forgotten).
     */
    CompletableFuture<Answer> describe(Principal caller, String name) {
        NamePath.SEMAPHORES.check(name);
        return member.semaphores().read(caller, name).thenApply(read -> {
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
