package io.tenure.server.grpc;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.tenure.proto.v1.BarrierAwaitRequest;
import io.tenure.proto.v1.BarrierLeaveRequest;
import io.tenure.proto.v1.CampaignCancelRequest;
import io.tenure.proto.v1.CampaignRequest;
import io.tenure.proto.v1.DoubleBarrierCancelRequest;
import io.tenure.proto.v1.DoubleBarrierEnterRequest;
import io.tenure.proto.v1.DoubleBarrierLeaveRequest;
import io.tenure.proto.v1.LatchAwaitRequest;
import io.tenure.proto.v1.LatchCancelRequest;
import io.tenure.proto.v1.LatchCountDownRequest;
import io.tenure.proto.v1.LatchSetCountRequest;
import io.tenure.proto.v1.LockMode;
import io.tenure.proto.v1.LockRequest;
import io.tenure.proto.v1.ProclaimRequest;
import io.tenure.proto.v1.ResignRequest;
import io.tenure.proto.v1.SemaphoreAcquireRequest;
import io.tenure.proto.v1.SemaphoreCancelRequest;
import io.tenure.proto.v1.SemaphoreReleaseRequest;
import io.tenure.proto.v1.SessionAnswer;
import io.tenure.proto.v1.SessionCall;
import io.tenure.proto.v1.SessionError;
import io.tenure.proto.v1.SessionRequest;
import io.tenure.proto.v1.SessionResponse;
import io.tenure.proto.v1.TryLockRequest;
import io.tenure.server.Acquires;
import io.tenure.server.AnswerBatch;
import io.tenure.server.Member;
import io.tenure.server.lease.LeaseKeeper;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * One client's session stream ({@code LockService.Session}): the calls it carries go to the same
 * member services as their unary RPCs, and their answers go back many to a message. Answers
 * that one applied log entry gives are written together at the end of the entry
 * ({@link AnswerBatch}); others as they come, coalesced with any that arrive while a write is
 * under way.
 *
 * <p>Every kind's calls travel here: locks, lease grants and revokes, semaphores, elections,
 * barriers, double barriers, latches, counters and key-value (puts, gets, deletes,
 * compare-and-sets, transactions), each served by the member's service of its kind with
 * the checks and the response of its unary RPC. The calls that wait (Lock, semaphore Acquire,
 * Campaign, barrier Await, double barrier Enter and Leave, latch Await) outlive their message; an
 * abandon, or the end of the stream, forgets such a call here without changing the replicated
 * state, as cancelling its unary call does: the lease keeps its place.
 */
final class GrpcSession implements StreamObserver<SessionRequest> {
    private final Member member;
    /** Who opened the stream: every request on it is made as this principal. */
    private final io.tenure.server.security.Principal caller = GrpcAuthentication.principal();
    /** The lock and lease responses; each other kind's are its service's static builders. */
    private final GrpcLockService locks;
    private final ServerCallStreamObserver<SessionResponse> stream;
    /** The calls still waiting (Lock, semaphore Acquire, Campaign, the barriers', latch Await), by call id. */
    private final Map<Long, Acquires.Wait<?>> waiting = new ConcurrentHashMap<>();
    private final Queue<SessionAnswer> outbox = new ConcurrentLinkedQueue<>();
    /** Set while a write of the outbox is deferred or under way. */
    private final AtomicBoolean writing = new AtomicBoolean();
    private volatile boolean ended;

    GrpcSession(Member member, GrpcLockService locks, ServerCallStreamObserver<SessionResponse> stream) {
        this.member = member;
        this.locks = locks;
        this.stream = stream;
        stream.setOnCancelHandler(this::end);
    }

    @Override
    public void onNext(SessionRequest request) {
        // The calls answered at once (refused input, a full member) share one message.
        AnswerBatch.run(() -> {
            for (SessionCall call : request.getCallsList()) {
                serve(call);
            }
        });
    }

    private void serve(SessionCall call) {
        long id = call.getId();
        if (call.getCallCase() == SessionCall.CallCase.ABANDON) {
            Acquires.Wait<?> wait = waiting.remove(call.getAbandon());
            if (wait != null) {
                wait.abandon();
            }
            return;
        }
        if (id == 0) {
            fail(id, Statuses.invalid("id: each call of a session needs an id other than 0"));
            return;
        }
        if (call.getCallCase() == SessionCall.CallCase.CALL_NOT_SET) {
            // A field this member does not know is a call of a newer client's: it sends that one unary.
            fail(id, call.getUnknownFields().asMap().isEmpty()
                    ? Statuses.invalid("call: call " + id + " names no request (lock, semaphore_acquire, campaign, ...)")
                    : Status.UNIMPLEMENTED.withDescription("call: call " + id + " is of a kind this member does not carry in a session;"
                            + " send it as its unary RPC").asRuntimeException());
            return;
        }
        if (!member.rateGuard().tryAdmit()) {
            fail(id, Statuses.of(member.rateGuard().refusal()));
            return;
        }
        try {
            member.userRates().admit(caller);
        } catch (io.tenure.server.LimitExceeded overQuota) {
            fail(id, Statuses.of(overQuota));
            return;
        }
        try {
            switch (call.getCallCase()) {
                case LOCK, TRY_LOCK, UNLOCK, DOWNGRADE, LOCK_CANCEL -> lockCall(id, call);
                case LEASE_GRANT, LEASE_REVOKE -> leaseCall(id, call);
                case SEMAPHORE_ACQUIRE, SEMAPHORE_RELEASE, SEMAPHORE_CANCEL -> semaphoreCall(id, call);
                case CAMPAIGN, PROCLAIM, RESIGN, CAMPAIGN_CANCEL, LEADER -> electionCall(id, call);
                case BARRIER_AWAIT, BARRIER_LEAVE, DOUBLE_BARRIER_ENTER, DOUBLE_BARRIER_LEAVE, DOUBLE_BARRIER_CANCEL -> barrierCall(id, call);
                case LATCH_SET_COUNT, LATCH_COUNT_DOWN, LATCH_AWAIT, LATCH_CANCEL -> latchCall(id, call);
                case COUNTER_ADD -> answer(id, GrpcCounterService.add(member, caller, call.getCounterAdd()),
                        r -> SessionAnswer.newBuilder().setCounterAdd(r));
                case COUNTER_SET -> answer(id, GrpcCounterService.set(member, caller, call.getCounterSet()),
                        r -> SessionAnswer.newBuilder().setCounterSet(r));
                case COUNTER_COMPARE_AND_SET -> answer(id, GrpcCounterService.compareAndSet(member, caller, call.getCounterCompareAndSet()),
                        r -> SessionAnswer.newBuilder().setCounterCompareAndSet(r));
                case COUNTER_GET -> answer(id, GrpcCounterService.get(member, caller, call.getCounterGet()),
                        r -> SessionAnswer.newBuilder().setCounterGet(r));
                case KV_PUT -> answer(id, GrpcKvService.put(member, caller, call.getKvPut()), r -> SessionAnswer.newBuilder().setKvPut(r));
                case KV_COMPARE_AND_SET -> answer(id, GrpcKvService.compareAndSet(member, caller, call.getKvCompareAndSet()),
                        r -> SessionAnswer.newBuilder().setKvCompareAndSet(r));
                case KV_DELETE -> answer(id, GrpcKvService.delete(member, caller, call.getKvDelete()), r -> SessionAnswer.newBuilder().setKvDelete(r));
                case KV_GET -> answer(id, GrpcKvService.get(member, caller, call.getKvGet()), r -> SessionAnswer.newBuilder().setKvGet(r));
                case KV_TXN -> answer(id, GrpcKvService.txn(member, caller, call.getKvTxn()), r -> SessionAnswer.newBuilder().setKvTxn(r));
                default -> throw new IllegalStateException("unhandled call " + call.getCallCase());
            }
        } catch (RuntimeException refused) {
            fail(id, Statuses.of(refused)); // input refused before anything was proposed (a lease grant's ttl, say)
        }
    }

    private void lockCall(long id, SessionCall call) {
        switch (call.getCallCase()) {
            case LOCK -> {
                LockRequest lock = call.getLock();
                String badMode = GrpcLockService.badMode(lock.getModeValue());
                if (badMode != null) {
                    fail(id, Statuses.invalid(badMode));
                    return;
                }
                park(id, member.locks().lock(caller, lock.getName(), lock.getLeaseId(), lock.getMetadata().toByteArray(), lock.getTimeoutMs(),
                                lock.getRequestId(), lock.getEnqueue(), lock.getMode() == LockMode.LOCK_MODE_READ),
                        o -> SessionAnswer.newBuilder().setLock(locks.lockResponse(o)),
                        // Never released here: the client may hold this grant through another call.
                        o -> member.locks().leftToLease(o.key(), lock.getLeaseId(), o.fencingToken()));
            }
            case TRY_LOCK -> {
                TryLockRequest tryLock = call.getTryLock();
                String badMode = GrpcLockService.badMode(tryLock.getModeValue());
                if (badMode != null) {
                    fail(id, Statuses.invalid(badMode));
                    return;
                }
                answer(id, member.locks().tryLock(caller, tryLock.getName(), tryLock.getLeaseId(), tryLock.getMetadata().toByteArray(),
                        tryLock.getRequestId(), tryLock.getMode() == LockMode.LOCK_MODE_READ),
                        o -> SessionAnswer.newBuilder().setTryLock(locks.tryLockResponse(o)));
            }
            case UNLOCK -> answer(id, member.locks().unlock(caller, call.getUnlock().getKey(), call.getUnlock().getLeaseId(),
                    call.getUnlock().getFencingToken()), next -> SessionAnswer.newBuilder().setUnlock(locks.unlockResponse(next)));
            case DOWNGRADE -> answer(id, member.locks().downgrade(caller, call.getDowngrade().getName(), call.getDowngrade().getLeaseId(),
                    call.getDowngrade().getFencingToken()), done -> SessionAnswer.newBuilder().setDowngrade(locks.downgradeResponse(done)));
            case LOCK_CANCEL -> answer(id, member.locks().cancel(caller, call.getLockCancel().getName(), call.getLockCancel().getLeaseId(),
                            call.getLockCancel().getRequestId()),
                    o -> SessionAnswer.newBuilder().setLockCancel(locks.lockCancelResponse(o)));
            default -> throw new IllegalStateException("not a lock call: " + call.getCallCase());
        }
    }

    private void leaseCall(long id, SessionCall call) {
        switch (call.getCallCase()) {
            case LEASE_GRANT -> {
                LeaseKeeper.GrantRequest grant = GrpcLockService.grantRequest(call.getLeaseGrant());
                answer(id, member.leases().grant(caller, grant.requestedId(), grant.ttlMillis(), grant.clientId()),
                        granted -> SessionAnswer.newBuilder().setLeaseGrant(locks.leaseGrantResponse(granted)));
            }
            case LEASE_REVOKE -> answer(id, member.leases().revoke(caller, call.getLeaseRevoke().getId()),
                    revoked -> SessionAnswer.newBuilder().setLeaseRevoke(locks.leaseRevokeResponse()));
            default -> throw new IllegalStateException("not a lease call: " + call.getCallCase());
        }
    }

    private void semaphoreCall(long id, SessionCall call) {
        switch (call.getCallCase()) {
            case SEMAPHORE_ACQUIRE -> {
                SemaphoreAcquireRequest r = call.getSemaphoreAcquire();
                park(id, member.semaphores().acquire(caller, r.getName(), r.getLeaseId(), r.getLimit(), r.getPermits(), r.getTimeoutMs(),
                        r.getRequestId(), r.getEnqueue()),
                        o -> SessionAnswer.newBuilder().setSemaphoreAcquire(GrpcSemaphoreService.acquireResponse(member, o)));
            }
            case SEMAPHORE_RELEASE -> {
                SemaphoreReleaseRequest r = call.getSemaphoreRelease();
                answer(id, member.semaphores().release(caller, r.getName(), r.getLeaseId(), r.getFencingToken()),
                        handedTo -> SessionAnswer.newBuilder().setSemaphoreRelease(GrpcSemaphoreService.releaseResponse(member, handedTo)));
            }
            case SEMAPHORE_CANCEL -> {
                SemaphoreCancelRequest r = call.getSemaphoreCancel();
                answer(id, member.semaphores().cancel(caller, r.getName(), r.getLeaseId(), r.getRequestId()),
                        o -> SessionAnswer.newBuilder().setSemaphoreCancel(GrpcSemaphoreService.cancelResponse(member, o)));
            }
            default -> throw new IllegalStateException("not a semaphore call: " + call.getCallCase());
        }
    }

    private void electionCall(long id, SessionCall call) {
        switch (call.getCallCase()) {
            case CAMPAIGN -> {
                CampaignRequest r = call.getCampaign();
                park(id, member.elections().campaign(caller, r.getName(), r.getLeaseId(), r.getValue().toByteArray(), r.getTimeoutMs(), r.getRequestId()),
                        o -> SessionAnswer.newBuilder().setCampaign(GrpcElectionService.campaignResponse(member, o)));
            }
            case PROCLAIM -> {
                ProclaimRequest r = call.getProclaim();
                answer(id, member.elections().proclaim(caller, r.getName(), r.getLeaseId(), r.getFencingToken(), r.getValue().toByteArray()),
                        revision -> SessionAnswer.newBuilder().setProclaim(GrpcElectionService.proclaimResponse(member, revision)));
            }
            case RESIGN -> {
                ResignRequest r = call.getResign();
                answer(id, member.elections().resign(caller, r.getName(), r.getLeaseId(), r.getFencingToken()),
                        next -> SessionAnswer.newBuilder().setResign(GrpcElectionService.resignResponse(member, next)));
            }
            case CAMPAIGN_CANCEL -> {
                CampaignCancelRequest r = call.getCampaignCancel();
                answer(id, member.elections().cancel(caller, r.getName(), r.getLeaseId(), r.getRequestId()),
                        o -> SessionAnswer.newBuilder().setCampaignCancel(GrpcElectionService.campaignResponse(member, o)));
            }
            case LEADER -> {
                String name = call.getLeader().getName();
                answer(id, member.elections().leader(caller, name),
                        read -> SessionAnswer.newBuilder().setLeader(GrpcElectionService.leaderResponse(member, name, read)));
            }
            default -> throw new IllegalStateException("not an election call: " + call.getCallCase());
        }
    }

    private void barrierCall(long id, SessionCall call) {
        switch (call.getCallCase()) {
            case BARRIER_AWAIT -> {
                BarrierAwaitRequest r = call.getBarrierAwait();
                park(id, member.barriers().await(caller, r.getName(), r.getLeaseId(), r.getParties(), r.getTimeoutMs(), r.getRequestId()),
                        o -> SessionAnswer.newBuilder().setBarrierAwait(GrpcBarrierService.response(member, o)));
            }
            case BARRIER_LEAVE -> {
                BarrierLeaveRequest r = call.getBarrierLeave();
                answer(id, member.barriers().leave(caller, r.getName(), r.getLeaseId(), r.getRequestId()),
                        o -> SessionAnswer.newBuilder().setBarrierLeave(GrpcBarrierService.response(member, o)));
            }
            case DOUBLE_BARRIER_ENTER -> {
                DoubleBarrierEnterRequest r = call.getDoubleBarrierEnter();
                park(id, member.doubleBarriers().enter(caller, r.getName(), r.getLeaseId(), r.getParties(), r.getTimeoutMs(), r.getRequestId()),
                        o -> SessionAnswer.newBuilder().setDoubleBarrierEnter(GrpcDoubleBarrierService.entry(member, o)));
            }
            case DOUBLE_BARRIER_LEAVE -> {
                DoubleBarrierLeaveRequest r = call.getDoubleBarrierLeave();
                park(id, member.doubleBarriers().leave(caller, r.getName(), r.getLeaseId(), r.getTimeoutMs()),
                        o -> SessionAnswer.newBuilder().setDoubleBarrierLeave(GrpcDoubleBarrierService.exit(member, o)));
            }
            case DOUBLE_BARRIER_CANCEL -> {
                DoubleBarrierCancelRequest r = call.getDoubleBarrierCancel();
                answer(id, member.doubleBarriers().cancel(caller, r.getName(), r.getLeaseId(), r.getRequestId()),
                        o -> SessionAnswer.newBuilder().setDoubleBarrierCancel(GrpcDoubleBarrierService.entry(member, o)));
            }
            default -> throw new IllegalStateException("not a barrier call: " + call.getCallCase());
        }
    }

    private void latchCall(long id, SessionCall call) {
        switch (call.getCallCase()) {
            case LATCH_SET_COUNT -> {
                LatchSetCountRequest r = call.getLatchSetCount();
                answer(id, member.latches().trySetCount(caller, r.getName(), r.getCount(), r.getRequestId()),
                        set -> SessionAnswer.newBuilder().setLatchSetCount(GrpcLatchService.setCountResponse(member, set)));
            }
            case LATCH_COUNT_DOWN -> {
                LatchCountDownRequest r = call.getLatchCountDown();
                answer(id, member.latches().countDown(caller, r.getName(), r.getRequestId()),
                        down -> SessionAnswer.newBuilder().setLatchCountDown(GrpcLatchService.countDownResponse(member, down)));
            }
            case LATCH_AWAIT -> {
                LatchAwaitRequest r = call.getLatchAwait();
                park(id, member.latches().await(caller, r.getName(), r.getLeaseId(), r.getTimeoutMs(), r.getRequestId()),
                        o -> SessionAnswer.newBuilder().setLatchAwait(GrpcLatchService.response(member, o)));
            }
            case LATCH_CANCEL -> {
                LatchCancelRequest r = call.getLatchCancel();
                answer(id, member.latches().cancel(caller, r.getName(), r.getLeaseId(), r.getRequestId()),
                        o -> SessionAnswer.newBuilder().setLatchCancel(GrpcLatchService.response(member, o)));
            }
            default -> throw new IllegalStateException("not a latch call: " + call.getCallCase());
        }
    }

    /**
     * A call that may wait, answered when the log decides, as its unary RPC's cancelled call: what
     * the lease was granted after the stream ended stays with the lease (the client may hold it
     * through another call), and is only logged where the unary RPC logs it.
     */
    private <O extends Acquires.Outcome> void park(long id, Acquires.Wait<O> wait, Function<O, SessionAnswer.Builder> answer) {
        park(id, wait, answer, granted -> { });
    }

    /** {@link #park(long, Acquires.Wait, Function)}, telling {@code leftToLease} of a grant made after the stream ended. */
    private <O extends Acquires.Outcome> void park(long id, Acquires.Wait<O> wait, Function<O, SessionAnswer.Builder> answer,
                                                   Consumer<O> leftToLease) {
        if (!wait.outcome().isDone()) {
            waiting.put(id, wait);
            if (ended) {
                end(); // the stream ended while this call was being started
            }
        }
        wait.outcome().whenComplete((outcome, error) -> {
            waiting.remove(id);
            if (ended) {
                if (outcome != null && outcome.acquired()) {
                    leftToLease.accept(outcome);
                }
            } else if (error != null) {
                fail(id, Statuses.of(error));
            } else {
                send(answer.apply(outcome).setId(id).build());
            }
        });
    }

    private <T> void answer(long id, CompletableFuture<T> result, Function<T, SessionAnswer.Builder> answer) {
        result.whenComplete((value, error) -> {
            if (error != null) {
                fail(id, Statuses.of(error));
            } else {
                send(answer.apply(value).setId(id).build());
            }
        });
    }

    private void fail(long id, StatusRuntimeException failure) {
        Status status = failure.getStatus();
        SessionError.Builder error = SessionError.newBuilder()
                .setCode(status.getCode().value())
                .setMessage(status.getDescription() == null ? status.getCode().name() : status.getDescription());
        if (failure.getTrailers() != null) {
            String retryAfter = failure.getTrailers().get(Statuses.RETRY_AFTER_MS);
            if (retryAfter != null) {
                error.setRetryAfterMs(Long.parseLong(retryAfter));
            }
        }
        send(SessionAnswer.newBuilder().setId(id).setError(error).build());
    }

    private void send(SessionAnswer answer) {
        if (ended) {
            return;
        }
        outbox.add(answer);
        if (writing.compareAndSet(false, true) && !AnswerBatch.defer(this::write)) {
            write();
        }
    }

    /** Writes what the outbox holds in one message, and again for what came meanwhile. */
    private void write() {
        do {
            writing.set(false);
            SessionResponse.Builder message = SessionResponse.newBuilder();
            for (SessionAnswer a = outbox.poll(); a != null; a = outbox.poll()) {
                message.addAnswers(a);
            }
            if (message.getAnswersCount() > 0) {
                synchronized (stream) {
                    if (!ended && !stream.isCancelled()) {
                        stream.onNext(message.build());
                    }
                }
            }
        } while (!outbox.isEmpty() && writing.compareAndSet(false, true));
    }

    /** The stream ended: the waits it carried are forgotten here; the leases keep their places. */
    private void end() {
        ended = true;
        for (Long id : waiting.keySet()) {
            Acquires.Wait<?> wait = waiting.remove(id);
            if (wait != null) {
                wait.abandon();
            }
        }
        outbox.clear();
    }

    @Override
    public void onError(Throwable t) {
        end();
    }

    /** The client closed its side: the session ends; what it still waited for is forgotten as on an abandon. */
    @Override
    public void onCompleted() {
        end();
        synchronized (stream) {
            if (!stream.isCancelled()) {
                stream.onCompleted();
            }
        }
    }
}
