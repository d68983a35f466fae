package io.tenure.testing;

import io.grpc.Channel;
import io.grpc.stub.StreamObserver;
import io.tenure.proto.v1.DescribeRequest;
import io.tenure.proto.v1.LockRequest;
import io.tenure.proto.v1.LockResponse;
import io.tenure.proto.v1.LockServiceGrpc;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A lease put in a lock's queue over raw gRPC, the way a client that parked would: a {@code Lock}
 * with no time limit, whose answer comes when the lease is granted (or its wait ends).
 */
public final class Waiters {
    private Waiters() {
    }

    /**
     * Queues {@code lease} for lock {@code name} through {@code channel} and returns once
     * {@code Describe} through the same channel lists the lease among the waiters.
     *
     * @return the answer of the waiting call: the grant, or the failure that ended the wait
     * @throws AssertionError when the lease is not queued within {@code limit}
     */
    public static CompletableFuture<LockResponse> queue(Channel channel, String name, long lease, Duration limit) {
        CompletableFuture<LockResponse> answer = new CompletableFuture<>();
        LockServiceGrpc.newStub(channel).lock(LockRequest.newBuilder().setName(name).setLeaseId(lease).setTimeoutMs(-1).build(),
                new StreamObserver<>() {
                    @Override
                    public void onNext(LockResponse value) {
                        answer.complete(value);
                    }

                    @Override
                    public void onError(Throwable t) {
                        answer.completeExceptionally(t);
                    }

                    @Override
                    public void onCompleted() {
                    }
                });
        LockServiceGrpc.LockServiceBlockingStub describe = LockServiceGrpc.newBlockingStub(channel);
        Await.PROCESSES.until(name + " has waiter " + lease, limit, () -> describe.withDeadlineAfter(5, TimeUnit.SECONDS)
                .describe(DescribeRequest.newBuilder().setName(name).build()).getLock().getWaitersList().stream()
                .anyMatch(w -> w.getLeaseId() == lease));
        return answer;
    }
}
