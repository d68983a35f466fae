package io.tenure.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.StatusRuntimeException;
import io.tenure.client.FailedPreconditionException;
import io.tenure.client.Lease;
import io.tenure.client.LeaseLostException;
import io.tenure.client.TenureClient;
import io.tenure.client.TenureCountDownLatch;
import io.tenure.proto.v1.LatchCountDownRequest;
import io.tenure.proto.v1.LatchCountDownResponse;
import io.tenure.proto.v1.LatchServiceGrpc;
import io.tenure.proto.v1.LatchSetCountRequest;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Count-down latches through the Java client and the gRPC service, against one real member. */
class LatchApiTest {
    private static final Duration TTL = Duration.ofSeconds(5);

    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.members(1);

    @Test
    void aWaiterOfOneClientIsReleasedByAnotherClientsCountDowns() throws Exception {
        try (TenureClient waiting = tenure.cluster().newClient(); TenureClient working = tenure.cluster().newClient()) {
            TenureCountDownLatch shards = working.countDownLatch("latch/shards");
            assertThat(shards.trySetCount(3)).isTrue();
            assertThat(shards.trySetCountAsync(5).get(10, TimeUnit.SECONDS)).as("it exists: the count stays").isFalse();
            CompletableFuture<Boolean> first = waiting.countDownLatch("latch/shards").awaitAsync();
            CompletableFuture<Boolean> second = waiting.countDownLatch("latch/shards", waiting.grantLease(TTL, "second"))
                    .awaitAsync(Duration.ofSeconds(30));
            Await.until("two waiters", Duration.ofSeconds(10), () -> shards.describe().waiting().size() == 2);

            assertThat(shards.countDown()).isEqualTo(2);
            assertThat(shards.countDownAsync().get(10, TimeUnit.SECONDS)).isEqualTo(1);
            assertThat(shards.getCount()).isEqualTo(1);
            assertThat(first).isNotDone();
            assertThat(shards.countDown()).isZero();

            assertThat(first.get(10, TimeUnit.SECONDS)).isTrue();
            assertThat(second.get(10, TimeUnit.SECONDS)).isTrue();
            assertThat(shards.describe().exists()).as("gone at zero").isFalse();
            assertThat(shards.getCountAsync().get(10, TimeUnit.SECONDS)).isZero();
            assertThat(shards.countDown()).as("counting down an absent latch changes nothing").isZero();
            assertThat(waiting.countDownLatch("latch/shards").await()).as("absent: open at once").isTrue();
            assertThat(shards.trySetCount(1)).as("set again after zero").isTrue();
            assertThat(shards.countDown()).isZero();
        }
    }

    @Test
    void aTimeoutOrAnEndedLeaseWithdrawsTheWaitAndKeepsTheCount() throws Exception {
        TenureClient client = tenure.client();
        TenureCountDownLatch latch = client.countDownLatch("latch/timeout");
        latch.trySetCount(2);
        Lease mortal = client.grantLease(TTL, "mortal");
        CompletableFuture<Boolean> dying = client.countDownLatch("latch/timeout", mortal).awaitAsync();
        Await.until("a waiter", Duration.ofSeconds(10), () -> latch.describe().waiting().size() == 1);

        assertThat(latch.await(Duration.ofMillis(200))).isFalse();
        assertThat(latch.await(Duration.ZERO)).isFalse();
        assertThat(latch.describe().waiting()).extracting(TenureCountDownLatch.Waiter::clientId)
                .as("the timed-out wait withdrawn").containsExactly("mortal");
        mortal.revoke();
        assertThatThrownBy(() -> dying.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(LeaseLostException.class);
        Await.until("no waiter", Duration.ofSeconds(10), () -> latch.describe().waiting().isEmpty());
        assertThat(latch.getCount()).isEqualTo(2);
        latch.countDown();
        latch.countDown();
    }

    @Test
    void aCountDownRetriedWithItsRequestIdCountsOnce() {
        LatchServiceGrpc.LatchServiceBlockingStub raw = LatchServiceGrpc.newBlockingStub(tenure.cluster().channel(0));
        raw.trySetCount(LatchSetCountRequest.newBuilder().setName("latch/retry").setCount(3).setRequestId(41).build());
        LatchCountDownRequest down = LatchCountDownRequest.newBuilder().setName("latch/retry").setRequestId(42).build();

        LatchCountDownResponse first = raw.countDown(down);
        LatchCountDownResponse retry = raw.countDown(down);

        assertThat(first.getCount()).isEqualTo(2);
        assertThat(retry.getCount()).isEqualTo(2);
        assertThat(tenure.client().countDownLatch("latch/retry").getCount()).isEqualTo(2);
        assertThat(raw.trySetCount(LatchSetCountRequest.newBuilder().setName("latch/retry").setCount(3).setRequestId(41).build()).getSet())
                .as("a retried set-count is answered as the first").isTrue();
        raw.countDown(LatchCountDownRequest.newBuilder().setName("latch/retry").build());
        raw.countDown(LatchCountDownRequest.newBuilder().setName("latch/retry").build());
    }

    @Test
    void watchesSeeAPutWithTheCountAtTheSetAndEachCountDownAndADeleteAtZero() throws Exception {
        TenureClient client = tenure.client();
        java.util.List<io.tenure.client.WatchEvent> events = new java.util.concurrent.CopyOnWriteArrayList<>();
        TenureCountDownLatch latch = client.countDownLatch("latch/watched");
        long from = latch.describe().revision() + 1;
        try (io.tenure.client.Watch watch = client.watch("latch/watched", from, new io.tenure.client.WatchListener() {
            @Override
            public void onEvent(io.tenure.client.WatchEvent event) {
                events.add(event);
            }

            @Override
            public void onCompacted(long compactRevision) {
            }

            @Override
            public void onError(io.tenure.client.TenureException error) {
            }
        })) {
            latch.trySetCount(2);
            latch.countDown();
            latch.countDown();

            Await.until("three events", Duration.ofSeconds(10), () -> events.size() >= 3);
            assertThat(events).extracting(e -> e.type().name() + " " + new String(e.metadata(), java.nio.charset.StandardCharsets.US_ASCII))
                    .containsExactly("PUT 2", "PUT 1", "DELETE ");
            assertThat(events.get(1).revision()).isGreaterThan(events.get(0).revision());
            assertThat(events.get(2).revision()).isGreaterThan(events.get(1).revision());
        }
    }

    @Test
    void badRequestsAreRefusedAndNothingChanges() {
        TenureClient client = tenure.client();
        Lease holder = client.grantLease(TTL, "holder");
        client.lock("latch/locked", holder).acquire();
        TenureCountDownLatch latch = client.countDownLatch("latch/bad");

        assertThatThrownBy(() -> latch.trySetCount(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("count must be between 1 and 1000000");
        assertThatThrownBy(() -> client.countDownLatch(" ")).isInstanceOf(IllegalArgumentException.class);
        // Latches have a namespace of their own: a held lock's name is free for a latch.
        assertThat(client.countDownLatch("latch/locked").trySetCount(1)).isTrue();
        assertThat(client.countDownLatch("latch/locked").countDown()).isZero();
        assertThat(client.countDownLatch("latch/locked").await(Duration.ZERO)).isTrue();
        LatchServiceGrpc.LatchServiceBlockingStub raw = LatchServiceGrpc.newBlockingStub(tenure.cluster().channel(0));
        assertThatThrownBy(() -> raw.trySetCount(LatchSetCountRequest.newBuilder().setName("latch/raw").setCount(1_000_001).build()))
                .isInstanceOf(StatusRuntimeException.class).hasMessageContaining("INVALID_ARGUMENT").hasMessageContaining("count");
        assertThatThrownBy(() -> raw.trySetCount(LatchSetCountRequest.newBuilder().setName("").setCount(1).build()))
                .isInstanceOf(StatusRuntimeException.class).hasMessageContaining("INVALID_ARGUMENT").hasMessageContaining("name");
        assertThatThrownBy(() -> raw.await(io.tenure.proto.v1.LatchAwaitRequest.newBuilder().setName("latch/raw").setLeaseId(987654321).build()))
                .isInstanceOf(StatusRuntimeException.class).hasMessageContaining("NOT_FOUND");
        assertThat(latch.describe().exists()).isFalse();
        assertThat(client.countDownLatch("latch/raw").getCount()).isZero();

        latch.trySetCount(1);
        client.lock("latch/bad", holder).acquire(Duration.ZERO).release();
        assertThat(latch.getCount()).as("the lock of the same name left the latch alone").isOne();
        latch.countDown();
        holder.revoke();
    }
}
