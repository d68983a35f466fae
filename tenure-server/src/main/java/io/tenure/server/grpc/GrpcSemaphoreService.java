package io.tenure.server.grpc;

import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.tenure.core.semaphore.SemaphoreView;
import io.tenure.proto.v1.SemaphoreAcquireRequest;
import io.tenure.proto.v1.SemaphoreAcquireResponse;
import io.tenure.proto.v1.SemaphoreCancelRequest;
import io.tenure.proto.v1.SemaphoreCancelResponse;
import io.tenure.proto.v1.SemaphoreDescribeRequest;
import io.tenure.proto.v1.SemaphoreDescribeResponse;
import io.tenure.proto.v1.SemaphoreHolder;
import io.tenure.proto.v1.SemaphoreReleaseRequest;
import io.tenure.proto.v1.SemaphoreReleaseResponse;
import io.tenure.proto.v1.SemaphoreServiceGrpc;
import io.tenure.proto.v1.SemaphoreState;
import io.tenure.proto.v1.SemaphoreWaiter;
import io.tenure.server.Acquires;
import io.tenure.server.Member;
import io.tenure.server.semaphore.Semaphores;

/** The gRPC front end of semaphores: translates {@code tenure.v1.SemaphoreService} to {@link Semaphores} and back. */
public final class GrpcSemaphoreService extends SemaphoreServiceGrpc.SemaphoreServiceImplBase {
    /** Its calls that never wait, for {@link CallThreads}: they check their input, propose a command and return. */
    public static final java.util.Set<String> NON_BLOCKING = java.util.Set.of(
            SemaphoreServiceGrpc.getAcquireMethod().getFullMethodName(),
            SemaphoreServiceGrpc.getReleaseMethod().getFullMethodName(),
            SemaphoreServiceGrpc.getCancelMethod().getFullMethodName());

    private final Member member;

    public GrpcSemaphoreService(Member member) {
        this.member = member;
    }

    @Override
    public void acquire(SemaphoreAcquireRequest request, StreamObserver<SemaphoreAcquireResponse> observer) {
        ServerCallStreamObserver<SemaphoreAcquireResponse> call = (ServerCallStreamObserver<SemaphoreAcquireResponse>) observer;
        Acquires.Wait<Semaphores.Outcome> wait = member.semaphores().acquire(GrpcAuthentication.principal(), request.getName(), request.getLeaseId(), request.getLimit(),
                request.getPermits(), request.getTimeoutMs(), request.getRequestId(), request.getEnqueue());
        call.setOnCancelHandler(wait::abandon);
        wait.outcome().whenComplete((outcome, error) -> {
            if (call.isCancelled()) {
                return; // a grant stays with the lease: the client may hold it through another call
            }
            if (error != null) {
                observer.onError(Statuses.of(error));
                return;
            }
            observer.onNext(acquireResponse(member, outcome));
            observer.onCompleted();
        });
    }

    @Override
    public void release(SemaphoreReleaseRequest request, StreamObserver<SemaphoreReleaseResponse> observer) {
        GrpcLockService.answer(member.semaphores().release(GrpcAuthentication.principal(), request.getName(), request.getLeaseId(), request.getFencingToken()), observer,
                handedTo -> releaseResponse(member, handedTo));
    }

    @Override
    public void cancel(SemaphoreCancelRequest request, StreamObserver<SemaphoreCancelResponse> observer) {
        GrpcLockService.answer(member.semaphores().cancel(GrpcAuthentication.principal(), request.getName(), request.getLeaseId(), request.getRequestId()), observer,
                outcome -> cancelResponse(member, outcome));
    }

    static SemaphoreAcquireResponse acquireResponse(Member member, Semaphores.Outcome outcome) {
        return SemaphoreAcquireResponse.newBuilder()
                .setHeader(member.header())
                .setName(outcome.name())
                .setAcquired(outcome.acquired())
                .setFencingToken(outcome.fencingToken())
                .setPermits(outcome.permits())
                .setAvailable(outcome.available())
                .setWaiters(outcome.waiters())
                .build();
    }

    static SemaphoreReleaseResponse releaseResponse(Member member, int handedTo) {
        return SemaphoreReleaseResponse.newBuilder().setHeader(member.header()).setHandedTo(handedTo).build();
    }

    static SemaphoreCancelResponse cancelResponse(Member member, Semaphores.Outcome outcome) {
        return SemaphoreCancelResponse.newBuilder()
                .setHeader(member.header())
                .setName(outcome.name())
                .setAcquired(outcome.acquired())
                .setFencingToken(outcome.fencingToken())
                .build();
    }

    @Override
    public void describe(SemaphoreDescribeRequest request, StreamObserver<SemaphoreDescribeResponse> observer) {
        GrpcLockService.answer(member.semaphores().read(GrpcAuthentication.principal(), request.getName()), observer, read -> SemaphoreDescribeResponse.newBuilder()
                .setHeader(member.header().toBuilder().setRevision(read.revision()))
                .setSemaphore(state(request.getName(), read.semaphore()))
                .build());
    }

    static SemaphoreState state(String name, SemaphoreView view) {
        SemaphoreState.Builder state = SemaphoreState.newBuilder().setName(name);
        if (view == null) {
            return state.build();
        }
        state.setExists(true).setLimit(view.limit()).setAvailable(view.available())
                .setCreateRevision(view.createRevision()).setVersion(view.version())
                .setIdleSinceRevision(view.idleSince());
        for (SemaphoreView.Holder h : view.holders()) {
            state.addHolders(SemaphoreHolder.newBuilder().setLeaseId(h.leaseId()).setClientId(h.clientId())
                    .setPermits(h.permits()).setFencingToken(h.fencingToken()));
        }
        for (SemaphoreView.Waiter w : view.waiters()) {
            state.addWaiters(SemaphoreWaiter.newBuilder().setLeaseId(w.leaseId()).setClientId(w.clientId())
                    .setPermits(w.permits()).setJoinedAt(w.joinedAt()));
        }
        return state.build();
    }
}
