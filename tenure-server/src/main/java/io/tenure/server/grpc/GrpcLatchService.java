package io.tenure.server.grpc;

import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.tenure.core.latch.LatchView;
import io.tenure.proto.v1.LatchAwaitRequest;
import io.tenure.proto.v1.LatchAwaitResponse;
import io.tenure.proto.v1.LatchCancelRequest;
import io.tenure.proto.v1.LatchCountDownRequest;
import io.tenure.proto.v1.LatchCountDownResponse;
import io.tenure.proto.v1.LatchDescribeRequest;
import io.tenure.proto.v1.LatchDescribeResponse;
import io.tenure.proto.v1.LatchServiceGrpc;
import io.tenure.proto.v1.LatchSetCountRequest;
import io.tenure.proto.v1.LatchSetCountResponse;
import io.tenure.proto.v1.LatchWaiter;
import io.tenure.server.Acquires;
import io.tenure.server.Member;
import io.tenure.server.latch.Latches;

/** The gRPC front end of count-down latches: translates {@code tenure.v1.LatchService} to {@link Latches} and back. */
public final class GrpcLatchService extends LatchServiceGrpc.LatchServiceImplBase {
    /** Its calls that never wait, for {@link CallThreads}: they check their input, propose a command and return. */
    public static final java.util.Set<String> NON_BLOCKING = java.util.Set.of(
            LatchServiceGrpc.getTrySetCountMethod().getFullMethodName(),
            LatchServiceGrpc.getCountDownMethod().getFullMethodName(),
            LatchServiceGrpc.getAwaitMethod().getFullMethodName(),
            LatchServiceGrpc.getCancelMethod().getFullMethodName());

    private final Member member;

    public GrpcLatchService(Member member) {
        this.member = member;
    }

    @Override
    public void trySetCount(LatchSetCountRequest request, StreamObserver<LatchSetCountResponse> observer) {
        GrpcLockService.answer(member.latches().trySetCount(GrpcAuthentication.principal(), request.getName(), request.getCount(), request.getRequestId()), observer,
                set -> setCountResponse(member, set));
    }

    @Override
    public void countDown(LatchCountDownRequest request, StreamObserver<LatchCountDownResponse> observer) {
        GrpcLockService.answer(member.latches().countDown(GrpcAuthentication.principal(), request.getName(), request.getRequestId()), observer,
                down -> countDownResponse(member, down));
    }

    @Override
    public void await(LatchAwaitRequest request, StreamObserver<LatchAwaitResponse> observer) {
        ServerCallStreamObserver<LatchAwaitResponse> call = (ServerCallStreamObserver<LatchAwaitResponse>) observer;
        Acquires.Wait<Latches.Outcome> wait = member.latches().await(GrpcAuthentication.principal(), request.getName(), request.getLeaseId(), request.getTimeoutMs(),
                request.getRequestId());
        call.setOnCancelHandler(wait::abandon);
        wait.outcome().whenComplete((outcome, error) -> {
            if (call.isCancelled()) {
                return; // the lease keeps waiting: the client may wait through another call
            }
            if (error != null) {
                observer.onError(Statuses.of(error));
                return;
            }
            observer.onNext(response(member, outcome));
            observer.onCompleted();
        });
    }

    @Override
    public void cancel(LatchCancelRequest request, StreamObserver<LatchAwaitResponse> observer) {
        GrpcLockService.answer(member.latches().cancel(GrpcAuthentication.principal(), request.getName(), request.getLeaseId(), request.getRequestId()), observer,
                outcome -> response(member, outcome));
    }

    @Override
    public void describe(LatchDescribeRequest request, StreamObserver<LatchDescribeResponse> observer) {
        GrpcLockService.answer(member.latches().read(GrpcAuthentication.principal(), request.getName()), observer, read -> {
            LatchDescribeResponse.Builder response = LatchDescribeResponse.newBuilder()
                    .setHeader(member.header().toBuilder().setRevision(read.revision())).setName(request.getName());
            LatchView view = read.latch();
            if (view != null) {
                response.setExists(true).setCount(view.count()).setInitialCount(view.initialCount())
                        .setCreateRevision(view.createRevision()).setModRevision(view.modRevision());
                for (LatchView.Waiter w : view.waiting()) {
                    response.addWaiting(LatchWaiter.newBuilder().setLeaseId(w.leaseId()).setClientId(w.clientId())
                            .setArrivedRevision(w.arrivedAt()));
                }
            }
            return response.build();
        });
    }

    static LatchSetCountResponse setCountResponse(Member member, Latches.SetOutcome set) {
        return LatchSetCountResponse.newBuilder().setHeader(member.header()).setName(set.name()).setSet(set.set()).setCount(set.count()).build();
    }

    static LatchCountDownResponse countDownResponse(Member member, Latches.CountDownOutcome down) {
        return LatchCountDownResponse.newBuilder().setHeader(member.header()).setName(down.name()).setCount(down.count())
                .setCountedDown(down.countedDown()).build();
    }

    static LatchAwaitResponse response(Member member, Latches.Outcome outcome) {
        return LatchAwaitResponse.newBuilder()
                .setHeader(member.header())
                .setName(outcome.name())
                .setOpen(outcome.open())
                .setRevision(outcome.revision())
                .setCount(outcome.count())
                .build();
    }
}
