package io.tenure.server.grpc;

import com.google.protobuf.ByteString;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.tenure.core.election.ElectionView;
import io.tenure.proto.v1.CampaignCancelRequest;
import io.tenure.proto.v1.CampaignRequest;
import io.tenure.proto.v1.CampaignResponse;
import io.tenure.proto.v1.Candidate;
import io.tenure.proto.v1.ElectionServiceGrpc;
import io.tenure.proto.v1.LeaderRequest;
import io.tenure.proto.v1.LeaderResponse;
import io.tenure.proto.v1.ProclaimRequest;
import io.tenure.proto.v1.ProclaimResponse;
import io.tenure.proto.v1.ResignRequest;
import io.tenure.proto.v1.ResignResponse;
import io.tenure.server.Acquires;
import io.tenure.server.Member;
import io.tenure.server.election.Elections;

/** The gRPC front end of leader elections: translates {@code tenure.v1.ElectionService} to {@link Elections} and back. */
public final class GrpcElectionService extends ElectionServiceGrpc.ElectionServiceImplBase {
    /** Its calls that never wait, for {@link CallThreads}: they check their input, propose a command and return. */
    public static final java.util.Set<String> NON_BLOCKING = java.util.Set.of(
            ElectionServiceGrpc.getCampaignMethod().getFullMethodName(),
            ElectionServiceGrpc.getProclaimMethod().getFullMethodName(),
            ElectionServiceGrpc.getResignMethod().getFullMethodName(),
            ElectionServiceGrpc.getCancelMethod().getFullMethodName());

    private final Member member;

    public GrpcElectionService(Member member) {
        this.member = member;
    }

    @Override
    public void campaign(CampaignRequest request, StreamObserver<CampaignResponse> observer) {
        ServerCallStreamObserver<CampaignResponse> call = (ServerCallStreamObserver<CampaignResponse>) observer;
        Acquires.Wait<Elections.Outcome> wait = member.elections().campaign(GrpcAuthentication.principal(), request.getName(), request.getLeaseId(),
                request.getValue().toByteArray(), request.getTimeoutMs(), request.getRequestId());
        call.setOnCancelHandler(wait::abandon);
        wait.outcome().whenComplete((outcome, error) -> {
            if (call.isCancelled()) {
                return; // leadership stays with the lease: the client may hold it through another call
            }
            if (error != null) {
                observer.onError(Statuses.of(error));
                return;
            }
            observer.onNext(campaignResponse(member, outcome));
            observer.onCompleted();
        });
    }

    @Override
    public void proclaim(ProclaimRequest request, StreamObserver<ProclaimResponse> observer) {
        GrpcLockService.answer(member.elections().proclaim(GrpcAuthentication.principal(), request.getName(), request.getLeaseId(), request.getFencingToken(),
                request.getValue().toByteArray()), observer,
                revision -> proclaimResponse(member, revision));
    }

    @Override
    public void resign(ResignRequest request, StreamObserver<ResignResponse> observer) {
        GrpcLockService.answer(member.elections().resign(GrpcAuthentication.principal(), request.getName(), request.getLeaseId(), request.getFencingToken()), observer,
                next -> resignResponse(member, next));
    }

    @Override
    public void cancel(CampaignCancelRequest request, StreamObserver<CampaignResponse> observer) {
        GrpcLockService.answer(member.elections().cancel(GrpcAuthentication.principal(), request.getName(), request.getLeaseId(), request.getRequestId()), observer,
                outcome -> campaignResponse(member, outcome));
    }

    @Override
    public void leader(LeaderRequest request, StreamObserver<LeaderResponse> observer) {
        GrpcLockService.answer(member.elections().leader(GrpcAuthentication.principal(), request.getName()), observer, read -> leaderResponse(member, request.getName(), read));
    }

    static LeaderResponse leaderResponse(Member member, String name, Elections.Read read) {
        LeaderResponse.Builder response = LeaderResponse.newBuilder()
                .setHeader(member.header().toBuilder().setRevision(read.revision()))
                .setName(name)
                .setLeaderTtlRemainingMs(-1);
        ElectionView view = read.election();
        if (view != null) {
            response.setHasLeader(true).setLeaseId(view.leaderLeaseId()).setLeader(view.leader()).setFencingToken(view.fencingToken())
                    .setValue(ByteString.copyFrom(view.value())).setValueRevision(view.valueRevision())
                    .setLeaderTtlRemainingMs(member.leases().remainingMillis(view.leaderLeaseId()));
            for (ElectionView.Candidate c : view.candidates()) {
                response.addCandidates(Candidate.newBuilder().setLeaseId(c.leaseId()).setClientId(c.clientId())
                        .setJoinedRevision(c.joinedAt()));
            }
        }
        return response.build();
    }

    static ProclaimResponse proclaimResponse(Member member, long revision) {
        return ProclaimResponse.newBuilder().setHeader(member.header()).setRevision(revision).build();
    }

    static ResignResponse resignResponse(Member member, long nextFencingToken) {
        return ResignResponse.newBuilder().setHeader(member.header()).setNextFencingToken(nextFencingToken).build();
    }

    static CampaignResponse campaignResponse(Member member, Elections.Outcome outcome) {
        return CampaignResponse.newBuilder()
                .setHeader(member.header())
                .setName(outcome.name())
                .setElected(outcome.elected())
                .setFencingToken(outcome.fencingToken())
                .setLeader(outcome.leader())
                .setCandidates(outcome.candidates())
                .build();
    }
}
