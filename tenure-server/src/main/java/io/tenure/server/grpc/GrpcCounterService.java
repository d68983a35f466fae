package io.tenure.server.grpc;

import io.grpc.stub.StreamObserver;
import io.tenure.core.counter.CounterView;
import io.tenure.proto.v1.CounterAddRequest;
import io.tenure.proto.v1.CounterChangeResponse;
import io.tenure.proto.v1.CounterCompareAndSetRequest;
import io.tenure.proto.v1.CounterGetRequest;
import io.tenure.proto.v1.CounterGetResponse;
import io.tenure.proto.v1.CounterListRequest;
import io.tenure.proto.v1.CounterListResponse;
import io.tenure.proto.v1.CounterServiceGrpc;
import io.tenure.proto.v1.CounterSetRequest;
import io.tenure.server.Member;
import io.tenure.server.security.Principal;
import io.tenure.server.counter.Counters;
import java.util.concurrent.CompletableFuture;

/** The gRPC front end of counters: translates {@code tenure.v1.CounterService} to {@link Counters} and back. */
public final class GrpcCounterService extends CounterServiceGrpc.CounterServiceImplBase {
    /** Its calls that never wait, for {@link CallThreads}: they check their input, propose a command and return. */
    public static final java.util.Set<String> NON_BLOCKING = java.util.Set.of(
            CounterServiceGrpc.getAddMethod().getFullMethodName(),
            CounterServiceGrpc.getSetMethod().getFullMethodName(),
            CounterServiceGrpc.getCompareAndSetMethod().getFullMethodName());

    private final Member member;

    public GrpcCounterService(Member member) {
        this.member = member;
    }

    @Override
    public void add(CounterAddRequest request, StreamObserver<CounterChangeResponse> observer) {
        GrpcLockService.answer(add(member, GrpcAuthentication.principal(), request), observer, r -> r);
    }

    @Override
    public void set(CounterSetRequest request, StreamObserver<CounterChangeResponse> observer) {
        GrpcLockService.answer(set(member, GrpcAuthentication.principal(), request), observer, r -> r);
    }

    @Override
    public void compareAndSet(CounterCompareAndSetRequest request, StreamObserver<CounterChangeResponse> observer) {
        GrpcLockService.answer(compareAndSet(member, GrpcAuthentication.principal(), request), observer, r -> r);
    }

    @Override
    public void get(CounterGetRequest request, StreamObserver<CounterGetResponse> observer) {
        GrpcLockService.answer(get(member, GrpcAuthentication.principal(), request), observer, r -> r);
    }

    @Override
    public void list(CounterListRequest request, StreamObserver<CounterListResponse> observer) {
        GrpcLockService.answer(member.counters().list(GrpcAuthentication.principal(), request.getPrefix(), request.getLimit()), observer, listing -> {
            CounterListResponse.Builder response = CounterListResponse.newBuilder()
                    .setHeader(member.header().toBuilder().setRevision(listing.revision())).setMore(listing.more());
            for (CounterView counter : listing.counters()) {
                response.addCounters(getResponse(counter.key(), counter));
            }
            return response.build();
        });
    }

    // ---- each call, served for its unary RPC and for the session stream (GrpcSession) ----------

    static CompletableFuture<CounterChangeResponse> add(Member member, Principal caller, CounterAddRequest request) {
        return member.counters().add(caller, request.getName(), request.getDelta(), request.getRequestId())
                .thenApply(change -> changeResponse(member, change));
    }

    static CompletableFuture<CounterChangeResponse> set(Member member, Principal caller, CounterSetRequest request) {
        return member.counters().set(caller, request.getName(), request.getValue(), request.getRequestId())
                .thenApply(change -> changeResponse(member, change));
    }

    static CompletableFuture<CounterChangeResponse> compareAndSet(Member member, Principal caller, CounterCompareAndSetRequest request) {
        return member.counters().compareAndSet(caller, request.getName(), request.getExpected(), request.getValue(), request.getRequestId())
                .thenApply(change -> changeResponse(member, change));
    }

    static CompletableFuture<CounterGetResponse> get(Member member, Principal caller, CounterGetRequest request) {
        return member.counters().read(caller, request.getName()).thenApply(read -> getResponse(read.name(), read.counter())
                .setHeader(member.header().toBuilder().setRevision(read.revision())).build());
    }

    static CounterChangeResponse changeResponse(Member member, Counters.Change change) {
        return CounterChangeResponse.newBuilder().setHeader(member.header()).setName(change.name()).setValue(change.value())
                .setPrevious(change.previous()).setSwapped(change.swapped()).setModRevision(change.revision()).build();
    }

    private static CounterGetResponse.Builder getResponse(String name, CounterView counter) {
        CounterGetResponse.Builder response = CounterGetResponse.newBuilder().setName(name);
        if (counter != null) {
            response.setExists(true).setValue(counter.value()).setCreateRevision(counter.createRevision())
                    .setModRevision(counter.modRevision()).setVersion(counter.version());
        }
        return response;
    }
}
