package io.tenure.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.tenure.proto.v1.LeaseGrantRequest;
import io.tenure.proto.v1.ListPopRequest;
import io.tenure.proto.v1.ListPopResponse;
import io.tenure.proto.v1.ListPushRequest;
import io.tenure.proto.v1.ListRangeRequest;
import io.tenure.proto.v1.ListRangeResponse;
import io.tenure.proto.v1.ListServiceGrpc;
import io.tenure.proto.v1.LockServiceGrpc;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Lists through the gRPC service against one real member: both ends, blocking pops served in order, and a pop whose caller went away. */
class ListApiTest {
    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.members(1);

    ManagedChannel channel;

    @BeforeEach
    void connect() {
        channel = NettyChannelBuilder.forAddress("127.0.0.1", tenure.cluster().server(0).clientPort()).usePlaintext().build();
    }

    @AfterEach
    void disconnect() {
        channel.shutdownNow();
    }

    private ListServiceGrpc.ListServiceBlockingStub lists() {
        return ListServiceGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS);
    }

    private long lease() {
        return LockServiceGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS)
                .leaseGrant(LeaseGrantRequest.newBuilder().setTtl(60).build()).getId();
    }

    private void push(String list, String value, boolean left) {
        lists().push(ListPushRequest.newBuilder().setName(list).setValue(ByteString.copyFromUtf8(value)).setLeft(left).build());
    }

    private ListPopResponse pop(String list, boolean left) {
        return lists().pop(ListPopRequest.newBuilder().setName(list).setLeft(left).build());
    }

    private ListRangeResponse range(String list) {
        return lists().range(ListRangeRequest.newBuilder().setName(list).setStart(0).setStop(-1).build());
    }

    private CompletableFuture<ListPopResponse> popAsync(ListServiceGrpc.ListServiceStub stub, String list, long lease, long timeoutMs,
                                                      long requestId) {
        CompletableFuture<ListPopResponse> answer = new CompletableFuture<>();
        stub.pop(ListPopRequest.newBuilder().setName(list).setLeft(true).setLeaseId(lease).setTimeoutMs(timeoutMs).setRequestId(requestId)
                .build(), new StreamObserver<>() {
                    @Override
                    public void onNext(ListPopResponse value) {
                        answer.complete(value);
                    }

                    @Override
                    public void onError(Throwable t) {
                        answer.completeExceptionally(t);
                    }

                    @Override
                    public void onCompleted() {
                    }
                });
        return answer;
    }

    @Test
    void itemsArePushedAndPoppedAtEitherEndAndAnEmptyListAnswersNotPopped() {
        push("list/ends", "b", false);
        push("list/ends", "c", false);
        push("list/ends", "a", true);
        ListRangeResponse all = range("list/ends");
        assertThat(all.getLength()).isEqualTo(3);
        assertThat(all.getValuesList()).extracting(ByteString::toStringUtf8).containsExactly("a", "b", "c");
        assertThat(pop("list/ends", true).getValue().toStringUtf8()).isEqualTo("a");
        assertThat(pop("list/ends", false).getValue().toStringUtf8()).isEqualTo("c");
        assertThat(pop("list/ends", false).getValue().toStringUtf8()).isEqualTo("b");
        ListPopResponse empty = pop("list/ends", true);
        assertThat(empty.getPopped()).isFalse();
        assertThat(range("list/ends").getLength()).isZero();
    }

    @Test
    void blockedPopsAreServedInArrivalOrderAndATimedOutOneIsWithdrawn() throws Exception {
        ListServiceGrpc.ListServiceStub async = ListServiceGrpc.newStub(channel);
        long first = lease();
        long second = lease();
        CompletableFuture<ListPopResponse> one = popAsync(async, "list/jobs", first, 30_000, 101);
        Await.until("the first waits", Duration.ofSeconds(10), () -> range("list/jobs").getWaitingLeasesList().size() == 1);
        CompletableFuture<ListPopResponse> two = popAsync(async, "list/jobs", second, 30_000, 102);
        Await.until("both wait", Duration.ofSeconds(10), () -> range("list/jobs").getWaitingLeasesList().size() == 2);
        assertThat(range("list/jobs").getWaitingLeasesList()).containsExactly(first, second);

        push("list/jobs", "j1", false);
        assertThat(one.get(10, TimeUnit.SECONDS).getValue().toStringUtf8()).isEqualTo("j1");
        assertThat(two).isNotDone();
        push("list/jobs", "j2", false);
        assertThat(two.get(10, TimeUnit.SECONDS).getValue().toStringUtf8()).isEqualTo("j2");

        ListPopResponse late = popAsync(async, "list/jobs", first, 200, 103).get(10, TimeUnit.SECONDS);
        assertThat(late.getPopped()).as("nothing came within 200 ms").isFalse();
        assertThat(range("list/jobs").getWaitingLeasesList()).as("the timed-out wait withdrawn").isEmpty();
    }

    @Test
    void aWaitingPopWhoseCallerWentAwayLeavesTheNextItemInTheList() throws Exception {
        long lease = lease();
        Context.CancellableContext call = Context.current().withCancellation();
        CompletableFuture<ListPopResponse> gone = call.call(() -> popAsync(ListServiceGrpc.newStub(channel), "list/gone", lease, -1, 201));
        Await.until("it waits", Duration.ofSeconds(10), () -> range("list/gone").getWaitingLeasesList().size() == 1);
        call.cancel(null);
        Await.until("its wait withdrawn through the log", Duration.ofSeconds(10),
                () -> range("list/gone").getWaitingLeasesList().isEmpty());
        push("list/gone", "kept", false);
        assertThat(range("list/gone").getValuesList()).extracting(ByteString::toStringUtf8).containsExactly("kept");
        assertThatThrownBy(() -> gone.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(StatusRuntimeException.class);
    }

    @Test
    void aWaitingPopNeedsALeaseAndAnOverlongValueIsRefusedNamingTheField() {
        assertThatThrownBy(() -> lists().pop(ListPopRequest.newBuilder().setName("list/bad").setTimeoutMs(1000).build()))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isIn(Status.Code.NOT_FOUND, Status.Code.INVALID_ARGUMENT);
                    assertThat(e.getStatus().getDescription()).contains("lease");
                });
        assertThatThrownBy(() -> lists().push(ListPushRequest.newBuilder().setName("list/bad")
                .setValue(ByteString.copyFrom(new byte[16 * 1024 + 1])).build()))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                    assertThat(e.getStatus().getDescription()).contains("value");
                });
        assertThat(range("list/bad").getLength()).isZero();
    }

    @Test
    void theClientsQueueHandsEachItemToOneConsumerInOrder() throws Exception {
        try (io.tenure.client.TenureClient producer = tenure.cluster().newClient();
             io.tenure.client.TenureClient consumer = tenure.cluster().newClient()) {
            io.tenure.client.TenureQueue jobs = consumer.queue("list/sdk");
            CompletableFuture<java.util.Optional<byte[]>> waiting = jobs.pollAsync(true, Duration.ofSeconds(30));
            Await.until("the consumer waits", Duration.ofSeconds(10), () -> jobs.range(0, -1).waitingLeases().size() == 1);
            io.tenure.client.TenureQueue out = producer.queue("list/sdk");
            assertThat(out.offer(bytes("first"))).as("handed to the waiting consumer").isZero();
            assertThat(new String(waiting.get(10, TimeUnit.SECONDS).orElseThrow(), java.nio.charset.StandardCharsets.UTF_8)).isEqualTo("first");
            out.offer(bytes("second"));
            out.offerFirst(bytes("urgent"));
            assertThat(jobs.size()).isEqualTo(2);
            assertThat(text(jobs.take())).isEqualTo("urgent");
            assertThat(text(jobs.poll().orElseThrow())).isEqualTo("second");
            assertThat(jobs.poll()).isEmpty();
            assertThat(jobs.poll(Duration.ofMillis(200))).as("nothing within 200 ms").isEmpty();
            assertThatThrownBy(() -> out.offer(new byte[io.tenure.client.TenureQueue.MAX_VALUE_BYTES + 1]))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("value");
        }
    }

    @Test
    void aCancelledWaitLeavesTheNextItemForTheNextConsumer() throws Exception {
        io.tenure.client.TenureQueue jobs = tenure.client().queue("list/cancelled");
        CompletableFuture<java.util.Optional<byte[]>> gaveUp = jobs.pollAsync(true, Duration.ofSeconds(30));
        Await.until("it waits", Duration.ofSeconds(10), () -> jobs.range(0, -1).waitingLeases().size() == 1);
        gaveUp.cancel(true);
        Await.until("its wait withdrawn", Duration.ofSeconds(10), () -> jobs.range(0, -1).waitingLeases().isEmpty());
        jobs.offer(bytes("kept"));
        assertThat(jobs.range(0, -1).values()).extracting(ListApiTest::text).containsExactly("kept");
    }

    private static byte[] bytes(String s) {
        return s.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }

    private static String text(byte[] b) {
        return new String(b, java.nio.charset.StandardCharsets.UTF_8);
    }
}
