package io.tenure.server.http;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tenure.core.Limits;
import io.tenure.core.kernel.LeaseView;
import io.tenure.core.lock.LockTable;
import io.tenure.core.lock.LockView;
import io.tenure.proto.v1.ResponseHeader;
import io.tenure.proto.v1.StatusResponse;
import io.tenure.server.Member;
import io.tenure.server.security.Principal;
import io.tenure.server.lock.Locks;

import java.nio.charset.StandardCharsets;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The {@code /v1} lock endpoints: seed 002's lock API (acquire, renew, release with owner, lease
 * and fencing token) mapped onto the member's lock and lease services, the same ones the gRPC
 * front end calls, with the lease recipe every HTTP grant shares ({@link LeaseRecipe}). It decides
 * nothing the services decide; what it adds for locks:
 *
 * <ul>
 *   <li><b>acquire</b> asks in {@code mode} {@code write} (exclusive, the default) or {@code read}
 *       (beside other readers), waiting up to {@code wait_ms} in the lock's FIFO queue (0 = try
 *       once). A lock still held when the wait ends gets 409 {@code held} with a retry hint
 *       ({@link RetryHint}). <b>Idempotent:</b> when a lease of this {@code owner_id} already holds
 *       the lock (a retried acquire whose answer was lost), that grant is answered again rather
 *       than queueing the owner behind itself; held in the other mode, the acquire is 409
 *       {@code conflict} naming {@code mode}, as the core refuses a lease's upgrade (a reader
 *       asking for write) and a writer asking for read (it downgrades instead).</li>
 *   <li><b>acquire</b> with {@code enqueue} is the first phase of a two-phase acquire: answered at
 *       once, granted (200) or queued (202, the fresh lease's {@code position} from 1); the lease
 *       keeps the place. <b>wait</b> completes it ({@link LeaseRecipe#await}): the grant, or 409
 *       {@code held} with the place kept when {@code wait_ms} passes; 409 {@code not_queued} for a
 *       lease that neither waits for nor holds the lock. <b>cancel</b> gives the place up
 *       ({@link LeaseRecipe#withdraw}); when the grant came first it answers the grant.</li>
 *   <li><b>renew</b> checks the lease holds the lock with this token ({@link LockTable#notHeld}).</li>
 *   <li><b>release</b> releases with (lease, token). A retried release of a grant already released
 *       succeeds again: the replicated state remembers the last 16,384 releases by (lock, lease,
 *       token), even after the lease is gone.</li>
 *   <li><b>downgrade</b> turns the write-mode hold of (lease, token) into a read-mode hold with the
 *       same token, granting the readers queued at the head beside it; refused as a release is.</li>
 * </ul>
 *
 * <p>A caller that goes away during a wait is not noticed until the wait ends; a grant that comes
 * after that holds the lock until its lease expires, one TTL after the wait's last renewal. A
 * place kept by an enqueue, or by a wait that ended, is given up by cancel, or at the lease's end.
 */
final class LockApi {
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static final String WRITE = "write";
    private static final String READ = "read";

    private final Member member;
    private final LeaseRecipe leases;

    LockApi(Member member, LeaseRecipe leases) {
        this.member = member;
        this.leases = leases;
    }

    CompletableFuture<Answer> acquire(Principal caller, String lock, JsonBody body, String requestId) {
        LeaseRecipe.Ask ask = LeaseRecipe.Ask.of(body);
        boolean shared = body.optionalChoice("mode", WRITE, READ, WRITE).equals(READ);
        String text = body.optionalString("metadata");
        byte[] metadata = text == null ? new byte[0] : text.getBytes(StandardCharsets.UTF_8);
        NamePath.LOCKS.check(lock);
        String problem = Limits.checkMetadata("metadata", metadata);
        if (problem != null) {
            throw Failure.invalid("metadata", problem);
        }
        boolean enqueue = enqueue(body, ask);
        return member.locks().read(caller, lock).thenCompose(read -> {
            LockView current = first(read);
            LockView.Holder mine = holderOf(current, ask.owner());
            if (mine != null) {
                return CompletableFuture.completedFuture(again(lock, ask.owner(), mine, current.shared(), shared));
            }
            LockView.Waiter waiting = enqueue ? waiterOf(current, ask.owner()) : null;
            if (waiting != null) {
                return CompletableFuture.completedFuture(queuedAgain(lock, ask.owner(), current, waiting, shared));
            }
            // Enqueued as request id the lease's own (a fresh lease makes one acquire): the wait
            // that completes it repeats that request, so a place given up in between is not taken anew.
            LeaseRecipe.Attempt<Locks.Outcome> attempt = enqueue
                    ? new LeaseRecipe.Attempt<>(
                            lease -> member.locks().lock(caller, lock, lease, metadata, 0, lease, true, shared).outcome(),
                            outcome -> true,
                            (lease, outcome) -> outcome.acquired() ? granted(lock, ask.owner(), lease, outcome.fencingToken(), shared)
                                    : queued(lock, ask.owner(), lease, outcome.waiters() + 1, shared),
                            outcome -> null)
                    : new LeaseRecipe.Attempt<>(
                            lease -> member.locks().lock(caller, lock, lease, metadata, ask.waitMs(), 0, false, shared).outcome(),
                            Locks.Outcome::acquired,
                            (lease, outcome) -> granted(lock, ask.owner(), lease, outcome.fencingToken(), shared),
                            outcome -> held(lock, outcome.holder(), null));
            return leases.acquire(caller, ask, requestId, attempt).exceptionally(error -> {
                throw new CompletionException(conflictOf(error));
            });
        });
    }

    /**
     * The body's {@code enqueue} (default false): the first phase of a two-phase acquire, answered
     * at once, so a {@code wait_ms} with it is refused.
     */
    static boolean enqueue(JsonBody body, LeaseRecipe.Ask ask) {
        boolean enqueue = body.optionalBoolean("enqueue", false);
        if (enqueue && ask.waitMs() != 0) {
            throw Failure.invalid("wait_ms", "an acquire with enqueue is answered at once, so it takes no wait_ms (got " + ask.waitMs()
                    + "); wait for the grant with POST .../wait and the lease_id it answers");
        }
        return enqueue;
    }

    /** The waiter of {@code view} (in queue order) whose lease is {@code owner}'s, or null. */
    private static LockView.Waiter waiterOf(LockView view, String owner) {
        if (view == null) {
            return null;
        }
        return view.waiters().stream().filter(w -> w.clientId().equals(owner)).findFirst().orElse(null);
    }

    /** The lease's place in {@code view}'s queue, from 1; 0 when it does not wait. */
    private static int positionOf(LockView view, long leaseId) {
        if (view != null) {
            for (int i = 0; i < view.waiters().size(); i++) {
                if (view.waiters().get(i).leaseId() == leaseId) {
                    return i + 1;
                }
            }
        }
        return 0;
    }

    /** A retried enqueue of an owner whose lease already waits: its place answered again, in the mode asked. */
    private Answer queuedAgain(String lock, String owner, LockView current, LockView.Waiter waiting, boolean shared) {
        if (waiting.shared() != shared) {
            throw new Failure(ErrorCode.CONFLICT, "mode", "owner '" + owner + "' already waits for lock '" + lock + "' in "
                    + modeName(waiting.shared()) + " mode (lease " + waiting.leaseId() + "), not " + modeName(shared)
                    + " mode: one wait per owner");
        }
        return queued(lock, owner, waiting.leaseId(), positionOf(current, waiting.leaseId()), shared);
    }

    /** The 202 answer of an enqueue that was not granted at once: the lease keeps its place, {@code position} from 1. */
    private Answer queued(String lock, String owner, long leaseId, int position, boolean shared) {
        ObjectNode body = NODES.objectNode();
        body.put("lock", lock);
        body.put("owner_id", owner);
        body.put("lease_id", leaseId);
        body.put("queued", true);
        body.put("position", position);
        body.put("mode", modeName(shared));
        return new Answer(202, leases.expiryOf(body, leaseId));
    }

    /**
     * The second phase of a two-phase acquire: the grant of the place's lease, waiting up to
     * {@code wait_ms} for it ({@link LeaseRecipe#await}); in the mode the lease waits in.
     */
    CompletableFuture<Answer> await(Principal caller, String lock, JsonBody body, String requestId) {
        LeaseRecipe.Place place = LeaseRecipe.Place.of(body);
        NamePath.LOCKS.check(lock);
        String what = "lock '" + lock + "'";
        AtomicBoolean shared = new AtomicBoolean();
        return leases.await(caller, place, what, requestId, new LeaseRecipe.SecondPhase<Locks.Outcome>(
                () -> {
                    LockView view = member.locks().describe(lock);
                    LockView.Holder held = view == null ? null
                            : view.holders().stream().filter(h -> h.leaseId() == place.leaseId()).findFirst().orElse(null);
                    if (held != null) {
                        return () -> granted(lock, place.owner(), place.leaseId(), held.fencingToken(), view.shared());
                    }
                    LockView.Waiter waiting = view == null ? null
                            : view.waiters().stream().filter(w -> w.leaseId() == place.leaseId()).findFirst().orElse(null);
                    if (waiting == null) {
                        throw notQueued(what, place.leaseId());
                    }
                    shared.set(waiting.shared());
                    return null;
                },
                () -> member.locks().lock(caller, lock, place.leaseId(), new byte[0], -1, place.leaseId(), false, shared.get()),
                outcome -> granted(lock, place.owner(), place.leaseId(), outcome.fencingToken(), shared.get()),
                () -> held(lock, "", place),
                () -> notQueued(what, place.leaseId())));
    }

    /**
     * Withdraws the lease's place in the lock's queue, in the mode it waits in
     * ({@link LeaseRecipe#withdraw}): 200 with {@code acquired} false and the waiters now (those
     * the withdrawn place held back may have been granted), or,
     * when the grant came first, the grant's answer with {@code acquired} true (the lease holds the
     * lock: renew or release it). A lease that neither waits nor holds is answered as one whose
     * place was just withdrawn, so a retry answers the same.
     */
    CompletableFuture<Answer> cancel(Principal caller, String lock, JsonBody body, String requestId) {
        LeaseRecipe.Waiting waiting = LeaseRecipe.Waiting.of(body);
        NamePath.LOCKS.check(lock);
        // The enqueue's request id is its lease's own (see acquire): a copy of it applied later does not queue again.
        return leases.withdraw(waiting, "lock '" + lock + "'", requestId,
                () -> member.locks().cancel(caller, lock, waiting.leaseId(), waiting.leaseId())).thenApply(outcome -> {
                    if (outcome.acquired()) {
                        LockView view = member.locks().describe(lock);
                        Answer grant = granted(lock, waiting.owner(), waiting.leaseId(), outcome.fencingToken(), view != null && view.shared());
                        grant.body().put("acquired", true);
                        return grant;
                    }
                    ObjectNode withdrawn = waiting.answer("lock", lock);
                    withdrawn.put("acquired", false);
                    LockView now = member.locks().describe(lock);
                    withdrawn.put("waiters", now == null ? 0 : now.waiters().size());
                    return Answer.ok(withdrawn);
                });
    }

    /** The 409 {@code not_queued} answer of a wait by a lease that neither waits for nor holds {@code what}. */
    static Failure notQueued(String what, long leaseId) {
        return new Failure(ErrorCode.NOT_QUEUED, "lease_id", "lease " + leaseId + " neither waits for nor holds " + what
                + " (it never enqueued there, or its place was withdrawn or its grant released); acquire with enqueue again");
    }

    /** The holder of {@code view} (in grant order) whose lease is {@code owner}'s, or null. */
    private static LockView.Holder holderOf(LockView view, String owner) {
        if (view == null) {
            return null;
        }
        return view.holders().stream().filter(h -> h.clientId().equals(owner)).findFirst().orElse(null);
    }

    /**
     * The owner's grant answered again when it holds the lock in the mode asked; in the other mode,
     * 409 {@code conflict} naming {@code mode}, for the core's reasons: a reader is never upgraded,
     * and a writer that wants to read downgrades.
     */
    private Answer again(String lock, String owner, LockView.Holder mine, boolean heldShared, boolean shared) {
        if (heldShared != shared) {
            throw new Failure(ErrorCode.CONFLICT, "mode", "owner '" + owner + "' holds lock '" + lock + "' in " + modeName(heldShared)
                    + " mode (lease " + mine.leaseId() + ", fencing token " + mine.fencingToken() + "), not " + modeName(shared) + " mode: "
                    + (heldShared ? "a reader cannot upgrade to write mode (two readers upgrading would wait for each other forever);"
                            + " release it, then acquire it in write mode"
                            : "downgrade it to read mode instead (POST /v1/locks/{lock}/downgrade)"));
        }
        return granted(lock, owner, mine.leaseId(), mine.fencingToken(), shared);
    }

    /**
     * An acquire's FAILED_PRECONDITION is not a stale release: the name is another kind's while it
     * is held or waited for (a semaphore), which is a 409 {@code conflict} naming the lock.
     */
    private static Failure conflictOf(Throwable error) {
        Failure f = Failures.of(error);
        return f.code == ErrorCode.STALE ? new Failure(ErrorCode.CONFLICT, "lock", f.getMessage()) : f;
    }

    /**
     * The 409 {@code held} answer, naming the first holder, with a hint computed from the remaining
     * TTL of the holder whose lease runs longest (the lock is free of its holders once the last
     * of them lets go) and the queue.
     */
    private Failure held(String lock, String holderWhenRefused, LeaseRecipe.Place queued) {
        LockView now = first(member.locks().current(lock));
        String holder = now == null ? holderWhenRefused : now.holder();
        int waiters = now == null ? 0 : now.waiters().size();
        List<Long> last = now == null ? List.of() : List.of(now.holders().stream().map(LockView.Holder::leaseId)
                .max(Comparator.comparingLong(member.leases()::remainingMillis)).orElseThrow());
        long hint = leases.retryHint(last, waiters);
        int others = now == null ? 0 : now.holders().size() - 1;
        Map<String, Object> extra = new LinkedHashMap<>();
        extra.put("lock", lock);
        extra.put("holder", holder);
        if (now != null) {
            extra.put("mode", modeName(now.shared()));
        }
        extra.put("waiters", waiters);
        extra.put("recommended_retry_ms", hint);
        String advice = "; retry in about " + hint + " ms, or acquire with wait_ms to queue for it";
        if (queued != null) {
            int position = positionOf(now, queued.leaseId());
            extra.put("lease_id", queued.leaseId());
            extra.put("position", position);
            advice = "; lease " + queued.leaseId() + " keeps its place" + (position > 0 ? " (position " + position + ")" : "")
                    + ": wait again, at least once per TTL to keep the lease alive";
        }
        return new Failure(ErrorCode.HELD, null, "lock '" + lock + "' is held by '" + holder + "'"
                + (now != null && now.shared() ? (others > 0 ? " and " + others + " other reader(s)" : "") + " in read mode" : "")
                + (waiters > 0 ? " with " + waiters + " waiting" : "") + advice, extra);
    }

    CompletableFuture<Answer> renew(Principal caller, String lock, JsonBody body, String requestId) {
        LeaseRecipe.Claim claim = LeaseRecipe.Claim.of(body);
        NamePath.LOCKS.check(lock);
        return leases.renew(caller, claim, "lock '" + lock + "'", requestId, () -> sharedHold(lock, claim),
                shared -> granted(lock, claim.owner(), claim.leaseId(), claim.token(), shared));
    }

    CompletableFuture<Answer> release(Principal caller, String lock, JsonBody body, String requestId) {
        LeaseRecipe.Claim claim = LeaseRecipe.Claim.of(body);
        NamePath.LOCKS.check(lock);
        return leases.release(caller, claim, "lock '" + lock + "'", requestId,
                () -> member.locks().unlock(caller, lock, claim.leaseId(), claim.token()),
                next -> {
                    ObjectNode released = NODES.objectNode();
                    released.put("lock", lock);
                    released.put("released", true);
                    released.put("next_fencing_token", next);
                    return Answer.ok(released);
                });
    }

    /**
     * Downgrades the claim's write-mode hold to read mode, keeping its token; the claim's owner,
     * lease and token are checked as a release checks them, and refused in the same answers.
     */
    CompletableFuture<Answer> downgrade(Principal caller, String lock, JsonBody body, String requestId) {
        LeaseRecipe.Claim claim = LeaseRecipe.Claim.of(body);
        NamePath.LOCKS.check(lock);
        return leases.asOwner(claim, "lock '" + lock + "'", "downgrade", requestId,
                () -> member.locks().downgrade(caller, lock, claim.leaseId(), claim.token())).thenApply(done -> {
                    ObjectNode downgraded = NODES.objectNode();
                    downgraded.put("lock", done.key());
                    downgraded.put("fencing_token", done.fencingToken());
                    downgraded.put("readers_granted", done.readersGranted());
                    downgraded.put("mode", READ);
                    return Answer.ok(downgraded);
                });
    }

    /**
     * Whether the claim's lease holds the lock in read mode, after checking that it holds it with
     * the claim's token: the core's check, the one a release makes.
     */
    private boolean sharedHold(String lock, LeaseRecipe.Claim claim) {
        LockTable.NotHeld notHeld = member.locks().notHeld(lock, claim.leaseId(), claim.token());
        LockView view = member.locks().describe(lock);
        if (notHeld == null && (view == null || view.holders().stream().noneMatch(h -> h.leaseId() == claim.leaseId()))) {
            // Let go between the two reads: the check, made again, says why (a grant let go never comes back).
            notHeld = member.locks().notHeld(lock, claim.leaseId(), claim.token());
        }
        if (notHeld != null) {
            throw new Failure(ErrorCode.NOT_HOLDER, notHeld.field(), notHeld.message());
        }
        return view.shared();
    }

    /** The lock's mode, first holder, lease, token, metadata, expiry, holders and waiters; 404 {@code not_found} when it is free. */
    CompletableFuture<Answer> describe(Principal caller, String lock) {
        NamePath.LOCKS.check(lock);
        return member.locks().read(caller, lock).thenApply(read -> {
            LockView view = first(read);
            if (view == null) {
                throw new Failure(ErrorCode.NOT_FOUND, null, "lock '" + lock + "' is free (no holder, no waiter)");
            }
            return Answer.ok(lockJson(view).put("revision", read.revision()));
        });
    }

    /** A list route's {@code limit} query parameter: 1 to {@value Limits#MAX_LIST}, {@value Limits#DEFAULT_LIST} when absent. */
    static int listLimit(String limitText) {
        if (limitText == null) {
            return Limits.DEFAULT_LIST;
        }
        int limit;
        try {
            limit = Integer.parseInt(limitText);
        } catch (NumberFormatException e) {
            limit = -1;
        }
        if (limit < 1 || limit > Limits.MAX_LIST) {
            throw Failure.invalid("limit", "limit must be an integer between 1 and " + Limits.MAX_LIST + " (default "
                    + Limits.DEFAULT_LIST + "), got '" + limitText + "'");
        }
        return limit;
    }

    CompletableFuture<Answer> list(Principal caller, String prefix, String limitText) {
        int limit = listLimit(limitText);
        int max = limit;
        String from = prefix == null ? "" : prefix;
        return member.locks().list(caller, from, max).thenApply(read -> {
            ObjectNode body = NODES.objectNode();
            ArrayNode locks = body.putArray("locks");
            read.locks().forEach(view -> locks.add(lockJson(view)));
            body.put("more", read.more());
            body.put("revision", read.revision());
            return Answer.ok(body);
        });
    }

    CompletableFuture<Answer> lease(Principal caller, String idText) {
        long id;
        try {
            id = Long.parseLong(idText);
        } catch (NumberFormatException e) {
            id = -1;
        }
        if (id <= 0) {
            throw Failure.invalid("lease_id", "the lease id in the path must be a positive integer, got '" + idText + "'");
        }
        long leaseId = id;
        return member.leases().lookup(caller, leaseId).thenApply(ttl -> {
            if (ttl == null) {
                throw new Failure(ErrorCode.LEASE_NOT_FOUND, "lease_id", "lease " + leaseId
                        + " not found: never granted, expired or revoked");
            }
            LeaseView lease = ttl.lease();
            ObjectNode body = NODES.objectNode();
            body.put("lease_id", lease.leaseId());
            body.put("owner_id", lease.clientId());
            body.put("ttl_ms", lease.ttlMillis());
            LeaseRecipe.expiry(body, ttl.remainingMillis());
            lease.held().forEach(body.putArray("held")::add);
            lease.waiting().forEach(body.putArray("waiting")::add);
            return Answer.ok(body);
        });
    }

    /**
     * The member's view of the cluster, after a linearizable read barrier so its revision covers
     * every acknowledged write. With no leader reachable it still answers, with {@code leader}
     * null: this is how an operator finds out what is wrong.
     */
    CompletableFuture<Answer> status() {
        return member.readBarrier().handle((ignored, error) -> {
            StatusResponse status = member.status(ResponseHeader.getDefaultInstance());
            ObjectNode body = NODES.objectNode();
            body.put("cluster_id", status.getClusterId());
            body.put("member_id", status.getMemberId());
            body.put("member_name", status.getMemberName());
            boolean known = error == null && !status.getLeader().isEmpty();
            body.put("leader", known ? status.getLeader() : null);
            body.put("leader_endpoint", known ? status.getLeaderEndpoint() : null);
            body.put("term", status.getRaftTerm());
            body.put("revision", status.getRevision());
            body.put("applied_index", status.getAppliedIndex());
            body.put("commit_index", status.getCommitIndex());
            body.put("version", status.getVersion());
            body.put("raft_engine", status.getRaftEngine());
            ArrayNode members = body.putArray("members");
            for (io.tenure.proto.v1.Member m : status.getMembersList()) {
                members.addObject()
                        .put("name", m.getName())
                        .put("id", m.getId())
                        .put("peer_address", m.getPeerAddress())
                        .put("client_endpoint", m.getClientEndpoint())
                        .put("leader", known && m.getLeader());
            }
            return Answer.ok(body);
        });
    }

    private Answer granted(String lock, String owner, long leaseId, long token, boolean shared) {
        ObjectNode body = LeaseRecipe.grant("lock", lock, owner, leaseId, token);
        body.put("mode", modeName(shared));
        return Answer.ok(leases.expiryOf(body, leaseId));
    }

    private static String modeName(boolean shared) {
        return shared ? READ : WRITE;
    }

    /**
     * A held lock: its mode; the first holder in grant order (the only one in write mode) in the
     * fields it always had; every holder; the waiters, each with the mode it waits for.
     */
    private ObjectNode lockJson(LockView view) {
        ObjectNode lock = NODES.objectNode();
        lock.put("lock", view.key());
        lock.put("mode", modeName(view.shared()));
        lock.put("owner_id", view.holder());
        lock.put("lease_id", view.leaseId());
        lock.put("fencing_token", view.fencingToken());
        lock.put("metadata", new String(view.metadata(), StandardCharsets.UTF_8));
        lock.put("create_revision", view.createRevision());
        lock.put("version", view.version());
        leases.expiryOf(lock, view.leaseId());
        ArrayNode holders = lock.putArray("holders");
        for (LockView.Holder h : view.holders()) {
            holders.addObject().put("lease_id", h.leaseId()).put("owner_id", h.clientId()).put("fencing_token", h.fencingToken())
                    .put("metadata", new String(h.metadata(), StandardCharsets.UTF_8))
                    .put("ttl_remaining_ms", member.leases().remainingMillis(h.leaseId()));
        }
        ArrayNode waiters = lock.putArray("waiters");
        for (LockView.Waiter w : view.waiters()) {
            waiters.addObject().put("lease_id", w.leaseId()).put("owner_id", w.clientId()).put("joined_revision", w.joinedAt())
                    .put("mode", modeName(w.shared()));
        }
        return lock;
    }

    private static LockView first(Locks.Snapshot read) {
        return read.locks().isEmpty() ? null : read.locks().get(0);
    }
}
