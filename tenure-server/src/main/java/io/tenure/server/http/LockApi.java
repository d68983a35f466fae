package io.tenure.server.http;

import io.tenure.server.Causes;
import io.tenure.server.RequestIds;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tenure.core.kernel.LeaseView;
import io.tenure.core.Limits;
import io.tenure.core.lock.LockView;
import io.tenure.proto.v1.ResponseHeader;
import io.tenure.proto.v1.StatusResponse;
import io.tenure.server.Member;
import io.tenure.server.lock.Locks;
import io.tenure.core.lock.LockTable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The {@code /v1} endpoints: seed 002's lock API (acquire, renew, release with owner, lease and
 * fencing token) mapped onto the member's lock and lease services, the same ones the gRPC front
 * end calls. It decides nothing the services decide; what it adds is the HTTP recipe around them:
 *
 * <ul>
 *   <li><b>acquire</b> grants a lease whose client id is the {@code owner_id} and acquires the
 *       lock with it, waiting up to {@code wait_ms} in the FIFO queue (0 = try once). The lease is
 *       renewed while the call waits (an HTTP caller cannot renew a lease it has not been told
 *       of), and once more at a grant that came after the wait used up over 5% of the TTL. A lock still held when the wait ends gets 409 {@code held} with a retry hint
 *       ({@link RetryHint}), and the lease is revoked, so a refused acquire leaves nothing
 *       behind. <b>Idempotent:</b> when the lock is already held by a lease of this
 *       {@code owner_id} (a retried acquire whose answer was lost), that grant is answered again
 *       rather than queueing the owner behind itself. An owner id therefore names one client.</li>
 *   <li><b>renew</b> checks, after a linearizable read, that the lease of this owner holds the
 *       lock with this token, then renews the lease through the log.</li>
 *   <li><b>release</b> checks the owner, releases with (lease, token) through the log, and then
 *       revokes the lease when it holds and waits for nothing else (it was made by acquire).
 *       A retried release of a grant already released succeeds again: the replicated state
 *       remembers the last 16,384 releases by (lock, lease, token), even after the lease is gone.</li>
 * </ul>
 *
 * <p>A caller that goes away during a wait is not noticed until the wait ends; a grant that comes
 * after that holds the lock until its lease expires, one TTL after the wait's last renewal.
 */
final class LockApi {
    private static final Logger LOG = LoggerFactory.getLogger(LockApi.class);
    /**
     * The longest {@code wait_ms}: HTTP clients and proxies commonly cut a silent request after
     * a minute. Longer waits are retries (with the hint) or gRPC's {@code Lock}.
     */
    static final long MAX_WAIT_MS = 60_000;
    /** How long past {@code wait_ms} an acquire may take to settle (withdraw, revoke) before it answers 503. */
    static final long WAIT_SLACK_MS = 30_000;

    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private final Member member;
    private final ScheduledExecutorService timer;

    LockApi(Member member, ScheduledExecutorService timer) {
        this.member = member;
        this.timer = timer;
    }

    /** What renew and release are told: who claims to hold the lock, with which lease and token. */
    private record Claim(String owner, long leaseId, long token) {
        static Claim of(JsonBody body) {
            String owner = LockApi.owner(body);
            long lease = body.requiredLong("lease_id");
            if (lease <= 0) {
                throw Failure.invalid("lease_id", "lease_id must be positive, got " + lease);
            }
            long token = body.requiredLong("fencing_token");
            if (token <= 0) {
                throw Failure.invalid("fencing_token", "fencing_token must be positive, got " + token);
            }
            return new Claim(owner, lease, token);
        }
    }

    CompletableFuture<Answer> acquire(String lock, JsonBody body, String requestId) {
        String owner = owner(body);
        long ttl = body.requiredLong("ttl_ms");
        if (ttl <= 0) {
            throw Failure.invalid("ttl_ms", "ttl_ms must be positive, got " + ttl);
        }
        long waitMs = body.optionalLong("wait_ms", 0);
        if (waitMs < 0 || waitMs > MAX_WAIT_MS) {
            throw Failure.invalid("wait_ms", "wait_ms must be between 0 (try once) and " + MAX_WAIT_MS + ", got " + waitMs);
        }
        String text = body.optionalString("metadata");
        byte[] metadata = text == null ? new byte[0] : text.getBytes(StandardCharsets.UTF_8);
        checkLock(lock);
        String problem = Limits.checkMetadata("metadata", metadata);
        if (problem != null) {
            throw Failure.invalid("metadata", problem);
        }
        return member.locks().read(lock).thenCompose(read -> {
            LockView current = first(read);
            if (current != null && owner.equals(current.holder())) {
                return CompletableFuture.completedFuture(granted(lock, owner, current.leaseId(), current.fencingToken()));
            }
            return grantAndLock(lock, owner, ttl, waitMs, metadata, requestId);
        });
    }

    private CompletableFuture<Answer> grantAndLock(String lock, String owner, long ttl, long waitMs, byte[] metadata,
                                                   String requestId) {
        return RequestIds.traced(requestId, () -> member.leases().grant(0, ttl, owner)).thenCompose(granted -> {
            long lease = granted.leaseId();
            Locks.Wait wait = RequestIds.traced(requestId, () -> member.locks().lock(lock, lease, metadata, waitMs));
            if (waitMs > 0) {
                long period = Math.max(100, granted.ttlMillis() / 3);
                ScheduledFuture<?> renewing = timer.scheduleAtFixedRate(
                        () -> RequestIds.traced(requestId, () -> member.leases().keepAlive(lease)), period, period, TimeUnit.MILLISECONDS);
                wait.outcome().whenComplete((outcome, error) -> renewing.cancel(false));
            }
            return wait.outcome().orTimeout(waitMs + WAIT_SLACK_MS, TimeUnit.MILLISECONDS).handle((outcome, error) -> {
                if (error != null) {
                    revokeQuietly(lease, requestId);
                    return CompletableFuture.<Answer>failedFuture(error);
                }
                if (outcome.acquired()) {
                    if (member.leases().remainingMillis(lease) >= granted.ttlMillis() * 19 / 20) {
                        return CompletableFuture.completedFuture(granted(lock, owner, lease, outcome.fencingToken()));
                    }
                    // Granted after a wait that used up over 5% of the TTL: renewed once more, so the
                    // caller starts with (nearly) its whole TTL rather than what the wait left.
                    return RequestIds.traced(requestId, () -> member.leases().keepAlive(lease))
                            .handle((ttlMs, renewError) -> granted(lock, owner, lease, outcome.fencingToken()));
                }
                // Revoked before answering, so a caller that retries at once never meets its own lease.
                return revokeQuietly(lease, requestId).<Answer>thenApply(revoked -> {
                    throw held(lock, outcome.holder());
                });
            }).thenCompose(answer -> answer);
        });
    }

    /** The 409 {@code held} answer, with a hint computed from the holder's remaining TTL and the queue. */
    private Failure held(String lock, String holderWhenRefused) {
        LockView now = first(member.locks().current(lock));
        String holder = now == null ? holderWhenRefused : now.holder();
        int waiters = now == null ? 0 : now.waiters().size();
        long hint = RetryHint.MIN_MS;
        if (now != null) {
            LeaseView holderLease = member.leases().view(now.leaseId());
            long hold = holderLease == null ? 0 : holderLease.ttlMillis();
            long remaining = member.leases().remainingMillis(now.leaseId());
            hint = RetryHint.recommend(remaining < 0 ? hold : remaining, waiters, hold);
        }
        Map<String, Object> extra = new LinkedHashMap<>();
        extra.put("lock", lock);
        extra.put("holder", holder);
        extra.put("waiters", waiters);
        extra.put("recommended_retry_ms", hint);
        return new Failure(ErrorCode.HELD, null, "lock '" + lock + "' is held by '" + holder + "'"
                + (waiters > 0 ? " with " + waiters + " waiting" : "") + "; retry in about " + hint
                + " ms, or acquire with wait_ms to queue for it", extra);
    }

    CompletableFuture<Answer> renew(String lock, JsonBody body, String requestId) {
        Claim claim = Claim.of(body);
        checkLock(lock);
        return member.readBarrier().thenCompose(ignored -> {
            LeaseView lease = member.leases().view(claim.leaseId());
            if (lease == null) {
                throw new Failure(ErrorCode.EXPIRED, "lease_id", "lease " + claim.leaseId()
                        + " has ended (expired or revoked): lock '" + lock + "' is no longer yours; acquire it again");
            }
            checkHolds(lock, claim, lease);
            return RequestIds.traced(requestId, () -> member.leases().keepAlive(claim.leaseId())).thenApply(ttl -> {
                if (ttl == 0) {
                    throw new Failure(ErrorCode.EXPIRED, "lease_id", "lease " + claim.leaseId() + " ended before it was renewed");
                }
                return granted(lock, claim.owner(), claim.leaseId(), claim.token());
            });
        });
    }

    CompletableFuture<Answer> release(String lock, JsonBody body, String requestId) {
        Claim claim = Claim.of(body);
        checkLock(lock);
        return member.readBarrier().thenCompose(ignored -> {
            LeaseView lease = member.leases().view(claim.leaseId());
            if (lease != null && !claim.owner().equals(lease.clientId())) {
                throw new Failure(ErrorCode.STALE, "owner_id", "lease " + claim.leaseId() + " is not owner '"
                        + claim.owner() + "''s; nothing was released");
            }
            // The lease may be gone: a retried release then still succeeds from the state's memory of it.
            return RequestIds.traced(requestId, () -> member.locks().unlock(lock, claim.leaseId(), claim.token()))
                    .handle((next, error) -> {
                        if (error != null) {
                            Failure f = Failures.of(error);
                            if (f.code == ErrorCode.LEASE_NOT_FOUND) {
                                throw new Failure(ErrorCode.STALE, "lease_id", "lease " + claim.leaseId()
                                        + " has ended (expired or revoked), so lock '" + lock + "' is no longer its to release");
                            }
                            throw f;
                        }
                        return next;
                    })
                    .thenCompose(next -> revokeIfIdle(claim.leaseId(), requestId).thenApply(revoked -> {
                        ObjectNode released = NODES.objectNode();
                        released.put("lock", lock);
                        released.put("released", true);
                        released.put("next_fencing_token", next);
                        return Answer.ok(released);
                    }));
        });
    }

    /**
     * Checks that the claim's lease is the claim's owner's (the HTTP recipe's own rule: an owner
     * id names one client) and holds the lock with the claim's token (the core's check, the one a
     * release makes).
     */
    private void checkHolds(String lock, Claim claim, LeaseView lease) {
        if (!claim.owner().equals(lease.clientId())) {
            throw new Failure(ErrorCode.NOT_HOLDER, "owner_id", "lease " + claim.leaseId() + " is not owner '" + claim.owner() + "''s");
        }
        LockTable.NotHeld notHeld = member.locks().notHeld(lock, claim.leaseId(), claim.token());
        if (notHeld != null) {
            throw new Failure(ErrorCode.NOT_HOLDER, notHeld.field(), notHeld.message());
        }
    }

    /** The lock's holder, lease, token, metadata, expiry and waiters; 404 {@code not_found} when it is free. */
    CompletableFuture<Answer> describe(String lock) {
        checkLock(lock);
        return member.locks().read(lock).thenApply(read -> {
            LockView view = first(read);
            if (view == null) {
                throw new Failure(ErrorCode.NOT_FOUND, null, "lock '" + lock + "' is free (no holder, no waiter)");
            }
            return Answer.ok(lockJson(view).put("revision", read.revision()));
        });
    }

    CompletableFuture<Answer> list(String prefix, String limitText) {
        int limit = Limits.DEFAULT_LIST;
        if (limitText != null) {
            try {
                limit = Integer.parseInt(limitText);
            } catch (NumberFormatException e) {
                limit = -1;
            }
            if (limit < 1 || limit > Limits.MAX_LIST) {
                throw Failure.invalid("limit", "limit must be an integer between 1 and " + Limits.MAX_LIST + " (default "
                        + Limits.DEFAULT_LIST + "), got '" + limitText + "'");
            }
        }
        int max = limit;
        String from = prefix == null ? "" : prefix;
        return member.locks().list(from, max).thenApply(read -> {
            ObjectNode body = NODES.objectNode();
            ArrayNode locks = body.putArray("locks");
            read.locks().forEach(view -> locks.add(lockJson(view)));
            body.put("more", read.more());
            body.put("revision", read.revision());
            return Answer.ok(body);
        });
    }

    CompletableFuture<Answer> lease(String idText) {
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
        return member.leases().lookup(leaseId).thenApply(ttl -> {
            if (ttl == null) {
                throw new Failure(ErrorCode.LEASE_NOT_FOUND, "lease_id", "lease " + leaseId
                        + " not found: never granted, expired or revoked");
            }
            LeaseView lease = ttl.lease();
            ObjectNode body = NODES.objectNode();
            body.put("lease_id", lease.leaseId());
            body.put("owner_id", lease.clientId());
            body.put("ttl_ms", lease.ttlMillis());
            expiry(body, ttl.remainingMillis());
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

    private Answer granted(String lock, String owner, long leaseId, long token) {
        ObjectNode body = NODES.objectNode();
        body.put("lock", lock);
        body.put("owner_id", owner);
        body.put("lease_id", leaseId);
        body.put("fencing_token", token);
        expiry(body, member.leases().remainingMillis(leaseId));
        return Answer.ok(body);
    }

    private ObjectNode lockJson(LockView view) {
        ObjectNode lock = NODES.objectNode();
        lock.put("lock", view.key());
        lock.put("owner_id", view.holder());
        lock.put("lease_id", view.leaseId());
        lock.put("fencing_token", view.fencingToken());
        lock.put("metadata", new String(view.metadata(), StandardCharsets.UTF_8));
        lock.put("create_revision", view.createRevision());
        lock.put("version", view.version());
        expiry(lock, member.leases().remainingMillis(view.leaseId()));
        ArrayNode waiters = lock.putArray("waiters");
        for (LockView.Waiter w : view.waiters()) {
            waiters.addObject().put("lease_id", w.leaseId()).put("owner_id", w.clientId()).put("joined_revision", w.joinedAt());
        }
        return lock;
    }

    /**
     * {@code ttl_remaining_ms} (authoritative, on this member's monotonic clock) and
     * {@code expires_at_ms} (this member's wall clock plus that, for display only); -1 and null
     * when this member has no deadline for the lease yet (it just restarted or caught up).
     */
    private static void expiry(ObjectNode body, long remainingMillis) {
        body.put("ttl_remaining_ms", remainingMillis);
        body.put("expires_at_ms", remainingMillis < 0 ? null : System.currentTimeMillis() + remainingMillis);
    }


    /** Revokes a lease this front end made when it holds and waits for nothing any more. */
    private CompletableFuture<Void> revokeIfIdle(long leaseId, String requestId) {
        LeaseView lease = member.leases().view(leaseId);
        if (lease == null || !lease.held().isEmpty() || !lease.waiting().isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        return revokeQuietly(leaseId, requestId);
    }

    /**
     * Revokes a lease, logging instead of failing: the answer does not depend on it, and a lease
     * that could not be revoked ends by itself one TTL later.
     */
    private CompletableFuture<Void> revokeQuietly(long leaseId, String requestId) {
        return RequestIds.traced(requestId, () -> member.leases().revoke(leaseId)).handle((ignored, error) -> {
            if (error != null && Failures.of(error).code != ErrorCode.LEASE_NOT_FOUND) {
                LOG.warn("event=http_lease_revoke_failed lease={} request_id={} reason=\"{}\"", leaseId, requestId,
                        Causes.unwrap(error).getMessage());
            }
            return null;
        });
    }

    private static String owner(JsonBody body) {
        String owner = body.requiredString("owner_id");
        if (owner.isEmpty()) {
            throw Failure.invalid("owner_id", "owner_id must not be empty");
        }
        String problem = Limits.checkClientId("owner_id", owner);
        if (problem != null) {
            throw Failure.invalid("owner_id", problem);
        }
        return owner;
    }

    private static void checkLock(String lock) {
        String problem = Limits.checkKey("lock", lock);
        if (problem != null) {
            throw Failure.invalid("lock", "the lock name " + problem.substring("lock ".length()));
        }
    }

    private static LockView first(Locks.Snapshot read) {
        return read.locks().isEmpty() ? null : read.locks().get(0);
    }
}
