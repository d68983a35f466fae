package io.tenure.server.grpc;

import io.grpc.stub.StreamObserver;
import io.tenure.proto.v1.ClusterServiceGrpc;
import io.tenure.proto.v1.MemberAddRequest;
import io.tenure.proto.v1.MemberListRequest;
import io.tenure.proto.v1.MemberListResponse;
import io.tenure.proto.v1.MemberRemoveRequest;
import io.tenure.proto.v1.ResponseHeader;
import io.tenure.server.Member;

import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.Executor;

/**
 * Cluster administration over gRPC. Configuration changes block until Raft commits them (the
 * leader first brings a new member up to date), so they run on their own executor.
 */
public final class GrpcClusterService extends ClusterServiceGrpc.ClusterServiceImplBase {
    private final Member member;
    private final Executor admin;

    public GrpcClusterService(Member member, Executor admin) {
        this.member = member;
        this.admin = admin;
    }

    @Override
    public void memberList(MemberListRequest request, StreamObserver<MemberListResponse> observer) {
        member.readBarrier().whenComplete((ignored, error) -> {
            if (error != null) {
                observer.onError(Statuses.of(error));
                return;
            }
            reply(observer, member::members);
        });
    }

    @Override
    public void memberAdd(MemberAddRequest request, StreamObserver<MemberListResponse> observer) {
        admin.execute(() -> reply(observer, () -> member.addMember(request.getName(), request.getPeerAddress())));
    }

    @Override
    public void memberRemove(MemberRemoveRequest request, StreamObserver<MemberListResponse> observer) {
        admin.execute(() -> reply(observer, () -> member.removeMember(request.getName())));
    }

    private void reply(StreamObserver<MemberListResponse> observer, Callable<List<io.tenure.proto.v1.Member>> members) {
        try {
            List<io.tenure.proto.v1.Member> list = members.call();
            observer.onNext(MemberListResponse.newBuilder()
                    .setHeader(ResponseHeader.newBuilder()
                            .setClusterId(member.clusterId())
                            .setMemberId(member.memberId())
                            .setRevision(member.revision())
                            .setRaftTerm(member.term()))
                    .addAllMembers(list)
                    .build());
            observer.onCompleted();
        } catch (Exception e) {
            observer.onError(Statuses.of(e));
        }
    }
}
