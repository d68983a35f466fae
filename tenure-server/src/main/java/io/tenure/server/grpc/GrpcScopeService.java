package io.tenure.server.grpc;

import com.google.protobuf.ByteString;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.tenure.core.scope.LockScope;
import io.tenure.core.scope.ScopeRequest;
import io.tenure.core.scope.ScopeResult;
import io.tenure.core.scope.ScopeView;
import io.tenure.proto.v1.ByteRange;
import io.tenure.proto.v1.Scope;
import io.tenure.proto.v1.ScopeAcquireRequest;
import io.tenure.proto.v1.ScopeAcquireResponse;
import io.tenure.proto.v1.ScopeBlocker;
import io.tenure.proto.v1.ScopeCancelRequest;
import io.tenure.proto.v1.ScopeCancelResponse;
import io.tenure.proto.v1.ScopeDescribeRequest;
import io.tenure.proto.v1.ScopeDescribeResponse;
import io.tenure.proto.v1.ScopeHolder;
import io.tenure.proto.v1.ScopeMode;
import io.tenure.proto.v1.ScopePart;
import io.tenure.proto.v1.ScopeReleaseRequest;
import io.tenure.proto.v1.ScopeReleaseResponse;
import io.tenure.proto.v1.ScopeServiceGrpc;
import io.tenure.proto.v1.ScopeWaiter;
import io.tenure.server.Member;
import io.tenure.server.RequestRejected;
import io.tenure.server.scope.Scopes;

import java.util.ArrayList;
import java.util.List;

/**
 * The gRPC front end of lock scopes: translates {@code tenure.v1.ScopeService} to {@link Scopes}
 * and back. Bad input is refused naming the field as the request spells it
 * ({@code scopes[1].scope.range.end}); the rules are the service's.
 */
public final class GrpcScopeService extends ScopeServiceGrpc.ScopeServiceImplBase {
    /** Its calls that never wait, for {@link CallThreads}: they check their input, propose a command and return. */
    public static final java.util.Set<String> NON_BLOCKING = java.util.Set.of(
            ScopeServiceGrpc.getAcquireMethod().getFullMethodName(),
            ScopeServiceGrpc.getReleaseMethod().getFullMethodName(),
            ScopeServiceGrpc.getCancelMethod().getFullMethodName());

    private final Member member;

    public GrpcScopeService(Member member) {
        this.member = member;
    }

    @Override
    public void acquire(ScopeAcquireRequest request, StreamObserver<ScopeAcquireResponse> observer) {
        ServerCallStreamObserver<ScopeAcquireResponse> call = (ServerCallStreamObserver<ScopeAcquireResponse>) observer;
        List<ScopeRequest> scopes;
        try {
            scopes = parts("scopes", request.getScopesList());
        } catch (RequestRejected e) {
            observer.onError(Statuses.of(e));
            return;
        }
        Scopes.Wait wait = member.scopes().acquire(GrpcAuthentication.principal(), request.getLeaseId(), scopes,
                request.getMetadata().toByteArray(), request.getTimeoutMs(), request.getRequestId());
        call.setOnCancelHandler(wait::abandon);
        wait.outcome().whenComplete((outcome, error) -> {
            if (call.isCancelled()) {
                return; // a grant stays with the lease: the client may hold it through another call
            }
            if (error != null) {
                observer.onError(Statuses.of(error));
                return;
            }
            ScopeAcquireResponse.Builder response = ScopeAcquireResponse.newBuilder().setHeader(member.header())
                    .setAcquired(outcome.acquired()).setFencingToken(outcome.fencingToken());
            outcome.blockers().forEach(b -> response.addBlockers(blocker(b)));
            observer.onNext(response.build());
            observer.onCompleted();
        });
    }

    @Override
    public void release(ScopeReleaseRequest request, StreamObserver<ScopeReleaseResponse> observer) {
        GrpcLockService.answer(member.scopes().release(GrpcAuthentication.principal(), request.getLeaseId(), request.getFencingToken()), observer,
                granted -> ScopeReleaseResponse.newBuilder().setHeader(member.header()).setGranted(granted).build());
    }

    @Override
    public void cancel(ScopeCancelRequest request, StreamObserver<ScopeCancelResponse> observer) {
        GrpcLockService.answer(member.scopes().cancel(GrpcAuthentication.principal(), request.getLeaseId(), request.getRequestId()), observer,
                outcome -> ScopeCancelResponse.newBuilder().setHeader(member.header()).setAcquired(outcome.acquired())
                        .setFencingToken(outcome.fencingToken()).build());
    }

    @Override
    public void describe(ScopeDescribeRequest request, StreamObserver<ScopeDescribeResponse> observer) {
        LockScope scope;
        List<ScopeRequest> blocked;
        try {
            scope = request.hasScope() ? scope("scope", request.getScope()) : null;
            blocked = parts("blocked", request.getBlockedList());
        } catch (RequestRejected e) {
            observer.onError(Statuses.of(e));
            return;
        }
        GrpcLockService.answer(member.scopes().read(GrpcAuthentication.principal(), scope, blocked), observer, read -> {
            ScopeDescribeResponse.Builder response = ScopeDescribeResponse.newBuilder()
                    .setHeader(member.header().toBuilder().setRevision(read.revision()));
            for (ScopeView.Holder h : read.holders()) {
                ScopeHolder.Builder holder = ScopeHolder.newBuilder().setLeaseId(h.leaseId()).setClientId(h.clientId())
                        .setFencingToken(h.fencingToken()).setMetadata(ByteString.copyFrom(h.metadata()));
                h.scopes().forEach(part -> holder.addScopes(part(part)));
                response.addHolders(holder);
            }
            for (ScopeView.Waiter w : read.waiters()) {
                ScopeWaiter.Builder waiter = ScopeWaiter.newBuilder().setLeaseId(w.leaseId()).setClientId(w.clientId())
                        .setJoinedAt(w.joinedAt());
                w.scopes().forEach(part -> waiter.addScopes(part(part)));
                response.addWaiters(waiter);
            }
            read.blockers().forEach(b -> response.addBlockers(blocker(b)));
            return response.build();
        });
    }

    // ---- the wire's scopes and back ---------------------------------------------------------------

    /** The parts of repeated field {@code field}, each checked on its own; the set's rules are the service's. */
    static List<ScopeRequest> parts(String field, List<ScopePart> parts) {
        List<ScopeRequest> out = new ArrayList<>(parts.size());
        for (int i = 0; i < parts.size(); i++) {
            ScopePart part = parts.get(i);
            String at = field + "[" + i + "]";
            int mode = part.getModeValue();
            if (mode != ScopeMode.SCOPE_MODE_EXCLUSIVE_VALUE && mode != ScopeMode.SCOPE_MODE_SHARED_VALUE) {
                throw RequestRejected.invalid(at + ".mode", at + ".mode must be SCOPE_MODE_EXCLUSIVE (0) or SCOPE_MODE_SHARED (1), got " + mode);
            }
            out.add(new ScopeRequest(scope(at + ".scope", part.getScope()), mode == ScopeMode.SCOPE_MODE_EXCLUSIVE_VALUE));
        }
        return out;
    }

    static LockScope scope(String field, Scope scope) {
        switch (scope.getKindCase()) {
            case INODE:
                return Scopes.inode(field + ".inode", scope.getInode());
            case PATH:
                return Scopes.path(field + ".path", scope.getPath());
            case RANGE:
                ByteRange r = scope.getRange();
                return Scopes.range(field + ".range", r.getInode(), r.getStart(), r.getEnd());
            case NAME:
                return Scopes.name(field + ".name", scope.getName());
            default:
                throw RequestRejected.invalid(field, field + " must set one of inode, path or range (or name, to describe a lock)");
        }
    }

    static Scope scope(LockScope scope) {
        if (scope instanceof LockScope.Inode i) {
            return Scope.newBuilder().setInode(i.inode()).build();
        } else if (scope instanceof LockScope.Path p) {
            return Scope.newBuilder().setPath(p.path()).build();
        } else if (scope instanceof LockScope.ByteRange r) {
            return Scope.newBuilder().setRange(ByteRange.newBuilder().setInode(r.inode()).setStart(r.start()).setEnd(r.end())).build();
        } else if (scope instanceof LockScope.Named n) {
            return Scope.newBuilder().setName(n.name()).build();
        }
        throw new IllegalArgumentException("not a scope: " + scope);
    }

    static ScopePart part(ScopeRequest part) {
        return ScopePart.newBuilder().setScope(scope(part.scope()))
                .setMode(part.exclusive() ? ScopeMode.SCOPE_MODE_EXCLUSIVE : ScopeMode.SCOPE_MODE_SHARED).build();
    }

    static ScopeBlocker blocker(ScopeResult.Blocker b) {
        return ScopeBlocker.newBuilder().setLeaseId(b.leaseId()).setClientId(b.clientId())
                .setPart(part(new ScopeRequest(b.scope(), b.exclusive()))).setHolding(b.holding()).setFencingToken(b.fencingToken()).build();
    }
}
