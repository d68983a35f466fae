package io.tenure.client;

import io.grpc.Status;
import io.tenure.proto.v1.LeaseGrantBatchRequest;
import io.tenure.proto.v1.LeaseGrantBatchResponse;
import io.tenure.proto.v1.LeaseGrantRequest;
import io.tenure.proto.v1.LeaseGrantResponse;
import io.tenure.proto.v1.LeaseGrantResult;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * Lease grants asked for together travel together. A grant goes out at once while fewer than
 * {@link #CALLS_IN_FLIGHT} grant calls are unanswered; beyond that it waits, and the grants that
 * waited go out in one {@code LeaseGrantBatch} call as soon as a call is answered (or once
 * {@link #MAX_BATCH} of them wait), each answered on its own. So a lone grant is never delayed,
 * there is no timer, and the batches are as large as the backlog: a client granting 100,000
 * leases with hundreds in flight makes a few hundred calls, not 100,000. A member too old to know
 * {@code LeaseGrantBatch} ({@code UNIMPLEMENTED}) gets single grants from then on.
 *
 * <p>Retries are the calls' own ({@link FailoverCall}): every grant carries the lease id chosen
 * here, so a batch retried after {@code UNAVAILABLE}, or after the member shed it, grants each
 * lease once.
 */
final class GrantBatches {
    /** Grant calls unanswered at once before grants start to wait for the next batch. */
    static final int CALLS_IN_FLIGHT = 2;
    /** A batch this large is sent at once (a member takes at most 10,000 per call). */
    static final int MAX_BATCH = 1_000;

    private record Pending(LeaseGrantRequest request, CompletableFuture<LeaseGrantResponse> answer) {}

    private final Function<LeaseGrantRequest, CompletableFuture<LeaseGrantResponse>> single;
    private final Function<LeaseGrantBatchRequest, CompletableFuture<LeaseGrantBatchResponse>> batch;
    /** Grants waiting for a call. Guarded by this. */
    private List<Pending> waiting = new ArrayList<>();
    /** Grant calls unanswered. Guarded by this. */
    private int inFlight;
    private volatile boolean batchesRefused;

    GrantBatches(Function<LeaseGrantRequest, CompletableFuture<LeaseGrantResponse>> single,
                 Function<LeaseGrantBatchRequest, CompletableFuture<LeaseGrantBatchResponse>> batch) {
        this.single = single;
        this.batch = batch;
    }

    /** Grants the lease of {@code request}, alone or with others asked for meanwhile. */
    CompletableFuture<LeaseGrantResponse> grant(LeaseGrantRequest request) {
        Pending pending = new Pending(request, new CompletableFuture<>());
        List<Pending> now;
        synchronized (this) {
            waiting.add(pending);
            if (inFlight >= CALLS_IN_FLIGHT && waiting.size() < MAX_BATCH) {
                return pending.answer; // goes with the next batch
            }
            now = takeLocked();
        }
        send(now);
        return pending.answer;
    }

    /** A call was answered: the grants that waited meanwhile go now, together. */
    private void answered() {
        List<Pending> next;
        synchronized (this) {
            inFlight--;
            if (waiting.isEmpty()) {
                return;
            }
            next = takeLocked();
        }
        send(next);
    }

    private List<Pending> takeLocked() {
        List<Pending> due = waiting;
        waiting = new ArrayList<>();
        inFlight++;
        return due;
    }

    /** One call for {@code due} (counted in flight by the caller); answered() when it is answered. */
    private void send(List<Pending> due) {
        if (due.size() == 1 || batchesRefused) {
            sendAlone(due);
            return;
        }
        LeaseGrantBatchRequest.Builder request = LeaseGrantBatchRequest.newBuilder();
        due.forEach(p -> request.addGrants(p.request));
        batch.apply(request.build()).whenComplete((response, failure) -> {
            if (failure != null) {
                if (Status.fromThrowable(cause(failure)).getCode() == Status.Code.UNIMPLEMENTED) {
                    batchesRefused = true; // a member from before LeaseGrantBatch: one by one
                    sendAlone(due);
                    return;
                }
                due.forEach(p -> p.answer.completeExceptionally(failure));
            } else {
                answer(due, response);
            }
            answered();
        });
    }

    /** Each of {@code due} in a call of its own; counts as one call in flight until all are answered. */
    private void sendAlone(List<Pending> due) {
        java.util.concurrent.atomic.AtomicInteger left = new java.util.concurrent.atomic.AtomicInteger(due.size());
        for (Pending pending : due) {
            single.apply(pending.request).whenComplete((response, failure) -> {
                if (failure != null) {
                    pending.answer.completeExceptionally(failure);
                } else {
                    pending.answer.complete(response);
                }
                if (left.decrementAndGet() == 0) {
                    answered();
                }
            });
        }
    }

    private static void answer(List<Pending> due, LeaseGrantBatchResponse response) {
        for (int i = 0; i < due.size(); i++) {
            CompletableFuture<LeaseGrantResponse> answer = due.get(i).answer;
            if (i >= response.getResultsCount()) {
                answer.completeExceptionally(new TenureException("the member answered " + response.getResultsCount()
                        + " of " + due.size() + " grants of a batch"));
                continue;
            }
            LeaseGrantResult result = response.getResults(i);
            if (result.hasGranted()) {
                answer.complete(result.getGranted().toBuilder().setHeader(response.getHeader()).build());
            } else {
                Status status = refusal(result);
                answer.completeExceptionally(StatusErrors.toException(status.asRuntimeException(), "the member"));
            }
        }
    }

    private static Status refusal(LeaseGrantResult result) {
        Status.Code code;
        try {
            code = Status.Code.valueOf(result.getErrorCode());
        } catch (IllegalArgumentException unknown) {
            code = Status.Code.UNKNOWN;
        }
        return code.toStatus().withDescription(result.getErrorMessage());
    }

    private static Throwable cause(Throwable failure) {
        Throwable t = failure;
        while ((t instanceof java.util.concurrent.CompletionException || t instanceof TenureException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }
}
