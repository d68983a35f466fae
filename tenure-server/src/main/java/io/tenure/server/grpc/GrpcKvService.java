package io.tenure.server.grpc;

import com.google.protobuf.ByteString;
import io.grpc.stub.StreamObserver;
import io.tenure.core.counter.CounterAdd;
import io.tenure.core.counter.CounterSet;
import io.tenure.core.counter.CounterTable;
import io.tenure.core.kernel.Command;
import io.tenure.core.kernel.Txn;
import io.tenure.core.kernel.TxnCompare;
import io.tenure.core.kernel.TxnResult;
import io.tenure.core.kv.KvDelete;
import io.tenure.core.kv.KvPut;
import io.tenure.core.kv.KvTable;
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
import io.tenure.proto.v1.KvTxnCompare;
import io.tenure.proto.v1.KvTxnCounterResult;
import io.tenure.proto.v1.KvTxnDeleteResult;
import io.tenure.proto.v1.KvTxnOp;
import io.tenure.proto.v1.KvTxnOpResult;
import io.tenure.proto.v1.KvTxnPutResult;
import io.tenure.proto.v1.KvTxnRequest;
import io.tenure.proto.v1.KvTxnResponse;
import io.tenure.server.Member;
import io.tenure.server.security.Principal;
import io.tenure.server.kv.KeyValues;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/** The gRPC front end of the key-value store: translates {@code tenure.v1.KvService} to {@link KeyValues} and back. */
public final class GrpcKvService extends KvServiceGrpc.KvServiceImplBase {
    /** Its calls that never wait, for {@link CallThreads}: they check their input, propose a command and return. */
    public static final java.util.Set<String> NON_BLOCKING = java.util.Set.of(
            KvServiceGrpc.getPutMethod().getFullMethodName(),
            KvServiceGrpc.getCompareAndSetMethod().getFullMethodName(),
            KvServiceGrpc.getDeleteMethod().getFullMethodName(),
            KvServiceGrpc.getTxnMethod().getFullMethodName());

    private final Member member;

    public GrpcKvService(Member member) {
        this.member = member;
    }

    @Override
    public void put(KvPutRequest request, StreamObserver<KvPutResponse> observer) {
        GrpcLockService.answer(put(member, GrpcAuthentication.principal(), request), observer, r -> r);
    }

    @Override
    public void compareAndSet(KvCompareAndSetRequest request, StreamObserver<KvCompareAndSetResponse> observer) {
        GrpcLockService.answer(compareAndSet(member, GrpcAuthentication.principal(), request), observer, r -> r);
    }

    @Override
    public void delete(KvDeleteRequest request, StreamObserver<KvDeleteResponse> observer) {
        GrpcLockService.answer(delete(member, GrpcAuthentication.principal(), request), observer, r -> r);
    }

    @Override
    public void get(KvGetRequest request, StreamObserver<KvGetResponse> observer) {
        GrpcLockService.answer(get(member, GrpcAuthentication.principal(), request), observer, r -> r);
    }

    // ---- each call, served for its unary RPC and for the session stream (GrpcSession) ----------

    static CompletableFuture<KvPutResponse> put(Member member, Principal caller, KvPutRequest request) {
        return member.keyValues().put(caller, request.getKey(), request.getValue().toByteArray(), request.getLeaseId(),
                request.getTtlMs(), request.getRequestId()).thenApply(written -> KvPutResponse.newBuilder()
                .setHeader(member.header()).setKey(written.key()).setRevision(written.revision())
                .setPrevModRevision(written.prevModRevision()).setCreated(written.created()).setVersion(written.version()).build());
    }

    static CompletableFuture<KvCompareAndSetResponse> compareAndSet(Member member, Principal caller, KvCompareAndSetRequest request) {
        KeyValues.Compare compare = switch (request.getCompare()) {
            case KV_COMPARE_ABSENT -> KeyValues.Compare.ABSENT;
            case KV_COMPARE_MOD_REVISION -> KeyValues.Compare.MOD_REVISION;
            case KV_COMPARE_VALUE -> KeyValues.Compare.VALUE;
            default -> null; // refused by the service, naming the field
        };
        return member.keyValues().compareAndSet(caller, request.getKey(), compare, request.getExpectedModRevision(),
                request.getExpectedValue().toByteArray(), request.getValue().toByteArray(), request.getLeaseId(), request.getTtlMs(),
                request.getRequestId()).thenApply(swap -> {
            KvCompareAndSetResponse.Builder response = KvCompareAndSetResponse.newBuilder().setHeader(member.header())
                    .setKey(swap.key()).setSwapped(swap.swapped()).setModRevision(swap.modRevision())
                    .setPrevModRevision(swap.prevModRevision()).setVersion(swap.version());
            if (swap.value() != null) {
                response.setValue(ByteString.copyFrom(swap.value())).setHasValue(true);
            }
            return response.build();
        });
    }

    static CompletableFuture<KvDeleteResponse> delete(Member member, Principal caller, KvDeleteRequest request) {
        long expected = request.hasExpectedModRevision() ? request.getExpectedModRevision() : KvDelete.ANY_REVISION;
        if (request.hasExpectedModRevision() && expected < 0) {
            return CompletableFuture.failedFuture(
                    Statuses.invalid("expected_mod_revision must be at least 0 (0 = the key must be absent), got " + expected));
        }
        return member.keyValues().delete(caller, request.getKey(), expected, request.getRequestId())
                .thenApply(removal -> KvDeleteResponse.newBuilder().setHeader(member.header()).setKey(removal.key())
                        .setDeleted(removal.deleted()).setRevision(removal.revision()).setCompareFailed(removal.compareFailed()).build());
    }

    static CompletableFuture<KvGetResponse> get(Member member, Principal caller, KvGetRequest request) {
        return member.keyValues().read(caller, request.getKey()).thenApply(read -> {
            KvGetResponse.Builder response = KvGetResponse.newBuilder().setHeader(member.header().toBuilder().setRevision(read.revision()));
            if (read.entry() != null) {
                response.setExists(true).setEntry(entry(read.entry()));
            }
            return response.build();
        });
    }

    @Override
    public void list(KvListRequest request, StreamObserver<KvListResponse> observer) {
        GrpcLockService.answer(member.keyValues().list(GrpcAuthentication.principal(), request.getPrefix(), request.getAfterKey(), request.getLimit()), observer, listing -> {
            KvListResponse.Builder response = KvListResponse.newBuilder()
                    .setHeader(member.header().toBuilder().setRevision(listing.revision()))
                    .setMore(listing.more()).setNextAfterKey(listing.nextAfterKey());
            listing.entries().forEach(view -> response.addEntries(entry(view)));
            return response.build();
        });
    }

    @Override
    public void txn(KvTxnRequest request, StreamObserver<KvTxnResponse> observer) {
        GrpcLockService.answer(txn(member, GrpcAuthentication.principal(), request), observer, r -> r);
    }

    static CompletableFuture<KvTxnResponse> txn(Member member, Principal caller, KvTxnRequest request) {
        List<TxnCompare> compares = new ArrayList<>(request.getCompareCount());
        request.getCompareList().forEach(c -> compares.add(compare(c)));
        List<Command> success;
        List<Command> failure;
        try {
            success = operations(request.getSuccessList(), "success");
            failure = operations(request.getFailureList(), "failure");
        } catch (IllegalArgumentException e) {
            return CompletableFuture.failedFuture(Statuses.invalid(e.getMessage()));
        }
        Txn txn = new Txn(compares, success, failure, request.getRequestId());
        return member.keyValues().transact(caller, txn).thenApply(transacted -> {
            KvTxnResponse.Builder response = KvTxnResponse.newBuilder()
                    .setHeader(member.header().toBuilder().setRevision(transacted.revision())).setSucceeded(transacted.succeeded());
            for (int i = 0; i < transacted.results().size(); i++) {
                response.addResults(result(transacted.applied().get(i), transacted.results().get(i)));
            }
            return response.build();
        });
    }

    /** An unspecified kind, target or relation goes to the service as none, which refuses it naming the field. */
    private static TxnCompare compare(KvTxnCompare c) {
        String kind = switch (c.getKind()) {
            case KV_TXN_KIND_KV -> KvTable.NAME;
            case KV_TXN_KIND_COUNTER -> CounterTable.NAME;
            default -> "";
        };
        TxnCompare.Target target = switch (c.getTarget()) {
            case KV_TXN_TARGET_VALUE -> TxnCompare.Target.VALUE;
            case KV_TXN_TARGET_MOD_REVISION -> TxnCompare.Target.MOD_REVISION;
            case KV_TXN_TARGET_CREATE_REVISION -> TxnCompare.Target.CREATE_REVISION;
            case KV_TXN_TARGET_VERSION -> TxnCompare.Target.VERSION;
            default -> null;
        };
        TxnCompare.Relation relation = switch (c.getRelation()) {
            case KV_TXN_RELATION_EQUAL -> TxnCompare.Relation.EQUAL;
            case KV_TXN_RELATION_NOT_EQUAL -> TxnCompare.Relation.NOT_EQUAL;
            case KV_TXN_RELATION_LESS -> TxnCompare.Relation.LESS;
            case KV_TXN_RELATION_GREATER -> TxnCompare.Relation.GREATER;
            default -> null;
        };
        byte[] value = kind.equals(KvTable.NAME) && target == TxnCompare.Target.VALUE ? c.getValue().toByteArray() : null;
        return new TxnCompare(kind, c.getKey(), target, relation, c.getNumber(), value);
    }

    /** @throws IllegalArgumentException for an operation that is none of put, delete, add and set */
    private static List<Command> operations(List<KvTxnOp> ops, String branch) {
        List<Command> commands = new ArrayList<>(ops.size());
        for (KvTxnOp op : ops) {
            commands.add(switch (op.getOpCase()) {
                case PUT -> new KvPut(op.getPut().getKey(), op.getPut().getValue().toByteArray(), op.getPut().getLeaseId(),
                        op.getPut().getTtlMs(), 0);
                case DELETE -> new KvDelete(op.getDelete().getKey(), KvDelete.ANY_REVISION, 0);
                case ADD -> new CounterAdd(op.getAdd().getCounter(), op.getAdd().getDelta(), 0);
                case SET -> new CounterSet(op.getSet().getCounter(), op.getSet().getValue(), 0);
                case OP_NOT_SET -> throw new IllegalArgumentException(branch + "[" + commands.size()
                        + "] must set one of put, delete, add and set");
            });
        }
        return commands;
    }

    private static KvTxnOpResult result(Command applied, TxnResult.Done done) {
        KvTxnOpResult.Builder result = KvTxnOpResult.newBuilder();
        if (applied instanceof KvPut) {
            result.setPut(KvTxnPutResult.newBuilder().setRevision(done.revision()).setPrevModRevision(done.previous())
                    .setVersion(done.value()));
        } else if (applied instanceof KvDelete) {
            result.setDelete(KvTxnDeleteResult.newBuilder().setDeleted(done.changed()).setRevision(done.revision()));
        } else {
            result.setCounter(KvTxnCounterResult.newBuilder().setValue(done.value()).setPrevious(done.previous())
                    .setRevision(done.revision()));
        }
        return result.build();
    }

    private static KvEntry entry(KvView view) {
        return KvEntry.newBuilder().setKey(view.key()).setValue(ByteString.copyFrom(view.value()))
                .setCreateRevision(view.createRevision()).setModRevision(view.modRevision()).setVersion(view.version())
                .setLeaseId(view.leaseId()).setTtlMs(view.ttlMillis()).build();
    }
}
