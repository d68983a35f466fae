package io.tenure.server.grpc;

import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.tenure.core.barrier.DoubleBarrierView;
import io.tenure.proto.v1.BarrierParty;
import io.tenure.proto.v1.DoubleBarrierCancelRequest;
import io.tenure.proto.v1.DoubleBarrierDescribeRequest;
import io.tenure.proto.v1.DoubleBarrierDescribeResponse;
import io.tenure.proto.v1.DoubleBarrierEnterRequest;
import io.tenure.proto.v1.DoubleBarrierEnterResponse;
import io.tenure.proto.v1.DoubleBarrierLeaveRequest;
import io.tenure.proto.v1.DoubleBarrierLeaveResponse;
import io.tenure.proto.v1.DoubleBarrierServiceGrpc;
import io.tenure.server.Acquires;
import io.tenure.server.Member;
import io.tenure.server.barrier.DoubleBarriers;

import java.util.List;
import java.util.function.Function;

/** The gRPC front end of double barriers: translates {@code tenure.v1.DoubleBarrierService} to {@link DoubleBarriers} and back. */
public final class GrpcDoubleBarrierService extends DoubleBarrierServiceGrpc.DoubleBarrierServiceImplBase {
    /** Its calls that never wait, for {@link CallThreads}: they check their input, propose a command and return. */
    public static final java.util.Set<String> NON_BLOCKING = java.util.Set.of(
            DoubleBarrierServiceGrpc.getEnterMethod().getFullMethodName(),
            DoubleBarrierServiceGrpc.getLeaveMethod().getFullMethodName(),
            DoubleBarrierServiceGrpc.getCancelMethod().getFullMethodName());

    private final Member member;

    public GrpcDoubleBarrierService(Member member) {
        this.member = member;
    }

    @Override
    public void enter(DoubleBarrierEnterRequest request, StreamObserver<DoubleBarrierEnterResponse> observer) {
        answer(member.doubleBarriers().enter(GrpcAuthentication.principal(), request.getName(), request.getLeaseId(), request.getParties(), request.getTimeoutMs(),
                request.getRequestId()), observer, entry -> entry(member, entry));
    }

    @Override
    public void leave(DoubleBarrierLeaveRequest request, StreamObserver<DoubleBarrierLeaveResponse> observer) {
        answer(member.doubleBarriers().leave(GrpcAuthentication.principal(), request.getName(), request.getLeaseId(), request.getTimeoutMs()), observer, exit -> exit(member, exit));
    }

    /** Answers a wait when the log decides it; a caller that went away leaves its lease's place as it is. */
    private static <O extends Acquires.Outcome, R> void answer(Acquires.Wait<O> wait, StreamObserver<R> observer, Function<O, R> response) {
        ServerCallStreamObserver<R> call = (ServerCallStreamObserver<R>) observer;
        call.setOnCancelHandler(wait::abandon);
        wait.outcome().whenComplete((outcome, error) -> {
            if (call.isCancelled()) {
                return; // the lease keeps its place: the client may wait through another call
            }
            if (error != null) {
                observer.onError(Statuses.of(error));
                return;
            }
            observer.onNext(response.apply(outcome));
            observer.onCompleted();
        });
    }

    @Override
    public void cancel(DoubleBarrierCancelRequest request, StreamObserver<DoubleBarrierEnterResponse> observer) {
        GrpcLockService.answer(member.doubleBarriers().cancel(GrpcAuthentication.principal(), request.getName(), request.getLeaseId(), request.getRequestId()), observer,
                entry -> entry(member, entry));
    }

    @Override
    public void describe(DoubleBarrierDescribeRequest request, StreamObserver<DoubleBarrierDescribeResponse> observer) {
        GrpcLockService.answer(member.doubleBarriers().read(GrpcAuthentication.principal(), request.getName()), observer, read -> {
            DoubleBarrierDescribeResponse.Builder response = DoubleBarrierDescribeResponse.newBuilder()
                    .setHeader(member.header().toBuilder().setRevision(read.revision())).setName(request.getName());
            DoubleBarrierView view = read.barrier();
            if (view != null) {
                response.setExists(true).setParties(view.parties()).setRevision(view.revision())
                        .addAllEntering(parties(view.entering())).addAllInside(parties(view.inside()))
                        .addAllLeaving(parties(view.leaving())).addAllLeft(parties(view.left()));
            }
            return response.build();
        });
    }

    private static List<BarrierParty> parties(List<DoubleBarrierView.Party> parties) {
        return parties.stream().map(p -> BarrierParty.newBuilder().setLeaseId(p.leaseId()).setClientId(p.clientId())
                .setArrivedRevision(p.at()).build()).toList();
    }

    static DoubleBarrierEnterResponse entry(Member member, DoubleBarriers.Entry entry) {
        return DoubleBarrierEnterResponse.newBuilder()
                .setHeader(member.header())
                .setName(entry.name())
                .setEntered(entry.entered())
                .setRevision(entry.revision())
                .setEntering(entry.entering())
                .setInside(entry.inside())
                .setParties(entry.parties())
                .build();
    }

    static DoubleBarrierLeaveResponse exit(Member member, DoubleBarriers.Exit exit) {
        return DoubleBarrierLeaveResponse.newBuilder()
                .setHeader(member.header())
                .setName(exit.name())
                .setLeft(exit.left())
                .setRevision(exit.revision())
                .setInside(exit.inside())
                .setParties(exit.parties())
                .build();
    }
}
