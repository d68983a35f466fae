package io.tenure.server.grpc;

import com.google.protobuf.ByteString;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.tenure.proto.v1.ListCancelRequest;
import io.tenure.proto.v1.ListPopRequest;
import io.tenure.proto.v1.ListPopResponse;
import io.tenure.proto.v1.ListPushRequest;
import io.tenure.proto.v1.ListPushResponse;
import io.tenure.proto.v1.ListRangeRequest;
import io.tenure.proto.v1.ListRangeResponse;
import io.tenure.proto.v1.ListServiceGrpc;
import io.tenure.server.Acquires;
import io.tenure.server.Member;
import io.tenure.server.list.Lists;

import java.util.concurrent.CompletableFuture;

/**
 * The gRPC front end of lists: translates {@code tenure.v1.ListService} to {@link Lists} and back.
 * A pop whose call was cancelled before its item could be sent gives the item back.
 */
public final class GrpcListService extends ListServiceGrpc.ListServiceImplBase {
    /** Its calls that never wait, for {@link CallThreads}: they check their input, propose a command and return. */
    public static final java.util.Set<String> NON_BLOCKING = java.util.Set.of(
            ListServiceGrpc.getPushMethod().getFullMethodName(),
            ListServiceGrpc.getPopMethod().getFullMethodName(),
            ListServiceGrpc.getCancelMethod().getFullMethodName());

    private final Member member;

    public GrpcListService(Member member) {
        this.member = member;
    }

    @Override
    public void push(ListPushRequest request, StreamObserver<ListPushResponse> observer) {
        GrpcLockService.answer(member.lists().push(GrpcAuthentication.principal(), request.getName(), request.getValue().toByteArray(), request.getLeft(),
                request.getRequestId()), observer, pushed -> ListPushResponse.newBuilder().setHeader(member.header())
                .setName(pushed.name()).setLength(pushed.length()).setHandedTo(pushed.handedTo()).build());
    }

    @Override
    public void pop(ListPopRequest request, StreamObserver<ListPopResponse> observer) {
        ServerCallStreamObserver<ListPopResponse> call = (ServerCallStreamObserver<ListPopResponse>) observer;
        Lists lists = member.lists();
        CompletableFuture<Lists.Outcome> outcome;
        if (request.getLeaseId() == 0 && request.getTimeoutMs() == 0) {
            outcome = lists.popNow(GrpcAuthentication.principal(), request.getName(), request.getLeft(), request.getRequestId());
        } else {
            Acquires.Wait<Lists.Outcome> wait = lists.pop(GrpcAuthentication.principal(), request.getName(), request.getLeft(), request.getLeaseId(),
                    request.getTimeoutMs(), request.getRequestId());
            call.setOnCancelHandler(() -> {
                wait.abandon();
                if (!wait.outcome().isDone()) {
                    // Parked: withdraw the wait through the log, or give back what a push handed it meanwhile.
                    lists.abandon(request.getName(), request.getLeaseId(), request.getRequestId(), null);
                }
            });
            outcome = wait.outcome();
        }
        outcome.whenComplete((popped, error) -> {
            if (call.isCancelled()) {
                if (popped != null && popped.popped()) {
                    // Nobody will read this answer: the item must not vanish with it.
                    lists.abandon(request.getName(), request.getLeaseId(), request.getRequestId(), popped);
                }
                return;
            }
            if (error != null) {
                observer.onError(Statuses.of(error));
                return;
            }
            observer.onNext(response(member, popped));
            observer.onCompleted();
        });
    }

    @Override
    public void cancel(ListCancelRequest request, StreamObserver<ListPopResponse> observer) {
        GrpcLockService.answer(member.lists().cancel(GrpcAuthentication.principal(), request.getName(), request.getLeaseId(), request.getRequestId()), observer,
                outcome -> response(member, outcome));
    }

    @Override
    public void range(ListRangeRequest request, StreamObserver<ListRangeResponse> observer) {
        GrpcLockService.answer(member.lists().read(GrpcAuthentication.principal(), request.getName(), request.getStart(), request.getStop()), observer, read -> {
            ListRangeResponse.Builder response = ListRangeResponse.newBuilder()
                    .setHeader(member.header().toBuilder().setRevision(read.revision())).setName(read.name()).setLength(read.length())
                    .addAllWaitingLeases(read.waiting());
            read.values().forEach(v -> response.addValues(ByteString.copyFrom(v)));
            return response.build();
        });
    }

    static ListPopResponse response(Member member, Lists.Outcome outcome) {
        return ListPopResponse.newBuilder().setHeader(member.header()).setName(outcome.name()).setPopped(outcome.popped())
                .setValue(ByteString.copyFrom(outcome.value())).build();
    }
}
