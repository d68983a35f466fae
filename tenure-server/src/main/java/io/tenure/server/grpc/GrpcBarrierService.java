package io.tenure.server.grpc;

import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.tenure.core.barrier.BarrierView;
import io.tenure.proto.v1.BarrierAwaitRequest;
import io.tenure.proto.v1.BarrierAwaitResponse;
import io.tenure.proto.v1.BarrierDescribeRequest;
import io.tenure.proto.v1.BarrierDescribeResponse;
import io.tenure.proto.v1.BarrierLeaveRequest;
import io.tenure.proto.v1.BarrierParty;
import io.tenure.proto.v1.BarrierServiceGrpc;
import io.tenure.server.Acquires;
import io.tenure.server.Member;
import io.tenure.server.barrier.Barriers;

/** The gRPC front end of barriers: translates {@code tenure.v1.BarrierService} to {@link Barriers} and back. */
public final class GrpcBarrierService extends BarrierServiceGrpc.BarrierServiceImplBase {
    /** Its calls that never wait, for {@link CallThreads}: they check their input, propose a command and return. */
    public static final java.util.Set<String> NON_BLOCKING = java.util.Set.of(
            BarrierServiceGrpc.getAwaitMethod().getFullMethodName(),
            BarrierServiceGrpc.getLeaveMethod().getFullMethodName());

    private final Member member;

    public GrpcBarrierService(Member member) {
        this.member = member;
    }

    @Override
    public void await(BarrierAwaitRequest request, StreamObserver<BarrierAwaitResponse> observer) {
        ServerCallStreamObserver<BarrierAwaitResponse> call = (ServerCallStreamObserver<BarrierAwaitResponse>) observer;
        Acquires.Wait<Barriers.Outcome> wait = member.barriers().await(GrpcAuthentication.principal(), request.getName(), request.getLeaseId(), request.getParties(),
                request.getTimeoutMs(), request.getRequestId());
        call.setOnCancelHandler(wait::abandon);
        wait.outcome().whenComplete((outcome, error) -> {
            if (call.isCancelled()) {
                return; // the party keeps its place: the client may wait through another call
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
    public void leave(BarrierLeaveRequest request, StreamObserver<BarrierAwaitResponse> observer) {
        GrpcLockService.answer(member.barriers().leave(GrpcAuthentication.principal(), request.getName(), request.getLeaseId(), request.getRequestId()), observer,
                outcome -> response(member, outcome));
    }

    @Override
    public void describe(BarrierDescribeRequest request, StreamObserver<BarrierDescribeResponse> observer) {
        GrpcLockService.answer(member.barriers().read(GrpcAuthentication.principal(), request.getName()), observer, read -> {
            BarrierDescribeResponse.Builder response = BarrierDescribeResponse.newBuilder()
                    .setHeader(member.header().toBuilder().setRevision(read.revision())).setName(request.getName());
            BarrierView view = read.barrier();
            if (view != null) {
                response.setExists(true).setParties(view.parties());
                for (BarrierView.Party p : view.waiting()) {
                    response.addWaiting(BarrierParty.newBuilder().setLeaseId(p.leaseId()).setClientId(p.clientId())
                            .setArrivedRevision(p.arrivedAt()));
                }
            }
            return response.build();
        });
    }

    static BarrierAwaitResponse response(Member member, Barriers.Outcome outcome) {
        return BarrierAwaitResponse.newBuilder()
                .setHeader(member.header())
                .setName(outcome.name())
                .setReleased(outcome.released())
                .setRevision(outcome.revision())
                .setArrived(outcome.arrived())
                .setParties(outcome.parties())
                .build();
    }
}
