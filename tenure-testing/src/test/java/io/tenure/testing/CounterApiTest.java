package io.tenure.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.tenure.client.FailedPreconditionException;
import io.tenure.client.TenureClient;
import io.tenure.client.TenureCounter;
import io.tenure.proto.v1.CounterAddRequest;
import io.tenure.proto.v1.CounterChangeResponse;
import io.tenure.proto.v1.CounterGetRequest;
import io.tenure.proto.v1.CounterGetResponse;
import io.tenure.proto.v1.CounterListRequest;
import io.tenure.proto.v1.CounterListResponse;
import io.tenure.proto.v1.CounterServiceGrpc;
import io.tenure.proto.v1.CounterSetRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Counters through the Java client and the gRPC service, against one real member (each test has its own names). */
class CounterApiTest {
    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.members(1);

    private static CounterServiceGrpc.CounterServiceBlockingStub stub(ManagedChannel channel) {
        return CounterServiceGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
    }

    private static ManagedChannel channel() {
        return NettyChannelBuilder.forAddress("127.0.0.1", tenure.cluster().server(0).clientPort()).usePlaintext().build();
    }

    @Test
    void incrementsOfManyClientsAtOnceAreEachAppliedOnce() throws Exception {
        List<TenureClient> clients = new ArrayList<>();
        try {
            List<CompletableFuture<Long>> answers = new ArrayList<>();
            for (int c = 0; c < 4; c++) {
                TenureClient client = tenure.cluster().newClient();
                clients.add(client);
                TenureCounter counter = client.counter("counter/seq");
                for (int i = 0; i < 50; i++) {
                    answers.add(counter.incrementAndGetAsync());
                }
            }
            List<Long> values = new ArrayList<>();
            for (CompletableFuture<Long> answer : answers) {
                values.add(answer.get(30, TimeUnit.SECONDS));
            }
            assertThat(values).as("every increment saw its own value").doesNotHaveDuplicates().hasSize(200)
                    .allMatch(v -> v >= 1 && v <= 200);
            assertThat(clients.get(0).counter("counter/seq").get()).isEqualTo(200);
        } finally {
            for (TenureClient client : clients) {
                client.close();
            }
        }
    }

    @Test
    void theClientsOperationsAnswerAsAnAtomicLongDoes() throws Exception {
        TenureCounter counter = tenure.client().counter("counter/ops");
        assertThat(counter.get()).as("absent reads 0").isZero();
        assertThat(counter.incrementAndGet()).isEqualTo(1);
        assertThat(counter.addAndGet(10)).isEqualTo(11);
        assertThat(counter.getAndAdd(-1)).isEqualTo(11);
        assertThat(counter.decrementAndGetAsync().get(10, TimeUnit.SECONDS)).isEqualTo(9);
        assertThat(counter.compareAndSet(5, 100)).as("not 5").isFalse();
        assertThat(counter.get()).isEqualTo(9);
        assertThat(counter.compareAndSet(9, 100)).isTrue();
        assertThat(counter.setAsync(-7).get(10, TimeUnit.SECONDS)).as("the value before").isEqualTo(100);
        assertThat(counter.get()).isEqualTo(-7);
        assertThat(tenure.client().counter("counter/fresh").compareAndSet(0, 3)).as("absent is 0: create").isTrue();
    }

    @Test
    void anOverflowIsRefusedWithFailedPreconditionAndTheValueStays() {
        TenureCounter counter = tenure.client().counter("counter/big");
        counter.set(Long.MAX_VALUE);
        assertThatThrownBy(() -> counter.incrementAndGet()).isInstanceOf(FailedPreconditionException.class)
                .hasMessageContaining("signed 64-bit");
        assertThat(counter.get()).isEqualTo(Long.MAX_VALUE);
        assertThat(counter.addAndGet(Long.MIN_VALUE)).isEqualTo(-1);
    }

    @Test
    void aChangeRetriedWithItsRequestIdIsAppliedOnceAndAnsweredAsTheFirst() {
        ManagedChannel channel = channel();
        try {
            CounterAddRequest add = CounterAddRequest.newBuilder().setName("counter/retried").setDelta(5).setRequestId(424242).build();
            CounterChangeResponse first = stub(channel).add(add);
            CounterChangeResponse retry = stub(channel).add(add);
            assertThat(retry.getValue()).isEqualTo(first.getValue()).isEqualTo(5);
            assertThat(retry.getModRevision()).isEqualTo(first.getModRevision());
            CounterGetResponse read = stub(channel).get(CounterGetRequest.newBuilder().setName("counter/retried").build());
            assertThat(read.getValue()).isEqualTo(5);
            assertThat(read.getVersion()).as("one change").isOne();
            assertThat(read.getHeader().getRevision()).isGreaterThanOrEqualTo(first.getModRevision());
        } finally {
            channel.shutdownNow();
        }
    }

    @Test
    void badNamesAndLimitsAreInvalidArgumentsNamingTheField() {
        ManagedChannel channel = channel();
        try {
            assertThatThrownBy(() -> stub(channel).add(CounterAddRequest.newBuilder().setName("").setDelta(1).build()))
                    .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                        assertThat(e.getStatus().getDescription()).contains("name");
                    });
            assertThatThrownBy(() -> stub(channel).set(CounterSetRequest.newBuilder().setName("x".repeat(2000)).setValue(1).build()))
                    .isInstanceOfSatisfying(StatusRuntimeException.class,
                            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT));
            assertThatThrownBy(() -> stub(channel).list(CounterListRequest.newBuilder().setLimit(-1).build()))
                    .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                        assertThat(e.getStatus().getDescription()).contains("limit");
                    });
        } finally {
            channel.shutdownNow();
        }
    }

    @Test
    void aListAnswersCountersByPrefixInNameOrderAndSaysWhenMoreFollow() {
        TenureClient client = tenure.client();
        for (String name : List.of("listed/c", "listed/a", "listed/b", "other/a")) {
            client.counter(name).incrementAndGet();
        }
        ManagedChannel channel = channel();
        try {
            CounterListResponse two = stub(channel).list(CounterListRequest.newBuilder().setPrefix("listed/").setLimit(2).build());
            assertThat(two.getCountersList()).extracting(CounterGetResponse::getName).containsExactly("listed/a", "listed/b");
            assertThat(two.getMore()).isTrue();
            CounterListResponse all = stub(channel).list(CounterListRequest.newBuilder().setPrefix("listed/").build());
            assertThat(all.getCountersList()).extracting(CounterGetResponse::getName).containsExactly("listed/a", "listed/b", "listed/c");
            assertThat(all.getMore()).isFalse();
            assertThat(all.getCounters(0).getValue()).isOne();
        } finally {
            channel.shutdownNow();
        }
    }
}
