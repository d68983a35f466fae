package io.tenure.client;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.MethodDescriptor;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One unary call that starts at the preferred endpoint and, on {@code UNAVAILABLE}, moves on to
 * the next, trying each endpoint at most once. Only safe for requests the server treats
 * idempotently, which every Tenure unary call is (grants carry a client-chosen lease id, lock
 * retries keep their place). Cancelling the returned future cancels the call in flight.
 */
final class FailoverCall<Req, Resp> {
    private final Endpoints endpoints;
    private final MethodDescriptor<Req, Resp> method;
    private final Req request;
    private final Duration deadline;
    private final CompletableFuture<Resp> result = new CompletableFuture<>();
    private final AtomicReference<ClientCall<Req, Resp>> inFlight = new AtomicReference<>();
    /** Touched only by the chain of attempts, which runs one at a time. */
    private int attempts;

    private FailoverCall(Endpoints endpoints, MethodDescriptor<Req, Resp> method, Req request, Duration deadline) {
        this.endpoints = endpoints;
        this.method = method;
        this.request = request;
        this.deadline = deadline;
    }

    /**
     * @param deadline how long each attempt may take, or null for no limit (a lock wait bounded
     *                 only by the lease, which the caller cancels on loss)
     */
    static <Req, Resp> CompletableFuture<Resp> start(
            Endpoints endpoints, MethodDescriptor<Req, Resp> method, Req request, Duration deadline) {
        FailoverCall<Req, Resp> call = new FailoverCall<>(endpoints, method, request, deadline);
        call.result.whenComplete((response, failure) -> {
            if (call.result.isCancelled()) {
                ClientCall<Req, Resp> current = call.inFlight.get();
                if (current != null) {
                    current.cancel("cancelled by the caller", null);
                }
            }
        });
        call.attempt(endpoints.preferred());
        return call.result;
    }

    private void attempt(int endpoint) {
        attempts++;
        CallOptions options = deadline == null
                ? CallOptions.DEFAULT
                : CallOptions.DEFAULT.withDeadlineAfter(deadline.toNanos(), TimeUnit.NANOSECONDS);
        ClientCall<Req, Resp> call = endpoints.channel(endpoint).newCall(method, options);
        inFlight.set(call);
        if (result.isDone()) {
            return; // cancelled between attempts
        }
        ClientCalls.asyncUnaryCall(call, request, new StreamObserver<>() {
            @Override
            public void onNext(Resp response) {
                result.complete(response);
            }

            @Override
            public void onError(Throwable failure) {
                if (result.isDone()) {
                    return;
                }
                if (StatusErrors.worthFailover(failure) && attempts < endpoints.size()) {
                    endpoints.failedOver(endpoint);
                    attempt(endpoints.next(endpoint));
                } else {
                    result.completeExceptionally(StatusErrors.toException(failure, endpoints.target(endpoint)));
                }
            }

            @Override
            public void onCompleted() {
                // A unary call delivers its response through onNext; nothing left to do.
            }
        });
    }
}
