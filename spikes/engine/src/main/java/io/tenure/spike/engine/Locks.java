package io.tenure.spike.engine;

import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.Command;
import io.tenure.core.kernel.Effect;
import io.tenure.core.kernel.LeaseGrant;
import io.tenure.core.kernel.LeaseResult;
import io.tenure.core.kernel.Result;
import io.tenure.core.kernel.WaitKey;
import io.tenure.core.lock.LockAcquire;
import io.tenure.core.lock.LockRelease;
import io.tenure.core.lock.LockResult;
import io.tenure.core.lock.LockTable;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The leader's lock calls, as the product's service layer makes them, in blocking form for the
 * workload's client threads. An acquire that queues is parked under its {@link WaitKey} by its
 * answer, on the apply thread, before any later command can wake it; the release that hands the
 * lock over wakes it with its grant ({@link Effect.Wake}). Anything but the expected result fails
 * the call.
 */
final class Locks {
    /** Longer than any healthy wait here; a call past it is lost, and the run fails. */
    private static final long CALL_TIMEOUT_SECONDS = 30;
    private static final byte[] NO_METADATA = new byte[0];

    private final Proposer proposer;
    private final ConcurrentHashMap<WaitKey, CompletableFuture<Result>> parked = new ConcurrentHashMap<>();

    Locks(Proposer proposer) {
        this.proposer = proposer;
    }

    LeaseResult.LeaseGranted grantLease(long leaseId, long ttlMillis, String clientId) throws Exception {
        return expect(LeaseResult.LeaseGranted.class, call(new LeaseGrant(leaseId, ttlMillis, clientId)));
    }

    /** Acquires {@code key} for the lease, waiting in its FIFO queue while another lease holds it. */
    LockResult.Granted acquire(String key, long leaseId) throws Exception {
        CompletableFuture<Result> outcome = new CompletableFuture<>();
        proposer.propose(new LockAcquire(key, leaseId, NO_METADATA, true), new Proposer.Answer() {
            @Override
            public void applied(Applied applied) {
                if (applied.result() instanceof LockResult.Queued) {
                    parked.put(new WaitKey(LockTable.NAME, key, leaseId), outcome);
                } else {
                    outcome.complete(applied.result());
                }
            }

            @Override
            public void failed(Throwable error) {
                outcome.completeExceptionally(error);
            }
        });
        LockResult.Granted granted = expect(LockResult.Granted.class, await(outcome));
        if (granted.again()) {
            throw new IllegalStateException("lease " + leaseId + " was granted '" + key + "' again: it already held it");
        }
        return granted;
    }

    LockResult.Released release(LockResult.Granted grant) throws Exception {
        return expect(LockResult.Released.class, call(new LockRelease(grant.key(), grant.leaseId(), grant.fencingToken())));
    }

    /** Answers the parked acquires that the effects of one applied command wake; on the apply thread. */
    void wake(List<Effect> effects) {
        for (Effect effect : effects) {
            if (effect instanceof Effect.Wake wake) {
                CompletableFuture<Result> acquire = parked.remove(wake.key());
                if (acquire == null) {
                    throw new IllegalStateException("a wake-up for " + wake.key() + " found no parked acquire");
                }
                acquire.complete(wake.result());
            }
        }
    }

    private Result call(Command command) throws Exception {
        CompletableFuture<Result> outcome = new CompletableFuture<>();
        proposer.propose(command, new Proposer.Answer() {
            @Override
            public void applied(Applied applied) {
                outcome.complete(applied.result());
            }

            @Override
            public void failed(Throwable error) {
                outcome.completeExceptionally(error);
            }
        });
        return await(outcome);
    }

    private static Result await(CompletableFuture<Result> outcome) throws Exception {
        try {
            return outcome.get(CALL_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw new IllegalStateException("the call failed: " + e.getCause(), e.getCause());
        } catch (TimeoutException e) {
            throw new IllegalStateException("no answer within " + CALL_TIMEOUT_SECONDS + " s", e);
        }
    }

    private static <R extends Result> R expect(Class<R> type, Result result) {
        if (!type.isInstance(result)) {
            throw new IllegalStateException("expected " + type.getSimpleName() + ", got " + result);
        }
        return type.cast(result);
    }
}
