package io.tenure.server.grpc;

import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.tenure.proto.v1.ClusterServiceGrpc;
import io.tenure.proto.v1.MemberAddRequest;
import io.tenure.proto.v1.MemberListRequest;
import io.tenure.proto.v1.MemberListResponse;
import io.tenure.proto.v1.MemberRemoveRequest;
import io.tenure.proto.v1.ResponseHeader;
import io.tenure.proto.v1.SnapshotChunk;
import io.tenure.proto.v1.SnapshotSaveRequest;
import io.tenure.server.Member;
import io.tenure.server.NotServingException;

import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * Cluster administration over gRPC. Configuration changes block until Raft commits them (the
 * leader first brings a new member up to date), so they run on their own executor, as does
 * the copy of a backup ({@link #snapshotSave}).
 */
public final class GrpcClusterService extends ClusterServiceGrpc.ClusterServiceImplBase {
    private final Member member;
    private final Executor admin;
    private final io.tenure.server.security.Gate gate;

    public GrpcClusterService(Member member, Executor admin, io.tenure.server.security.Gate gate) {
        this.member = member;
        this.admin = admin;
        this.gate = gate;
    }

    /** While authentication is on, changing the members and copying the whole state (users' hashes too) need the role root. */
    private boolean asRoot(String what, StreamObserver<?> observer) {
        try {
            gate.requireRoot(GrpcAuthentication.principal(), what);
            return true;
        } catch (io.tenure.server.PermissionDenied denied) {
            observer.onError(Statuses.of(denied));
            return false;
        }
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
        if (!asRoot("add members", observer)) {
            return;
        }
        admin.execute(() -> reply(observer, () -> member.addMember(request.getName(), request.getPeerAddress())));
    }

    @Override
    public void memberRemove(MemberRemoveRequest request, StreamObserver<MemberListResponse> observer) {
        if (!asRoot("remove members", observer)) {
            return;
        }
        admin.execute(() -> reply(observer, () -> member.removeMember(request.getName())));
    }

    /**
     * A backup of the applied state: after a read barrier (so it holds every write acknowledged
     * before the call), a consistent copy streamed in chunks; see {@link SnapshotSender}.
     */
    @Override
    public void snapshotSave(SnapshotSaveRequest request, StreamObserver<SnapshotChunk> observer) {
        if (!asRoot("save a snapshot of the whole state", observer)) {
            return;
        }
        SnapshotSender sender = new SnapshotSender(member, (ServerCallStreamObserver<SnapshotChunk>) observer);
        member.readBarrier().whenComplete((ignored, error) -> {
            if (error != null) {
                sender.fail(error);
                return;
            }
            try {
                admin.execute(() -> sender.start(header()));
            } catch (RejectedExecutionException closing) {
                sender.fail(new NotServingException("the member is shutting down; take the backup from another member"));
            }
        });
    }

    private ResponseHeader header() {
        return member.header();
    }

    private void reply(StreamObserver<MemberListResponse> observer, Callable<List<io.tenure.proto.v1.Member>> members) {
        try {
            List<io.tenure.proto.v1.Member> list = members.call();
            observer.onNext(MemberListResponse.newBuilder()
                    .setHeader(header())
                    .addAllMembers(list)
                    .build());
            observer.onCompleted();
        } catch (Exception e) {
            observer.onError(Statuses.of(e));
        }
    }
}
