package io.tenure.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.tenure.client.FailedPreconditionException;
import io.tenure.client.InvalidArgumentException;
import io.tenure.client.KvTransaction;
import io.tenure.client.KvTransaction.Relation;
import io.tenure.client.Lease;
import io.tenure.client.LeaseNotFoundException;
import io.tenure.client.TenureClient;
import io.tenure.client.TenureKv;
import io.tenure.proto.v1.KvServiceGrpc;
import io.tenure.proto.v1.KvTxnAdd;
import io.tenure.proto.v1.KvTxnCompare;
import io.tenure.proto.v1.KvTxnKind;
import io.tenure.proto.v1.KvTxnOp;
import io.tenure.proto.v1.KvTxnPut;
import io.tenure.proto.v1.KvTxnRelation;
import io.tenure.proto.v1.KvTxnRequest;
import io.tenure.proto.v1.KvTxnResponse;
import io.tenure.proto.v1.KvTxnTarget;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Transactions over keys and counters through the Java client and the gRPC service, against one
 * real member (each test has its own keys): both branches with their results, a retry applied
 * once, and every refusal with its status, naming the comparison or operation, without a change.
 */
class KvTxnApiTest {
    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.members(1);

    private static KvServiceGrpc.KvServiceBlockingStub stub(ManagedChannel channel) {
        return KvServiceGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
    }

    private static ManagedChannel channel() {
        return NettyChannelBuilder.forAddress("127.0.0.1", tenure.cluster().server(0).clientPort()).usePlaintext().build();
    }

    @Test
    void whenEveryComparisonHoldsTheSuccessOperationsApplyWithTheirResults() throws Exception {
        TenureClient client = tenure.client();
        TenureKv kv = client.kv();
        long mode = kv.put("txn/mode", "active");
        kv.put("txn/hint", "stale");
        client.counter("txn/epoch").addAndGet(4);

        KvTransaction.Outcome outcome = kv.txn()
                .ifModRevision("txn/mode", Relation.EQUAL, mode)
                .ifValue("txn/mode", Relation.EQUAL, "active")
                .ifCounter("txn/epoch", Relation.GREATER, 3)
                .ifVersion("txn/absent", Relation.EQUAL, 0)
                .thenPut("txn/mode", "draining")
                .thenDelete("txn/hint")
                .thenAdd("txn/epoch", 1)
                .thenSet("txn/other", -2)
                .elsePut("txn/lost", "never")
                .commit();

        assertThat(outcome.succeeded()).isTrue();
        assertThat(outcome.results()).hasSize(4);
        KvTransaction.Put put = (KvTransaction.Put) outcome.results().get(0);
        assertThat(put.prevModRevision()).isEqualTo(mode);
        assertThat(put.version()).isEqualTo(2);
        KvTransaction.Delete delete = (KvTransaction.Delete) outcome.results().get(1);
        assertThat(delete.deleted()).isTrue();
        assertThat(delete.revision()).isGreaterThan(put.revision());
        assertThat(outcome.results().get(2)).isEqualTo(new KvTransaction.CounterChange(4, 5,
                ((KvTransaction.CounterChange) outcome.results().get(2)).revision()));
        KvTransaction.CounterChange set = (KvTransaction.CounterChange) outcome.results().get(3);
        assertThat(set.value()).isEqualTo(-2);
        assertThat(outcome.revision()).as("the last change's revision").isEqualTo(set.revision());

        assertThat(kv.get("txn/mode").orElseThrow().valueAsString()).isEqualTo("draining");
        assertThat(kv.get("txn/mode").orElseThrow().modRevision()).isEqualTo(put.revision());
        assertThat(kv.get("txn/hint")).isEmpty();
        assertThat(kv.get("txn/lost")).isEmpty();
        assertThat(client.counter("txn/epoch").get()).isEqualTo(5);

        KvTransaction.Outcome failed = kv.txn().ifModRevision("txn/mode", Relation.EQUAL, mode)
                .thenPut("txn/mode", "again").elsePut("txn/lost", "found").elseAdd("txn/epoch", -5)
                .commitAsync().get(10, TimeUnit.SECONDS);
        assertThat(failed.succeeded()).isFalse();
        assertThat(failed.results()).hasSize(2);
        assertThat(kv.get("txn/mode").orElseThrow().valueAsString()).isEqualTo("draining");
        assertThat(kv.get("txn/lost").orElseThrow().valueAsString()).isEqualTo("found");
        assertThat(client.counter("txn/epoch").get()).isZero();
    }

    @Test
    void aTransactionRetriedWithItsRequestIdIsAppliedOnceAndAnsweredAsTheFirst() {
        ManagedChannel channel = channel();
        try {
            KvTxnRequest request = KvTxnRequest.newBuilder()
                    .addSuccess(KvTxnOp.newBuilder().setAdd(KvTxnAdd.newBuilder().setCounter("txn/retried").setDelta(1)))
                    .addSuccess(KvTxnOp.newBuilder().setPut(KvTxnPut.newBuilder().setKey("txn/retried")
                            .setValue(ByteString.copyFromUtf8("v")).setTtlMs(60_000)))
                    .setRequestId(888_001).build();
            KvTxnResponse first = stub(channel).txn(request);
            KvTxnResponse retry = stub(channel).txn(request);

            assertThat(first.getSucceeded()).isTrue();
            assertThat(retry.getResultsList()).isEqualTo(first.getResultsList());
            assertThat(retry.getHeader().getRevision()).isEqualTo(first.getHeader().getRevision());
            assertThat(first.getResults(0).getCounter().getValue()).isOne();
            assertThat(tenure.client().counter("txn/retried").get()).as("applied once").isOne();
            assertThat(tenure.client().kv().get("txn/retried").orElseThrow().ttl()).isEqualTo(Duration.ofMinutes(1));
        } finally {
            channel.shutdownNow();
        }
    }

    private static void assertRefused(Runnable call, Status.Code code, String message) {
        assertThatThrownBy(call::run).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
            assertThat(e.getStatus().getCode()).isEqualTo(code);
            assertThat(e.getStatus().getDescription()).contains(message);
        });
    }

    @Test
    void badInputIsRefusedNamingTheComparisonOrOperationAndItsFieldAndNothingChanges() {
        ManagedChannel channel = channel();
        try {
            KvServiceGrpc.KvServiceBlockingStub stub = stub(channel);
            KvTxnCompare.Builder good = KvTxnCompare.newBuilder().setKind(KvTxnKind.KV_TXN_KIND_KV).setKey("txn/bad")
                    .setTarget(KvTxnTarget.KV_TXN_TARGET_VERSION).setRelation(KvTxnRelation.KV_TXN_RELATION_EQUAL);
            KvTxnOp add = KvTxnOp.newBuilder().setAdd(KvTxnAdd.newBuilder().setCounter("txn/bad").setDelta(1)).build();

            assertRefused(() -> stub.txn(KvTxnRequest.newBuilder().addCompare(good.clone().setKind(KvTxnKind.KV_TXN_KIND_UNSPECIFIED))
                    .addSuccess(add).build()), Status.Code.INVALID_ARGUMENT, "compare[0].kind must be one of [counter, kv]");
            assertRefused(() -> stub.txn(KvTxnRequest.newBuilder().addCompare(good).addCompare(good.clone()
                    .setTarget(KvTxnTarget.KV_TXN_TARGET_UNSPECIFIED)).addSuccess(add).build()), Status.Code.INVALID_ARGUMENT,
                    "compare[1].target must be one of");
            assertRefused(() -> stub.txn(KvTxnRequest.newBuilder().addCompare(good.clone().setKey("")).addSuccess(add).build()),
                    Status.Code.INVALID_ARGUMENT, "compare[0].key must not be empty");
            assertRefused(() -> stub.txn(KvTxnRequest.newBuilder().addSuccess(add).addSuccess(KvTxnOp.getDefaultInstance()).build()),
                    Status.Code.INVALID_ARGUMENT, "success[1] must set one of put, delete, add and set");
            assertRefused(() -> stub.txn(KvTxnRequest.newBuilder().addSuccess(add).addFailure(KvTxnOp.newBuilder()
                    .setPut(KvTxnPut.newBuilder().setKey("txn/bad").setValue(ByteString.copyFrom(new byte[64 * 1024 + 1])))).build()),
                    Status.Code.INVALID_ARGUMENT, "failure[0] (KvPut): value must be at most 65536 bytes");
            KvTxnRequest.Builder tooMany = KvTxnRequest.newBuilder().addSuccess(add);
            for (int i = 0; i < 129; i++) {
                tooMany.addCompare(good);
            }
            assertRefused(() -> stub.txn(tooMany.build()), Status.Code.INVALID_ARGUMENT, "at most 128 comparisons");

            tenure.client().counter("txn/full").addAndGet(Long.MAX_VALUE);
            assertRefused(() -> stub.txn(KvTxnRequest.newBuilder().addSuccess(add).addSuccess(KvTxnOp.newBuilder()
                    .setAdd(KvTxnAdd.newBuilder().setCounter("txn/full").setDelta(1))).build()), Status.Code.FAILED_PRECONDITION,
                    "success[1] (CounterAdd): counter 'txn/full' is " + Long.MAX_VALUE);

            assertThat(tenure.client().counter("txn/bad").get()).as("nothing changed").isZero();
            assertThat(tenure.client().counter("txn/full").get()).isEqualTo(Long.MAX_VALUE);
        } finally {
            channel.shutdownNow();
        }
    }

    @Test
    void theClientRefusesOversizedTransactionsAtOnceAndMapsTheServersRefusals() {
        TenureClient client = tenure.client();
        KvTransaction big = client.kv().txn();
        for (int i = 0; i < 129; i++) {
            big.thenAdd("txn/sdk", 1);
        }
        assertThatThrownBy(big::commitAsync).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at most 128 success");
        assertThatThrownBy(() -> client.kv().txn().thenPut("", "x")).isInstanceOf(IllegalArgumentException.class);

        client.counter("txn/sdk-full").addAndGet(Long.MIN_VALUE);
        assertThatThrownBy(() -> client.kv().txn().thenAdd("txn/sdk", 1).thenAdd("txn/sdk-full", -1).commit())
                .isInstanceOf(FailedPreconditionException.class).hasMessageContaining("success[1]");
        assertThatThrownBy(() -> client.kv().txn().thenPut("txn/sdk", "x".getBytes(), Duration.ofMillis(0)))
                .isInstanceOf(IllegalArgumentException.class);
        Lease lease = client.grantLease(Duration.ofSeconds(30));
        lease.revoke();
        assertThatThrownBy(() -> client.kv().txn().thenAdd("txn/sdk", 1).thenPut("txn/sdk", "x".getBytes(), lease).commit())
                .isInstanceOf(LeaseNotFoundException.class);
        KvTransaction huge = client.kv().txn().thenAdd("txn/sdk", 1);
        for (int i = 0; i < 17; i++) {
            huge.thenPut("txn/sdk/big" + i, new byte[64 * 1024]);
        }
        assertThatThrownBy(huge::commit).isInstanceOf(InvalidArgumentException.class)
                .hasMessageContaining("bytes as written to the log, over the limit of 1048576");
        assertThat(client.counter("txn/sdk").get()).as("the refused transactions changed nothing").isZero();
        assertThat(client.kv().get("txn/sdk")).isEmpty();
    }
}
