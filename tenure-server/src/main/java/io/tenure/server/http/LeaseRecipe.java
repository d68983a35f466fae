package io.tenure.server.http;

import io.tenure.server.Acquires;
import io.tenure.server.Causes;
import io.tenure.server.RequestIds;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tenure.core.Limits;
import io.tenure.core.kernel.LeaseView;
import io.tenure.server.Member;
import io.tenure.server.security.Principal;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Collection;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.LongFunction;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * The lease half of the HTTP recipe, the same for every grant the {@code /v1} routes hand out
 * (locks, semaphores, leadership of an election). An HTTP caller has no session and cannot keep alive a lease it has not
 * been told of, so:
 *
 * <ul>
 *   <li>each acquire grants a fresh lease whose client id is the {@code owner_id}, renews it while
 *       the call waits (every TTL/3), and renews it once more at a grant that came after the wait
 *       used up over 5% of the TTL, so the caller starts with (nearly) its whole TTL. When nothing
 *       is acquired the lease is revoked before the answer, so a refused acquire leaves nothing
 *       behind and a caller that retries at once never meets its own lease;</li>
 *   <li>renew checks, after a linearizable read, that the lease is the owner's and holds the
 *       grant with the token (the primitive's own check), then renews the lease through the log;</li>
 *   <li>release checks the owner, releases through the log, and then revokes the lease when it
 *       holds and waits for nothing else (it was made by acquire);</li>
 *   <li>an acquire with {@code enqueue} keeps the lease it queued with, and each wait of the
 *       second phase ({@link #await}) renews it at once and every TTL/3 while it waits: nothing
 *       else renews a queued lease, so its owner waits at least once per TTL or loses the place;</li>
 *   <li>a withdrawal ({@link #withdraw}: a cancel, a barrier's leave) checks the lease is the
 *       owner's and gives up its wait through the log, leaving the lease to its TTL.</li>
 * </ul>
 *
 * <p>An owner id therefore names one client. The routes decide nothing the services decide: this
 * class only sequences the lease and the primitive's calls and turns their outcomes into answers.
 */
final class LeaseRecipe {
    private static final Logger LOG = LoggerFactory.getLogger(LeaseRecipe.class);
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    /**
     * The longest {@code wait_ms}: HTTP clients and proxies commonly cut a silent request after
     * a minute. Longer waits are retries (with the hint) or gRPC's {@code Lock} and {@code Acquire}.
     */
    static final long MAX_WAIT_MS = 60_000;
    /** How long past {@code wait_ms} an acquire may take to settle (withdraw, revoke) before it answers 503. */
    static final long WAIT_SLACK_MS = 30_000;

    private final Member member;
    private final ScheduledExecutorService timer;

    LeaseRecipe(Member member, ScheduledExecutorService timer) {
        this.member = member;
        this.timer = timer;
    }

    /** What every acquire asks besides the grant itself: whose lease, how long it lives, how long to wait. */
    record Ask(String owner, long ttlMs, long waitMs) {
        static Ask of(JsonBody body) {
            String owner = LeaseRecipe.owner(body);
            long ttl = body.requiredPositive("ttl_ms");
            long waitMs = body.optionalLong("wait_ms", 0);
            if (waitMs < 0 || waitMs > MAX_WAIT_MS) {
                throw Failure.invalid("wait_ms", "wait_ms must be between 0 (try once) and " + MAX_WAIT_MS + ", got " + waitMs);
            }
            return new Ask(owner, ttl, waitMs);
        }
    }

    /** What renew and release are told: who claims to hold the grant, with which lease and token. */
    record Claim(String owner, long leaseId, long token) {
        static Claim of(JsonBody body) {
            return new Claim(LeaseRecipe.owner(body), body.requiredPositive("lease_id"), body.requiredPositive("fencing_token"));
        }
    }

    /**
     * One primitive's acquire, as {@link #acquire} runs it with a fresh lease.
     *
     * @param start    asks the primitive for the grant with the lease; the outcome completes once the wait ends
     * @param acquired whether an outcome is a grant
     * @param granted  the 200 answer for a grant, given the lease
     * @param refused  the 409 answer for an outcome that is not a grant, made after the lease was revoked
     */
    record Attempt<O>(LongFunction<CompletableFuture<O>> start, Predicate<O> acquired, BiFunction<Long, O, Answer> granted,
                      Function<O, Failure> refused) {}

    /** Grants a lease for the ask's owner and runs the attempt with it, as the class comment says. */
    <O> CompletableFuture<Answer> acquire(Principal caller, Ask ask, String requestId, Attempt<O> attempt) {
        return RequestIds.traced(requestId, () -> member.leases().grant(caller, 0, ask.ttlMs(), ask.owner())).thenCompose(granted -> {
            long lease = granted.leaseId();
            CompletableFuture<O> outcome = RequestIds.traced(requestId, () -> attempt.start().apply(lease));
            if (ask.waitMs() > 0) {
                long period = Math.max(100, granted.ttlMillis() / 3);
                ScheduledFuture<?> renewing = timer.scheduleAtFixedRate(
                        () -> RequestIds.traced(requestId, () -> member.leases().keepAlive(caller, lease)), period, period, TimeUnit.MILLISECONDS);
                outcome.whenComplete((o, error) -> renewing.cancel(false));
            }
            return outcome.orTimeout(ask.waitMs() + WAIT_SLACK_MS, TimeUnit.MILLISECONDS).handle((o, error) -> {
                if (error != null) {
                    // Revoked before answering here too (a refusal by the primitive, a timeout), as the class comment says.
                    return revokeQuietly(caller, lease, requestId).<Answer>thenApply(revoked -> {
                        throw error instanceof CompletionException c ? c : new CompletionException(error);
                    });
                }
                if (attempt.acquired().test(o)) {
                    if (member.leases().remainingMillis(lease) >= granted.ttlMillis() * 19 / 20) {
                        return CompletableFuture.completedFuture(attempt.granted().apply(lease, o));
                    }
                    // Granted after a wait that used up over 5% of the TTL: renewed once more, so the
                    // caller starts with (nearly) its whole TTL rather than what the wait left.
                    return RequestIds.traced(requestId, () -> member.leases().keepAlive(caller, lease))
                            .handle((ttlMs, renewError) -> attempt.granted().apply(lease, o));
                }
                // Revoked before answering, so a caller that retries at once never meets its own lease.
                return revokeQuietly(caller, lease, requestId).<Answer>thenApply(revoked -> {
                    throw attempt.refused().apply(o);
                });
            }).thenCompose(answer -> answer);
        });
    }

    /** What a two-phase acquire's wait is told: whose lease keeps the place, and how long to wait for its grant. */
    record Place(String owner, long leaseId, long waitMs) {
        static Place of(JsonBody body) {
            String owner = LeaseRecipe.owner(body);
            long lease = body.requiredPositive("lease_id");
            long waitMs = body.optionalLong("wait_ms", 0);
            if (waitMs < 0 || waitMs > MAX_WAIT_MS) {
                throw Failure.invalid("wait_ms", "wait_ms must be between 0 (look once) and " + MAX_WAIT_MS + ", got " + waitMs);
            }
            return new Place(owner, lease, waitMs);
        }
    }

    /**
     * One primitive's second phase of a two-phase acquire, as {@link #await} runs it.
     *
     * @param standing read after a read barrier: null when the lease waits in the queue; the 200
     *                 answer of its grant (made when asked, after the lease's renewal) when it holds
     *                 it already; it throws 409 {@code not_queued} naming {@code lease_id} when the
     *                 lease does neither
     * @param start    waits for the grant until it comes or the lease ends (timeout -1), as the
     *                 enqueue's request id, so that a place given up in between is not taken anew
     * @param granted  the 200 answer of a grant
     * @param notYet   the 409 answer when {@code wait_ms} passes with the place kept
     * @param gone     the 409 {@code not_queued} answer when the place ended otherwise (withdrawn,
     *                 released)
     */
    record SecondPhase<O extends Acquires.Outcome>(Supplier<Supplier<Answer>> standing, Supplier<Acquires.Wait<O>> start,
                                                     Function<O, Answer> granted, Supplier<Failure> notYet, Supplier<Failure> gone) {}

    /**
     * Completes a two-phase acquire: checks after a read barrier that the place's lease is the
     * owner's (404 {@code lease_not_found} when it has ended, 409 {@code not_holder} naming
     * {@code owner_id} for another owner's), renews it, then answers the grant if the lease holds
     * it, or waits for it up to {@code wait_ms}, renewing the lease every TTL/3 as an acquire's
     * wait does. When {@code wait_ms} passes the call is only forgotten, as a gRPC call whose
     * caller went away: nothing goes through the log, and the place stays the lease's until the
     * lease ends (a grant that comes just then is the lease's too, and the next wait answers it).
     */
    <O extends Acquires.Outcome> CompletableFuture<Answer> await(Principal caller, Place place, String what, String requestId, SecondPhase<O> phase) {
        return member.readBarrier().thenCompose(ignored -> {
            LeaseView lease = member.leases().view(place.leaseId());
            if (lease == null) {
                throw new Failure(ErrorCode.LEASE_NOT_FOUND, "lease_id", "lease " + place.leaseId()
                        + " has ended (expired or revoked): its place in the queue of " + what + " is gone; acquire it again");
            }
            if (!place.owner().equals(lease.clientId())) {
                throw new Failure(ErrorCode.NOT_HOLDER, "owner_id", "lease " + place.leaseId() + " is not owner '" + place.owner() + "''s");
            }
            Supplier<Answer> held = phase.standing().get();
            return RequestIds.traced(requestId, () -> member.leases().keepAlive(caller, place.leaseId())).thenCompose(ttl -> {
                if (ttl == 0) {
                    throw new Failure(ErrorCode.LEASE_NOT_FOUND, "lease_id", "lease " + place.leaseId()
                            + " ended before it was renewed: its place in the queue of " + what + " is gone; acquire it again");
                }
                if (held != null) {
                    return CompletableFuture.completedFuture(held.get());
                }
                if (place.waitMs() == 0) {
                    throw phase.notYet().get();
                }
                return waitFor(caller, place, requestId, phase, lease.ttlMillis());
            });
        });
    }

    private <O extends Acquires.Outcome> CompletableFuture<Answer> waitFor(Principal caller, Place place, String requestId, SecondPhase<O> phase, long ttlMs) {
        CompletableFuture<Answer> answer = new CompletableFuture<>();
        Acquires.Wait<O> wait = RequestIds.traced(requestId, phase.start());
        long period = Math.max(100, ttlMs / 3);
        ScheduledFuture<?> renewing = timer.scheduleAtFixedRate(
                () -> RequestIds.traced(requestId, () -> member.leases().keepAlive(caller, place.leaseId())), period, period, TimeUnit.MILLISECONDS);
        ScheduledFuture<?> givingUp = timer.schedule(() -> {
            if (!wait.outcome().isDone()) {
                wait.abandon();
                try {
                    answer.completeExceptionally(phase.notYet().get());
                } catch (RuntimeException e) {
                    answer.completeExceptionally(e);
                }
            }
        }, place.waitMs(), TimeUnit.MILLISECONDS);
        wait.outcome().whenComplete((outcome, error) -> {
            if (error != null) {
                Failure f = Failures.of(error);
                answer.completeExceptionally(f.code == ErrorCode.STALE ? phase.gone().get() : f);
            } else if (!outcome.acquired()) {
                answer.completeExceptionally(phase.gone().get());
            } else if (member.leases().remainingMillis(place.leaseId()) >= ttlMs * 19 / 20) {
                answer.complete(phase.granted().apply(outcome));
            } else {
                // As an acquire's grant after a wait: renewed once more, so the caller starts with (nearly) its whole TTL.
                RequestIds.traced(requestId, () -> member.leases().keepAlive(caller, place.leaseId()))
                        .whenComplete((ttl, renewError) -> answer.complete(phase.granted().apply(outcome)));
            }
        });
        answer.whenComplete((a, error) -> {
            renewing.cancel(false);
            givingUp.cancel(false);
        });
        return answer;
    }

    /** What a withdrawal is told: whose lease gives up its wait. */
    record Waiting(String owner, long leaseId) {
        static Waiting of(JsonBody body) {
            return new Waiting(LeaseRecipe.owner(body), body.requiredPositive("lease_id"));
        }

        /** The start of a withdrawal's answer: {@code {"<kind>": name, "owner_id", "lease_id"}}; the route adds the rest. */
        ObjectNode answer(String kind, String name) {
            ObjectNode answer = JsonNodeFactory.instance.objectNode();
            answer.put(kind, name);
            answer.put("owner_id", owner);
            answer.put("lease_id", leaseId);
            return answer;
        }
    }

    /**
     * Gives up the wait of {@code waiting}'s lease for {@code what} (say "lock 'x'"): after a
     * linearizable read, 404 {@code lease_not_found} naming {@code lease_id} when the lease has
     * ended (its waits ended with it), 409 {@code not_holder} naming {@code owner_id} when it is
     * another owner's; otherwise {@code withdraw}, through the log, whose outcome says whether the
     * grant came first. A call waiting for the lease (an acquire's, a second phase's) is answered
     * by the withdrawal as by its own timeout.
     *
     * <p>The lease is not revoked here: when the grant came first it holds the grant; otherwise it
     * stays until its TTL passes, renewed by nothing, so a retried withdrawal whose answer was lost
     * finds it and is answered the same. An acquire, campaign, await or enter still waiting with
     * it ends unanswered and revokes the lease itself, as when its {@code wait_ms} passes (a retry
     * after that is 404 {@code lease_not_found}).
     */
    <R> CompletableFuture<R> withdraw(Waiting waiting, String what, String requestId, Supplier<CompletableFuture<R>> withdraw) {
        return member.readBarrier().thenCompose(ignored -> {
            LeaseView lease = member.leases().view(waiting.leaseId());
            if (lease == null) {
                throw new Failure(ErrorCode.LEASE_NOT_FOUND, "lease_id", "lease " + waiting.leaseId() + " not found: never granted,"
                        + " expired or revoked; a lease that ends waits for nothing, so nothing of " + what + " is left to give up");
            }
            if (!waiting.owner().equals(lease.clientId())) {
                throw new Failure(ErrorCode.NOT_HOLDER, "owner_id", "lease " + waiting.leaseId() + " is not owner '" + waiting.owner()
                        + "''s; nothing was withdrawn from " + what);
            }
            return RequestIds.traced(requestId, withdraw);
        });
    }

    /**
     * Renews the claim's lease when it is the claim's owner's and, by {@code holding}, holds the
     * grant named {@code what} (say "lock 'x'") with the claim's token; {@code holding} throws the
     * 409 {@code not_holder} answer otherwise, and returns what {@code renewed} answers with.
     */
    <H> CompletableFuture<Answer> renew(Principal caller, Claim claim, String what, String requestId, Supplier<H> holding,
                                        Function<H, Answer> renewed) {
        return member.readBarrier().thenCompose(ignored -> {
            LeaseView lease = member.leases().view(claim.leaseId());
            if (lease == null) {
                throw new Failure(ErrorCode.EXPIRED, "lease_id", "lease " + claim.leaseId()
                        + " has ended (expired or revoked): " + what + " is no longer yours; acquire it again");
            }
            if (!claim.owner().equals(lease.clientId())) {
                throw new Failure(ErrorCode.NOT_HOLDER, "owner_id", "lease " + claim.leaseId() + " is not owner '" + claim.owner() + "''s");
            }
            H held = holding.get();
            return RequestIds.traced(requestId, () -> member.leases().keepAlive(caller, claim.leaseId())).thenApply(ttl -> {
                if (ttl == 0) {
                    throw new Failure(ErrorCode.EXPIRED, "lease_id", "lease " + claim.leaseId() + " ended before it was renewed");
                }
                return renewed.apply(held);
            });
        });
    }

    /**
     * Releases the grant named {@code what} with {@code release} as {@link #asOwner} runs it, then
     * revokes the lease if it holds and waits for nothing more. The lease may be gone: a retried
     * release then still succeeds from the replicated state's memory of recent releases, and a
     * release the state does not remember is 409 {@code stale}.
     */
    <R> CompletableFuture<Answer> release(Principal caller, Claim claim, String what, String requestId, Supplier<CompletableFuture<R>> release,
                                          Function<R, Answer> released) {
        return release(caller, claim, what, "release", requestId, release, released);
    }

    /** As {@link #release(Claim, String, String, Supplier, Function)}, the letting go called {@code verb} (an election's "resign"). */
    <R> CompletableFuture<Answer> release(Principal caller, Claim claim, String what, String verb, String requestId, Supplier<CompletableFuture<R>> release,
                                          Function<R, Answer> released) {
        return asOwner(claim, what, verb, requestId, release)
                .thenCompose(result -> revokeIfIdle(caller, claim.leaseId(), requestId).thenApply(revoked -> released.apply(result)));
    }

    /**
     * Runs {@code action}, a change through the log to the grant named {@code what} by the claim's
     * lease and token (a release, a downgrade), when the claim's lease (if it is still there) is
     * the claim's owner's; otherwise, and when the lease has ended, it is 409 {@code stale} naming
     * {@code owner_id} or {@code lease_id}, and nothing changes. The primitive's own refusals (a
     * stale token, a lease that does not hold the grant) are answered as {@link Failures} maps
     * them. {@code verb} names the action in the messages ("release": "nothing was released";
     * "proclaim": "nothing was proclaimed").
     */
    <R> CompletableFuture<R> asOwner(Claim claim, String what, String verb, String requestId, Supplier<CompletableFuture<R>> action) {
        return member.readBarrier().thenCompose(ignored -> {
            LeaseView lease = member.leases().view(claim.leaseId());
            if (lease != null && !claim.owner().equals(lease.clientId())) {
                throw new Failure(ErrorCode.STALE, "owner_id", "lease " + claim.leaseId() + " is not owner '"
                        + claim.owner() + "''s; nothing was " + verb + (verb.endsWith("e") ? "d" : "ed"));
            }
            return RequestIds.traced(requestId, action).handle((result, error) -> {
                if (error != null) {
                    Failure f = Failures.of(error);
                    if (f.code == ErrorCode.LEASE_NOT_FOUND) {
                        throw new Failure(ErrorCode.STALE, "lease_id", "lease " + claim.leaseId()
                                + " has ended (expired or revoked), so " + what + " is no longer its to " + verb);
                    }
                    throw f;
                }
                return result;
            });
        });
    }

    /**
     * The {@code recommended_retry_ms} of a 409 {@code held} answer ({@link RetryHint}): the
     * soonest any of {@code holders}' leases can run out, with {@code waiters} ahead, each holding
     * about as long as that lease's TTL. {@link RetryHint#MIN_MS} with no holder.
     */
    long retryHint(Collection<Long> holders, int waiters) {
        long hint = Long.MAX_VALUE;
        for (long leaseId : holders) {
            LeaseView holderLease = member.leases().view(leaseId);
            long hold = holderLease == null ? 0 : holderLease.ttlMillis();
            long remaining = member.leases().remainingMillis(leaseId);
            hint = Math.min(hint, RetryHint.recommend(remaining < 0 ? hold : remaining, waiters, hold));
        }
        return hint == Long.MAX_VALUE ? RetryHint.MIN_MS : hint;
    }

    /** The start of a grant's answer: the name (under {@code noun}), owner, lease and token. */
    static ObjectNode grant(String noun, String name, String owner, long leaseId, long token) {
        ObjectNode body = NODES.objectNode();
        body.put(noun, name);
        body.put("owner_id", owner);
        body.put("lease_id", leaseId);
        body.put("fencing_token", token);
        return body;
    }

    /** Adds the lease's expiry to {@code body} ({@link #expiry(ObjectNode, long)} of its remaining TTL). */
    ObjectNode expiryOf(ObjectNode body, long leaseId) {
        expiry(body, member.leases().remainingMillis(leaseId));
        return body;
    }

    /**
     * {@code ttl_remaining_ms} (authoritative, on this member's monotonic clock) and
     * {@code expires_at_ms} (this member's wall clock plus that, for display only); -1 and null
     * when this member has no deadline for the lease yet (it just restarted or caught up).
     */
    static void expiry(ObjectNode body, long remainingMillis) {
        body.put("ttl_remaining_ms", remainingMillis);
        body.put("expires_at_ms", remainingMillis < 0 ? null : System.currentTimeMillis() + remainingMillis);
    }

    /** Revokes a lease this front end made when it holds and waits for nothing any more. */
    CompletableFuture<Void> revokeIfIdle(Principal caller, long leaseId, String requestId) {
        LeaseView lease = member.leases().view(leaseId);
        if (lease == null || !lease.held().isEmpty() || !lease.waiting().isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        return revokeQuietly(caller, leaseId, requestId);
    }

    /**
     * Revokes a lease, logging instead of failing: the answer does not depend on it, and a lease
     * that could not be revoked ends by itself one TTL later.
     */
    private CompletableFuture<Void> revokeQuietly(Principal caller, long leaseId, String requestId) {
        return RequestIds.traced(requestId, () -> member.leases().revoke(caller, leaseId)).handle((ignored, error) -> {
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
}
