package io.tenure.server.text;

import io.tenure.core.election.ElectionTable;
import io.tenure.core.election.ElectionView;
import io.tenure.core.kernel.Result;
import io.tenure.core.lock.LockTable;
import io.tenure.core.lock.LockView;
import io.tenure.core.semaphore.SemaphoreTable;
import io.tenure.core.semaphore.SemaphoreView;
import io.tenure.server.Acquires;
import io.tenure.server.Causes;
import io.tenure.server.Member;
import io.tenure.server.RequestRejected;
import io.tenure.server.election.Elections;
import io.tenure.server.lock.Locks;
import io.tenure.server.semaphore.Semaphores;
import io.tenure.server.text.TextSession.Hold;
import io.tenure.server.text.TextSession.Kind;
import io.tenure.server.text.TextSession.Place;
import io.tenure.server.text.TextSession.Slot;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * The commands that hold something on a lease of its own: locks ({@code l r n e w}), semaphores
 * ({@code sl sr sn se sw}), read/write locks ({@code rl wl rr wr rn wn re we rw ww}) and elections
 * ({@code elect resign}; {@code n} renews a leadership as dflockd's clients do).
 *
 * <p>Each acquire grants a lease with the hold's TTL (raised to the cluster's minimum), renewed by
 * the connection while the request waits or its two-phase place is kept, and renewed once more at
 * the grant or at {@code w}, so the hold's TTL counts from there. A hold is then renewed only by
 * {@code n}: a client that stops renewing loses it when its lease ends, as in dflockd. Releasing
 * revokes the hold's lease, which releases the hold and hands it to the next waiter in one log
 * entry. Read and write locks are Tenure's lock in read and write mode, so {@code l} and {@code wl}
 * on one name are the same exclusive lock.
 */
final class HoldCommands {
    private static final byte[] NO_METADATA = new byte[0];

    private HoldCommands() {}

    static void register(Map<String, TextCommand> into) {
        into.put("l", (s, r) -> acquire(s, r, Kind.LOCK, false));
        into.put("wl", (s, r) -> acquire(s, r, Kind.WRITE, false));
        into.put("rl", (s, r) -> acquire(s, r, Kind.READ, false));
        into.put("sl", (s, r) -> acquire(s, r, Kind.SEMAPHORE, false));
        into.put("elect", (s, r) -> acquire(s, r, Kind.ELECTION, false));
        into.put("e", (s, r) -> acquire(s, r, Kind.LOCK, true));
        into.put("we", (s, r) -> acquire(s, r, Kind.WRITE, true));
        into.put("re", (s, r) -> acquire(s, r, Kind.READ, true));
        into.put("se", (s, r) -> acquire(s, r, Kind.SEMAPHORE, true));
        into.put("w", (s, r) -> await(s, r, Kind.LOCK));
        into.put("ww", (s, r) -> await(s, r, Kind.WRITE));
        into.put("rw", (s, r) -> await(s, r, Kind.READ));
        into.put("sw", (s, r) -> await(s, r, Kind.SEMAPHORE));
        into.put("r", (s, r) -> release(s, r, Kind.LOCK));
        into.put("wr", (s, r) -> release(s, r, Kind.WRITE));
        into.put("rr", (s, r) -> release(s, r, Kind.READ));
        into.put("sr", (s, r) -> release(s, r, Kind.SEMAPHORE));
        into.put("resign", (s, r) -> release(s, r, Kind.ELECTION));
        into.put("n", (s, r) -> renew(s, r, Kind.LOCK));
        into.put("wn", (s, r) -> renew(s, r, Kind.WRITE));
        into.put("rn", (s, r) -> renew(s, r, Kind.READ));
        into.put("sn", (s, r) -> renew(s, r, Kind.SEMAPHORE));
    }

    /** What an acquire asked for. */
    private record Ask(Kind kind, String key, long timeoutMs, long ttlMillis, int limit, boolean enqueue) {}

    /** What the service answered, whatever its kind. */
    private record Got(boolean granted, long fencingToken) {}

    // l name <timeout> [<ttl>] | sl name <timeout> <limit> [<ttl>] | e name [<ttl>] | se name <limit> [<ttl>]
    private static CompletableFuture<String> acquire(TextSession session, TextRequest request, Kind kind, boolean enqueue) {
        TextArgs args = TextArgs.of(request);
        long timeoutMs = 0;
        int limit = 0;
        int next = 0;
        if (!enqueue) {
            args.count(kind == Kind.SEMAPHORE ? 2 : 1, kind == Kind.SEMAPHORE ? 3 : 2);
            timeoutMs = Math.multiplyExact(args.seconds(next++), 1000L);
        } else {
            args.count(kind == Kind.SEMAPHORE ? 1 : 0, kind == Kind.SEMAPHORE ? 2 : 1);
        }
        if (kind == Kind.SEMAPHORE) {
            limit = args.positiveCount(next++);
        }
        long ttl = session.grantableTtl(args.leaseTtlMillis(next, session.settings().defaultLeaseTtl()));
        Ask ask = new Ask(kind, request.key(), timeoutMs, ttl, limit, enqueue);
        if (enqueue && session.place(kind, ask.key()) != null) {
            throw TextRefusal.status("error_already_enqueued", "this connection already has a place for " + ask.key());
        }
        checkLimits(session, ask);
        long asked = System.nanoTime();
        Slot idle = session.takeIdle(ttl);
        if (idle != null) {
            Slot slot = idle;
            if (asked - idle.renewedAt() >= ttl * 1_000_000L / 20) {
                // Renewed with the acquire (the two travel together), so that the hold's TTL counts from about now;
                // a lease renewed within the last 5 % of its TTL starts the hold as it is.
                session.member().leases().keepAlive(session.principal(), idle.leaseId());
                slot = idle.renewed(asked);
            }
            return acquireOn(session, ask, slot, asked, true).handle((line, error) -> leaseGone(error)
                    // The kept lease had ended: the request starts again on a new one.
                    ? acquireOnNewLease(session, ask, asked)
                    : error != null ? CompletableFuture.<String>failedFuture(Causes.unwrap(error)) : CompletableFuture.completedFuture(line))
                    .thenCompose(answer -> answer);
        }
        return acquireOnNewLease(session, ask, asked);
    }

    private static CompletableFuture<String> acquireOnNewLease(TextSession session, Ask ask, long asked) {
        String secret = TextSession.newSecret();
        return session.member().leases().grant(session.principal(), 0, ask.ttlMillis(), TextSession.clientIdOf(secret)).thenCompose(granted ->
                acquireOn(session, ask, new Slot(granted.leaseId(), secret, ask.ttlMillis(), System.nanoTime()), asked, false));
    }

    /** Runs an acquire on {@code slot}'s lease; {@code kept}: the lease was the connection's already (it may have ended). */
    private static CompletableFuture<String> acquireOn(TextSession session, Ask ask, Slot slot, long asked, boolean kept) {
        Member member = session.member();
        long lease = slot.leaseId();
        session.keepAlive(lease, ask.ttlMillis());
        Acquires.Wait<?> wait;
        try {
            wait = start(member, session.principal(), ask, lease);
        } catch (RuntimeException e) {
            return giveUp(session, slot, e, true);
        }
        CompletableFuture<Object> result = outcomeOf(wait);
        Runnable abandon = () -> endWait(wait, result);
        session.onClose(abandon);
        return result.<CompletableFuture<String>>handle((outcome, error) -> {
            session.forget(abandon);
            if (error != null) {
                if (kept && leaseGone(error)) {
                    session.stopKeeping(lease);
                    return CompletableFuture.failedFuture(error);
                }
                return giveUp(session, slot, error, !leaseGone(error));
            }
            Got got = got(outcome);
            if (ask.enqueue()) {
                Hold hold = got.granted() ? new Hold(ask.kind(), ask.key(), slot, got.fencingToken()) : null;
                session.placed(new Place(ask.kind(), ask.key(), slot, ask.limit(), hold));
                if (hold == null) {
                    return CompletableFuture.completedFuture("queued");
                }
                // Granted at once: a hold from now, whose TTL runs; kept as a place too, so that a later w
                // answers with this grant (and starts its TTL afresh).
                session.stopKeeping(lease);
                if (!session.held(hold)) {
                    return session.revokeQuietly(lease).thenApply(ok -> {
                        throw TextRefusal.error(11, "the connection closed");
                    });
                }
                return CompletableFuture.completedFuture("acquired " + hold.token() + " " + seconds(slot.ttlMillis()) + " " + got.fencingToken());
            }
            if (!got.granted()) {
                return giveUp(session, slot, TextRefusal.status("timeout", "not granted within the timeout"), true);
            }
            Hold hold = new Hold(ask.kind(), ask.key(), slot, got.fencingToken());
            return granted(session, hold, System.nanoTime() - asked > ask.ttlMillis() * 1_000_000L / 20).thenApply(line -> {
                if (ask.kind() == Kind.ELECTION) {
                    session.pushAfterAnswer("leader elected " + ask.key());
                }
                return line;
            });
        }).thenCompose(answer -> answer);
    }

    // w name <timeout>
    private static CompletableFuture<String> await(TextSession session, TextRequest request, Kind kind) {
        TextArgs args = TextArgs.of(request).count(1, 1);
        long timeoutMs = Math.multiplyExact(args.seconds(0), 1000L);
        Place place = session.dropPlace(kind, request.key());
        if (place == null) {
            throw TextRefusal.status("error_not_enqueued", "no place of this connection for " + request.key());
        }
        if (place.granted() != null) {
            return granted(session, place.granted(), true);
        }
        Member member = session.member();
        Acquires.Wait<?> wait;
        try {
            wait = start(member, session.principal(), new Ask(kind, place.key(), timeoutMs, place.slot().ttlMillis(), place.limit(), false), place.leaseId());
        } catch (RuntimeException e) {
            return giveUp(session, place.slot(), e, false);
        }
        CompletableFuture<Object> result = outcomeOf(wait);
        Runnable abandon = () -> endWait(wait, result);
        session.onClose(abandon);
        return result.<CompletableFuture<String>>handle((outcome, error) -> {
            session.forget(abandon);
            if (error != null) {
                return giveUp(session, place.slot(), leaseGone(error) ? TextRefusal.status("error_lease_expired", "the place's lease ended") : error,
                        false);
            }
            Got got = got(outcome);
            if (!got.granted()) {
                return giveUp(session, place.slot(), TextRefusal.status("timeout", "not granted within the timeout"), false);
            }
            return granted(session, new Hold(kind, place.key(), place.slot(), got.fencingToken()), true);
        }).thenCompose(answer -> answer);
    }

    // r name <token>
    private static CompletableFuture<String> release(TextSession session, TextRequest request, Kind kind) {
        Hold hold = find(session, request, kind);
        Member member = session.member();
        CompletableFuture<?> released = switch (hold.kind()) {
            case LOCK, WRITE, READ -> member.locks().unlock(session.principal(), hold.key(), hold.leaseId(), hold.fencingToken());
            case SEMAPHORE -> member.semaphores().release(session.principal(), hold.key(), hold.leaseId(), hold.fencingToken());
            case ELECTION -> member.elections().resign(session.principal(), hold.key(), hold.leaseId(), hold.fencingToken());
        };
        return released.handle((ok, error) -> {
            boolean own = session.dropHold(hold.token()) != null;
            Place place = session.place(hold.kind(), hold.key());
            if (place != null && place.granted() != null && place.granted().token().equals(hold.token())) {
                session.dropPlace(hold.kind(), hold.key());
            }
            if (error != null) {
                throw TextRefusal.status("error", "not released: " + Causes.unwrap(error).getMessage());
            }
            if (own) {
                session.idle(hold.slot());
            }
            return "ok";
        });
    }

    // n name <token> [<ttl>]: renews to the TTL named, else to --default-lease-ttl, as dflockd does
    private static CompletableFuture<String> renew(TextSession session, TextRequest request, Kind kind) {
        Hold hold = find(session, request, kind);
        TextArgs args = TextArgs.of(request);
        long ttl = session.grantableTtl(args.leaseTtlMillis(1, session.settings().defaultLeaseTtl()));
        CompletableFuture<Long> renewed = ttl == hold.ttlMillis()
                ? session.member().leases().keepAlive(session.principal(), hold.leaseId())
                : session.member().leases().renewTo(session.principal(), hold.leaseId(), ttl);
        return renewed.thenApply(granted -> {
            if (granted == 0) {
                session.dropHold(hold.token());
                throw TextRefusal.status("error_lease_expired", "the hold's lease ended before the renewal");
            }
            if (granted != hold.ttlMillis()) {
                session.retimed(hold, granted);
            }
            return "ok " + seconds(granted) + " " + hold.fencingToken();
        });
    }

    /** The grant line of {@code hold}, renewing its lease first when its TTL must count from now. */
    private static CompletableFuture<String> granted(TextSession session, Hold hold, boolean renewFirst) {
        session.stopKeeping(hold.leaseId());
        if (!session.held(hold)) {
            // The connection closed while the grant was on its way.
            return session.revokeQuietly(hold.leaseId()).thenApply(ok -> {
                throw TextRefusal.error(11, "the connection closed");
            });
        }
        String line = "ok " + hold.token() + " " + seconds(hold.ttlMillis()) + " " + hold.fencingToken();
        if (!renewFirst) {
            return CompletableFuture.completedFuture(line);
        }
        return session.member().leases().keepAlive(session.principal(), hold.leaseId()).handle((ttl, error) -> line);
    }

    /**
     * Ends a request that got nothing: the request fails with {@code error}; the lease is kept for
     * the connection's next hold when it still holds nothing of a place ({@code keep}), else revoked.
     */
    private static <T> CompletableFuture<T> giveUp(TextSession session, Slot slot, Throwable error, boolean keep) {
        session.stopKeeping(slot.leaseId());
        CompletableFuture<Void> done;
        if (keep && !(error instanceof TextRefusal r && r.getMessage() != null && r.getMessage().contains("client gone"))) {
            session.idle(slot);
            done = CompletableFuture.completedFuture(null);
        } else {
            done = session.revokeQuietly(slot.leaseId());
        }
        return done.thenApply(ok -> {
            throw error instanceof RuntimeException e ? e : new CompletionException(error);
        });
    }

    private static Acquires.Wait<?> start(Member member, io.tenure.server.security.Principal caller, Ask ask, long lease) {
        return switch (ask.kind()) {
            case LOCK, WRITE -> member.locks().lock(caller, ask.key(), lease, NO_METADATA, ask.timeoutMs(), 0, ask.enqueue(), false);
            case READ -> member.locks().lock(caller, ask.key(), lease, NO_METADATA, ask.timeoutMs(), 0, ask.enqueue(), true);
            case SEMAPHORE -> member.semaphores().acquire(caller, ask.key(), lease, ask.limit(), 1, ask.timeoutMs(), 0, ask.enqueue());
            case ELECTION -> member.elections().campaign(caller, ask.key(), lease, NO_METADATA, ask.timeoutMs(), 0);
        };
    }

    /** The client went away while its request waited: the wait is forgotten, and the request ends (dflockd's code 11). */
    private static void endWait(Acquires.Wait<?> wait, CompletableFuture<Object> result) {
        wait.abandon();
        result.completeExceptionally(TextRefusal.error(11, "client gone"));
    }

    private static CompletableFuture<Object> outcomeOf(Acquires.Wait<?> wait) {
        return wait.outcome().thenApply(o -> (Object) o);
    }

    private static Got got(Object outcome) {
        if (outcome instanceof Locks.Outcome o) {
            return new Got(o.acquired(), o.fencingToken());
        } else if (outcome instanceof Semaphores.Outcome o) {
            return new Got(o.acquired(), o.fencingToken());
        } else if (outcome instanceof Elections.Outcome o) {
            return new Got(o.elected(), o.fencingToken());
        }
        throw new IllegalStateException("unexpected outcome " + outcome);
    }

    /**
     * dflockd's limits, checked on this member's applied state before anything is proposed:
     * {@code --max-locks} for a resource that does not exist yet, {@code --max-waiters} for one
     * that does, and a semaphore's limit against the existing one.
     */
    private static void checkLimits(TextSession session, Ask ask) {
        TextSettings settings = session.settings();
        Member member = session.member();
        if (ask.kind() == Kind.SEMAPHORE) {
            SemaphoreTable.Refusal conflict = member.semaphores().conflict(ask.key(), ask.limit());
            if (conflict != null) {
                throw conflict.message().contains(" not a") ? TextRefusal.status("error_type_mismatch", conflict.message())
                        : TextRefusal.status("error_limit_mismatch", conflict.message());
            }
        }
        int[] inUse = member.stateMachine().read(s -> {
            LockTable locks = s.primitive(LockTable.class);
            SemaphoreTable semaphores = s.primitive(SemaphoreTable.class);
            ElectionTable elections = s.primitive(ElectionTable.class);
            int waiters = switch (ask.kind()) {
                case LOCK, WRITE, READ -> locks.lock(ask.key()) == null ? -1 : locks.waiterCount(ask.key());
                case SEMAPHORE -> semaphores.semaphore(ask.key()) == null ? -1 : semaphores.waiterCount(ask.key());
                case ELECTION -> elections.election(ask.key()) == null ? -1 : elections.candidateCount(ask.key());
            };
            return new int[] {waiters, locks.lockCount() + semaphores.semaphoreCount() + elections.electionCount()};
        });
        if (inUse[0] < 0 && settings.maxLocks() > 0 && inUse[1] >= settings.maxLocks()) {
            throw TextRefusal.status("error_max_locks", inUse[1] + " resources exist, --max-locks is " + settings.maxLocks());
        }
        if (inUse[0] >= 0 && settings.maxWaiters() > 0 && inUse[0] >= settings.maxWaiters()) {
            throw TextRefusal.status("error_max_waiters", ask.key() + " has " + inUse[0] + " waiters, --max-waiters is " + settings.maxWaiters());
        }
    }

    /**
     * The hold that {@code token} names on {@code key}: this connection's, or, for a token of a
     * hold made on another connection (a client that reconnected), the holder this member has
     * applied whose lease carries the token's hash and whose fencing token is the token's. A
     * request naming no such hold fails {@code error}.
     */
    private static Hold find(TextSession session, TextRequest request, Kind kind) {
        TextArgs args = TextArgs.of(request);
        if (args.size() < 1) {
            throw TextRefusal.error(TextRefusal.EMPTY_TOKEN, "no token");
        }
        args.count(1, 2);
        String token = args.field(0);
        Hold own = session.hold(token);
        if (own != null && own.key().equals(request.key())
                && (sameNamespace(own.kind(), kind) || (own.kind() == Kind.ELECTION && request.command().equals("n")))) {
            return own;
        }
        String secret = TextSession.secretOf(token);
        if (secret == null) {
            throw TextRefusal.status("error", "not a token: " + token);
        }
        String client = TextSession.clientIdOf(secret);
        long fence = TextSession.fenceOf(token);
        Member member = session.member();
        Hold found = switch (kind) {
            case LOCK, WRITE, READ -> {
                LockView lock = member.locks().describe(request.key());
                if (lock == null || (kind == Kind.READ) != lock.shared()) {
                    yield null;
                }
                yield lock.holders().stream().filter(h -> h.clientId().equals(client) && h.fencingToken() == fence).findFirst()
                        .map(h -> foreign(member, kind, request.key(), secret, h.leaseId(), fence)).orElse(null);
            }
            case SEMAPHORE -> {
                SemaphoreView semaphore = member.semaphores().describe(request.key());
                yield semaphore == null ? null : semaphore.holders().stream()
                        .filter(h -> h.clientId().equals(client) && h.fencingToken() == fence).findFirst()
                        .map(h -> foreign(member, kind, request.key(), secret, h.leaseId(), fence)).orElse(null);
            }
            case ELECTION -> electionHold(member, request.key(), secret, client, fence);
        };
        if (found == null && kind == Kind.LOCK && request.command().equals("n")) {
            // n on an election's key renews the leadership, as dflockd's election clients do.
            found = electionHold(member, request.key(), secret, client, fence);
        }
        if (found == null) {
            throw TextRefusal.status("error", "no hold of " + request.key() + " with that token");
        }
        return found;
    }

    private static Hold electionHold(Member member, String key, String secret, String client, long fence) {
        ElectionView election = member.elections().current(key).election();
        return election == null || !client.equals(election.leader()) || election.fencingToken() != fence ? null
                : foreign(member, Kind.ELECTION, key, secret, election.leaderLeaseId(), fence);
    }

    private static Hold foreign(Member member, Kind kind, String key, String secret, long leaseId, long fence) {
        return new Hold(kind, key, new Slot(leaseId, secret, ttlOf(member, leaseId), System.nanoTime()), fence);
    }

    /** {@code l}'s commands and {@code wl}'s name one lock; the others keep to their own. */
    private static boolean sameNamespace(Kind held, Kind asked) {
        return held == asked || (held == Kind.LOCK && asked == Kind.WRITE) || (held == Kind.WRITE && asked == Kind.LOCK);
    }

    private static long ttlOf(Member member, long leaseId) {
        var lease = member.leases().view(leaseId);
        return lease == null ? 0 : lease.ttlMillis();
    }

    private static boolean leaseGone(Throwable error) {
        return error != null && Causes.unwrap(error) instanceof RequestRejected r && r.code() == Result.Code.NOT_FOUND;
    }

    static long seconds(long millis) {
        return Math.max(1, (millis + 500) / 1000);
    }
}
