package io.tenure.server.grpc;

import com.google.protobuf.ByteString;
import io.grpc.stub.StreamObserver;
import io.tenure.core.kv.KvDelete;
import io.tenure.core.kv.KvView;
import io.tenure.proto.v1.KvCompareAndSetRequest;
import io.tenure.proto.v1.KvCompareAndSetResponse;
import io.tenure.proto.v1.KvDeleteRequest;
import io.tenure.proto.v1.KvDeleteResponse;
import io.tenure.proto.v1.KvEntry;
import io.tenure.proto.v1.KvGetRequest;
import io.tenure.proto.v1.KvGetResponse;
import io.tenure.proto.v1.KvListRequest;
import io.tenure.proto.v1.KvListResponse;
import io.tenure.proto.v1.KvPutRequest;
import io.tenure.proto.v1.KvPutResponse;
import io.tenure.proto.v1.KvServiceGrpc;
import io.tenure.server.Member;
import io.tenure.server.kv.KeyValues;

/** The gRPC front end of the key-value store: translates {@code tenure.v1.KvService} to {@link KeyValues} and back. */
public final class GrpcKvService extends KvServiceGrpc.KvServiceImplBase {
    /** Its calls that never wait, for {@link CallThreads}: they check their input, propose a command and return. */
    public static final java.util.Set<String> NON_BLOCKING = java.util.Set.of(
            KvServiceGrpc.getPutMethod().getFullMethodName(),
            KvServiceGrpc.getCompareAndSetMethod().getFullMethodName(),
            KvServiceGrpc.getDeleteMethod().getFullMethodName());

    private final Member member;

    public GrpcKvService(Member member) {
        this.member = member;
    }

    @Override
    public void put(KvPutRequest request, StreamObserver<KvPutResponse> observer) {
        GrpcLockService.answer(member.keyValues().put(request.getKey(), request.getValue().toByteArray(), request.getLeaseId(),
                request.getTtlMs(), request.getRequestId()), observer, written -> KvPutResponse.newBuilder()
                .setHeader(member.header()).setKey(written.key()).setRevision(written.revision())
                .setPrevModRevision(written.prevModRevision()).setCreated(written.created()).setVersion(written.version()).build());
    }

    @Override
    public void compareAndSet(KvCompareAndSetRequest request, StreamObserver<KvCompareAndSetResponse> observer) {
        KeyValues.Compare compare = switch (request.getCompare()) {
            case KV_COMPARE_ABSENT -> KeyValues.Compare.ABSENT;
            case KV_COMPARE_MOD_REVISION -> KeyValues.Compare.MOD_REVISION;
            case KV_COMPARE_VALUE -> KeyValues.Compare.VALUE;
            default -> null; // refused by the service, naming the field
        };
        GrpcLockService.answer(member.keyValues().compareAndSet(request.getKey(), compare, request.getExpectedModRevision(),
                request.getExpectedValue().toByteArray(), request.getValue().toByteArray(), request.getLeaseId(), request.getTtlMs(),
                request.getRequestId()), observer, swap -> {
            KvCompareAndSetResponse.Builder response = KvCompareAndSetResponse.newBuilder().setHeader(member.header())
                    .setKey(swap.key()).setSwapped(swap.swapped()).setModRevision(swap.modRevision())
                    .setPrevModRevision(swap.prevModRevision()).setVersion(swap.version());
            if (swap.value() != null) {
                response.setValue(ByteString.copyFrom(swap.value())).setHasValue(true);
            }
            return response.build();
        });
    }

    @Override
    public void delete(KvDeleteRequest request, StreamObserver<KvDeleteResponse> observer) {
        long expected = request.hasExpectedModRevision() ? request.getExpectedModRevision() : KvDelete.ANY_REVISION;
        if (request.hasExpectedModRevision() && expected < 0) {
            observer.onError(Statuses.invalid("expected_mod_revision must be at least 0 (0 = the key must be absent), got " + expected));
            return;
        }
        GrpcLockService.answer(member.keyValues().delete(request.getKey(), expected, request.getRequestId()), observer,
                removal -> KvDeleteResponse.newBuilder().setHeader(member.header()).setKey(removal.key())
                        .setDeleted(removal.deleted()).setRevision(removal.revision()).setCompareFailed(removal.compareFailed()).build());
    }

    @Override
    public void get(KvGetRequest request, StreamObserver<KvGetResponse> observer) {
        GrpcLockService.answer(member.keyValues().read(request.getKey()), observer, read -> {
            KvGetResponse.Builder response = KvGetResponse.newBuilder().setHeader(member.header().toBuilder().setRevision(read.revision()));
            if (read.entry() != null) {
                response.setExists(true).setEntry(entry(read.entry()));
            }
            return response.build();
        });
    }

    @Override
    public void list(KvListRequest request, StreamObserver<KvListResponse> observer) {
        GrpcLockService.answer(member.keyValues().list(request.getPrefix(), request.getAfterKey(), request.getLimit()), observer, listing -> {
            KvListResponse.Builder response = KvListResponse.newBuilder()
                    .setHeader(member.header().toBuilder().setRevision(listing.revision()))
                    .setMore(listing.more()).setNextAfterKey(listing.nextAfterKey());
            listing.entries().forEach(view -> response.addEntries(entry(view)));
            return response.build();
        });
    }

    private static KvEntry entry(KvView view) {
        return KvEntry.newBuilder().setKey(view.key()).setValue(ByteString.copyFrom(view.value()))
                .setCreateRevision(view.createRevision()).setModRevision(view.modRevision()).setVersion(view.version())
                .setLeaseId(view.leaseId()).setTtlMs(view.ttlMillis()).build();
    }
}
