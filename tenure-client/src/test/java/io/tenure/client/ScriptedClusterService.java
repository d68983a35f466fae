package io.tenure.client;

import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.tenure.proto.v1.ClusterServiceGrpc;
import io.tenure.proto.v1.Member;
import io.tenure.proto.v1.MemberAddRequest;
import io.tenure.proto.v1.MemberListRequest;
import io.tenure.proto.v1.MemberListResponse;
import io.tenure.proto.v1.MemberRemoveRequest;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * A ClusterService over a member list shared by the members of one test, as replication would
 * share it. It refuses the way the real one does (ALREADY_EXISTS, NOT_FOUND, FAILED_PRECONDITION)
 * and can be told to fail before or after making a change.
 */
final class ScriptedClusterService extends ClusterServiceGrpc.ClusterServiceImplBase {
    private final List<Member> members;
    /** When set, every call fails with it and changes nothing. */
    volatile Status failure;
    /** When set, a change is made and then answered with this failure, as if the answer was lost. */
    volatile Status answerLost;
    final BlockingQueue<Object> requests = new LinkedBlockingQueue<>();

    ScriptedClusterService(List<Member> members) {
        this.members = members;
    }

    @Override
    public void memberList(MemberListRequest request, StreamObserver<MemberListResponse> responses) {
        requests.add(request);
        if (failure != null) {
            responses.onError(failure.asRuntimeException());
            return;
        }
        answer(responses);
    }

    @Override
    public void memberAdd(MemberAddRequest request, StreamObserver<MemberListResponse> responses) {
        requests.add(request);
        if (failure != null) {
            responses.onError(failure.asRuntimeException());
            return;
        }
        synchronized (members) {
            for (Member member : members) {
                if (member.getName().equals(request.getName()) || member.getPeerAddress().equals(request.getPeerAddress())) {
                    responses.onError(Status.ALREADY_EXISTS.withDescription("member '" + member.getName()
                            + "' (" + member.getPeerAddress() + ") already exists").asRuntimeException());
                    return;
                }
            }
            members.add(Member.newBuilder().setName(request.getName()).setId(members.size() + 1L)
                    .setPeerAddress(request.getPeerAddress()).build());
        }
        changed(responses);
    }

    @Override
    public void memberRemove(MemberRemoveRequest request, StreamObserver<MemberListResponse> responses) {
        requests.add(request);
        if (failure != null) {
            responses.onError(failure.asRuntimeException());
            return;
        }
        synchronized (members) {
            if (members.stream().noneMatch(m -> m.getName().equals(request.getName()))) {
                responses.onError(Status.NOT_FOUND.withDescription("no member named '" + request.getName() + "'")
                        .asRuntimeException());
                return;
            }
            if (members.size() == 1) {
                responses.onError(Status.FAILED_PRECONDITION.withDescription("member '" + request.getName()
                        + "' is the last voting member").asRuntimeException());
                return;
            }
            members.removeIf(m -> m.getName().equals(request.getName()));
        }
        changed(responses);
    }

    private void changed(StreamObserver<MemberListResponse> responses) {
        Status lost = answerLost;
        if (lost != null) {
            responses.onError(lost.asRuntimeException());
            return;
        }
        answer(responses);
    }

    private void answer(StreamObserver<MemberListResponse> responses) {
        synchronized (members) {
            responses.onNext(MemberListResponse.newBuilder().addAllMembers(members).build());
        }
        responses.onCompleted();
    }
}
