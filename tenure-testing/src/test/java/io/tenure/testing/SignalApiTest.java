package io.tenure.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.tenure.client.InvalidArgumentException;
import io.tenure.client.Lease;
import io.tenure.client.LeaseNotFoundException;
import io.tenure.client.SignalListener;
import io.tenure.client.Subscription;
import io.tenure.client.TenureException;
import io.tenure.client.TenureTopic;
import io.tenure.proto.v1.SignalListenRequest;
import io.tenure.proto.v1.SignalListenResponse;
import io.tenure.proto.v1.SignalPublishRequest;
import io.tenure.proto.v1.SignalServiceGrpc;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Signals through the Java client and the gRPC service, against one real member (each test has its own channels). */
class SignalApiTest {
    private static final Duration WAIT = Duration.ofSeconds(20);

    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.members(1);

    /** Collects what a subscription receives. */
    private static final class Received implements SignalListener {
        final List<String> signals = Collections.synchronizedList(new ArrayList<>());
        final AtomicReference<TenureException> error = new AtomicReference<>();

        @Override
        public void onSignal(String channel, byte[] payload) {
            signals.add(channel + "=" + new String(payload, StandardCharsets.UTF_8));
        }

        @Override
        public void onError(TenureException e) {
            error.set(e);
        }

        int size() {
            return signals.size();
        }
    }

    private static Subscription started(Subscription s) throws Exception {
        s.started().get(20, TimeUnit.SECONDS);
        return s;
    }

    @Test
    void aSignalReachesEveryListenerWhosePatternMatchesInPublishOrder() throws Exception {
        TenureTopic topic = tenure.client().topic();
        Received exact = new Received();
        Received one = new Received();
        Received rest = new Received();
        Received other = new Received();
        try (Subscription a = started(topic.listen("orders.created", exact));
             Subscription b = started(topic.listen("orders.*", one));
             Subscription c = started(topic.listen("orders.>", rest));
             Subscription d = started(topic.listen("invoices.>", other))) {
            assertThat(topic.publish("orders.created", "1")).isEqualTo(3);
            assertThat(topic.publish("orders.created.eu", "2")).isEqualTo(1);
            assertThat(topic.publish("shipments.sent", "3")).isZero();
            for (int i = 4; i < 54; i++) {
                topic.publishAsync("orders.updated", String.valueOf(i).getBytes(StandardCharsets.UTF_8));
            }
            Await.until("every signal delivered", WAIT, () -> rest.size() == 52 && one.size() == 51);
            assertThat(exact.signals).containsExactly("orders.created=1");
            assertThat(rest.signals.subList(0, 2)).containsExactly("orders.created=1", "orders.created.eu=2");
            List<String> updates = new ArrayList<>();
            for (int i = 4; i < 54; i++) {
                updates.add("orders.updated=" + i);
            }
            // Async publishes from one client may be applied in any order; each listener sees the order applied.
            assertThat(one.signals.subList(1, 51)).containsExactlyInAnyOrderElementsOf(updates)
                    .containsExactlyElementsOf(rest.signals.subList(2, 52));
            assertThat(other.signals).isEmpty();
        }
    }

    @Test
    void aQueueGroupGetsEachSignalOnceServedInTurn() throws Exception {
        TenureTopic topic = tenure.client().topic();
        List<Received> workers = List.of(new Received(), new Received(), new Received());
        Received auditor = new Received();
        List<Subscription> subscriptions = new ArrayList<>();
        try {
            for (Received w : workers) {
                subscriptions.add(started(topic.listen("jobs.*", "workers", w)));
            }
            subscriptions.add(started(topic.listen("jobs.>", auditor)));
            for (int i = 0; i < 30; i++) {
                assertThat(topic.publish("jobs.build", "j" + i)).as("one worker and the auditor").isEqualTo(2);
            }
            Await.until("30 jobs handed out", WAIT, () -> workers.stream().mapToInt(Received::size).sum() == 30 && auditor.size() == 30);
            assertThat(workers).allSatisfy(w -> assertThat(w.signals).as("round-robin").hasSize(10));
            List<String> all = new ArrayList<>();
            workers.forEach(w -> all.addAll(w.signals));
            assertThat(all).as("each job to one worker").doesNotHaveDuplicates().hasSize(30);

            subscriptions.get(0).close();
            Await.until("the closed worker's listener is gone", WAIT, () -> topic.publish("jobs.probe", "p") == 2
                    && workers.get(0).signals.stream().noneMatch(s -> s.startsWith("jobs.probe")));
        } finally {
            subscriptions.forEach(Subscription::close);
        }
    }

    @Test
    void aListenerGoesWithItsLease() throws Exception {
        TenureTopic topic = tenure.client().topic();
        Lease lease = tenure.client().grantLease(Duration.ofSeconds(10));
        Received received = new Received();
        Subscription s = started(topic.listen("alerts.>", "", lease, received));
        assertThat(topic.publish("alerts.disk", "full")).isEqualTo(1);
        lease.revoke();
        Await.until("the subscription ended", WAIT, () -> !s.isOpen());
        assertThat(received.error.get()).isInstanceOf(LeaseNotFoundException.class).hasMessageContaining("ended");
        assertThat(topic.publish("alerts.disk", "again")).isZero();
        assertThat(received.signals).containsExactly("alerts.disk=full");
    }

    @Test
    void badInputIsRefusedNamingTheField() throws Exception {
        TenureTopic topic = tenure.client().topic();
        assertThatThrownBy(() -> topic.publish("orders.*", "x")).isInstanceOf(InvalidArgumentException.class)
                .hasMessageContaining("channel").hasMessageContaining("wildcard");
        assertThatThrownBy(() -> topic.publish("", "x")).isInstanceOf(InvalidArgumentException.class).hasMessageContaining("channel");
        assertThatThrownBy(() -> topic.publish("a.b", new byte[64 * 1024 + 1])).isInstanceOf(InvalidArgumentException.class)
                .hasMessageContaining("payload");
        Received received = new Received();
        Subscription bad = topic.listen("orders.>.eu", received);
        assertThatThrownBy(() -> bad.started().get(20, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(InvalidArgumentException.class).hasMessageContaining("pattern").hasMessageContaining("last");
        assertThat(received.error.get()).isInstanceOf(InvalidArgumentException.class);
        assertThat(bad.isOpen()).isFalse();

        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", tenure.cluster().server(0).clientPort()).usePlaintext().build();
        try {
            Iterator<SignalListenResponse> unbound = SignalServiceGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
                    .listen(SignalListenRequest.newBuilder().setPattern("a.>").build());
            assertThatThrownBy(unbound::next).isInstanceOf(StatusRuntimeException.class)
                    .satisfies(e -> assertThat(Status.fromThrowable(e).getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT))
                    .hasMessageContaining("lease_id");
            Iterator<SignalListenResponse> noLease = SignalServiceGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
                    .listen(SignalListenRequest.newBuilder().setPattern("a.>").setLeaseId(424242).build());
            assertThatThrownBy(noLease::next).satisfies(e -> assertThat(Status.fromThrowable(e).getCode()).isEqualTo(Status.Code.NOT_FOUND));
            assertThatThrownBy(() -> SignalServiceGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
                    .publish(SignalPublishRequest.newBuilder().setChannel("a..b").setPayload(ByteString.EMPTY).build()))
                    .satisfies(e -> assertThat(Status.fromThrowable(e).getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT))
                    .hasMessageContaining("channel").hasMessageContaining("empty token");
        } finally {
            channel.shutdownNow();
        }
    }

    @Test
    void aRawListenStreamNamesItsListenerThenCarriesSignals() throws Exception {
        Lease lease = tenure.client().grantLease(Duration.ofSeconds(10));
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", tenure.cluster().server(0).clientPort()).usePlaintext().build();
        try {
            Iterator<SignalListenResponse> stream = SignalServiceGrpc.newBlockingStub(channel).withDeadlineAfter(20, TimeUnit.SECONDS)
                    .listen(SignalListenRequest.newBuilder().setPattern("raw.*").setLeaseId(lease.id()).build());
            SignalListenResponse first = stream.next();
            assertThat(first.getListenerId()).isNotZero();
            assertThat(first.getSignalsList()).isEmpty();
            assertThat(tenure.client().topic().publish("raw.x", "hello")).isOne();
            SignalListenResponse next = stream.next();
            assertThat(next.getSignals(0).getChannel()).isEqualTo("raw.x");
            assertThat(next.getSignals(0).getPayload().toStringUtf8()).isEqualTo("hello");
        } finally {
            channel.shutdownNow();
            lease.revoke();
        }
    }
}
