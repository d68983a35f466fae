package io.tenure.server.grpc;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.tenure.proto.v1.LockMode;
import io.tenure.proto.v1.SessionAnswer;
import io.tenure.proto.v1.SessionCall;
import io.tenure.proto.v1.SessionError;
import io.tenure.proto.v1.SessionRequest;
import io.tenure.proto.v1.SessionResponse;
import io.tenure.server.Acquires;
import io.tenure.server.AnswerBatch;
import io.tenure.server.Member;
import io.tenure.server.lock.Locks;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;

/**
 * One client's session stream ({@code LockService.Session}): the calls it carries go to the same
 * member services as their unary RPCs, and their answers go back many to a message. Answers
 * that one applied log entry gives are written together at the end of the entry
 * ({@link AnswerBatch}); others as they come, coalesced with any that arrive while a write is
 * under way.
 *
 * <p>A waiting Lock is the only call that outlives its message. An abandon, or the end of the
 * stream, forgets it here without changing the replicated state, as a cancelled unary Lock does.
 */
final class GrpcSession implements StreamObserver<SessionRequest> {
    private final Member member;
    private final GrpcLockService answers;
    private final ServerCallStreamObserver<SessionResponse> stream;
    /** The Lock calls still waiting, by call id. */
    private final Map<Long, Acquires.Wait<Locks.Outcome>> waiting = new ConcurrentHashMap<>();
    private final Queue<SessionAnswer> outbox = new ConcurrentLinkedQueue<>();
    /** Set while a write of the outbox is deferred or under way. */
    private final AtomicBoolean writing = new AtomicBoolean();
    private volatile boolean ended;

    GrpcSession(Member member, GrpcLockService answers, ServerCallStreamObserver<SessionResponse> stream) {
        this.member = member;
        this.answers = answers;
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
            Acquires.Wait<Locks.Outcome> wait = waiting.remove(call.getAbandon());
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
            fail(id, Statuses.invalid("call: call " + id + " names no request (lock, try_lock, unlock or lock_cancel)"));
            return;
        }
        if (!member.rateGuard().tryAdmit()) {
            fail(id, Statuses.of(member.rateGuard().refusal()));
            return;
        }
        switch (call.getCallCase()) {
            case LOCK -> {
                String badMode = GrpcLockService.badMode(call.getLock().getModeValue());
                if (badMode != null) {
                    fail(id, Statuses.invalid(badMode));
                    return;
                }
                Acquires.Wait<Locks.Outcome> wait = member.locks().lock(call.getLock().getName(), call.getLock().getLeaseId(),
                        call.getLock().getMetadata().toByteArray(), call.getLock().getTimeoutMs(), call.getLock().getRequestId(),
                        call.getLock().getEnqueue(), call.getLock().getMode() == LockMode.LOCK_MODE_READ);
                if (!wait.outcome().isDone()) {
                    waiting.put(id, wait);
                    if (ended) {
                        end(); // the stream ended while this call was being started
                    }
                }
                wait.outcome().whenComplete((outcome, error) -> {
                    waiting.remove(id);
                    if (ended && outcome != null && outcome.acquired()) {
                        // Never released here: the client may hold this grant through another call.
                        member.locks().leftToLease(outcome.key(), call.getLock().getLeaseId(), outcome.fencingToken());
                    } else if (error != null) {
                        fail(id, Statuses.of(error));
                    } else {
                        send(SessionAnswer.newBuilder().setId(id).setLock(answers.lockResponse(outcome)).build());
                    }
                });
            }
            case TRY_LOCK -> {
                String badMode = GrpcLockService.badMode(call.getTryLock().getModeValue());
                if (badMode != null) {
                    fail(id, Statuses.invalid(badMode));
                    return;
                }
                answer(id, member.locks().tryLock(call.getTryLock().getName(), call.getTryLock().getLeaseId(),
                        call.getTryLock().getMetadata().toByteArray(), call.getTryLock().getRequestId(),
                        call.getTryLock().getMode() == LockMode.LOCK_MODE_READ), o -> SessionAnswer.newBuilder().setTryLock(answers.tryLockResponse(o)));
            }
            case UNLOCK -> answer(id, member.locks().unlock(call.getUnlock().getKey(), call.getUnlock().getLeaseId(),
                    call.getUnlock().getFencingToken()), next -> SessionAnswer.newBuilder().setUnlock(answers.unlockResponse(next)));
            case LOCK_CANCEL -> answer(id, member.locks().cancel(call.getLockCancel().getName(), call.getLockCancel().getLeaseId(),
                            call.getLockCancel().getRequestId()),
                    o -> SessionAnswer.newBuilder().setLockCancel(answers.lockCancelResponse(o)));
            default -> throw new IllegalStateException("unhandled call " + call.getCallCase());
        }
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
            Acquires.Wait<Locks.Outcome> wait = waiting.remove(id);
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
