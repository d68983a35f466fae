package io.tenure.it;

import io.grpc.stub.StreamObserver;
import io.tenure.proto.v1.LeaseGrantRequest;
import io.tenure.proto.v1.LeaseKeepAliveRequest;
import io.tenure.proto.v1.LeaseKeepAliveResponse;
import io.tenure.testing.MemberProcess;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** A lease driven by hand over raw gRPC: granted, renewed exactly when the test says, never in the background. */
final class RawLease {
    /** One acknowledged renewal: when its request left and when its answer arrived ({@link System#nanoTime()}). */
    record Renewal(long sentNanos, long ackNanos, long ttlMs) {
    }

    private RawLease() {
    }

    /** Grants a lease with a server-chosen id. */
    static long grant(MemberProcess member, Duration ttl, String clientId) {
        return member.blocking().leaseGrant(LeaseGrantRequest.newBuilder().setClientId(clientId)
                .setTtlMs(ttl.toMillis()).setTtl(Math.max(1, (ttl.toMillis() + 999) / 1000)).build()).getId();
    }

    /** Sends one keep-alive on a new stream, waits for its acknowledgement, then closes the stream. */
    static Renewal keepAliveOnce(MemberProcess member, long leaseId, Duration limit) throws InterruptedException {
        CompletableFuture<LeaseKeepAliveResponse> answer = new CompletableFuture<>();
        StreamObserver<LeaseKeepAliveRequest> requests = member.async().leaseKeepAlive(new StreamObserver<>() {
            @Override
            public void onNext(LeaseKeepAliveResponse response) {
                answer.complete(response);
            }

            @Override
            public void onError(Throwable t) {
                answer.completeExceptionally(t);
            }

            @Override
            public void onCompleted() {
                answer.completeExceptionally(new IllegalStateException("keep-alive stream ended without an answer"));
            }
        });
        long sent = System.nanoTime();
        requests.onNext(LeaseKeepAliveRequest.newBuilder().setId(leaseId).build());
        try {
            LeaseKeepAliveResponse response = answer.get(limit.toMillis(), TimeUnit.MILLISECONDS);
            long acked = System.nanoTime();
            requests.onCompleted();
            long ttlMs = response.getTtlMs() > 0 ? response.getTtlMs() : TimeUnit.SECONDS.toMillis(response.getTtl());
            return new Renewal(sent, acked, ttlMs);
        } catch (ExecutionException | TimeoutException e) {
            requests.onError(e);
            throw new AssertionError("keep-alive of lease " + leaseId + " on " + member.name() + " not acknowledged: " + e, e);
        }
    }
}
