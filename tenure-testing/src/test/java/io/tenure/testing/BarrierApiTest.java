package io.tenure.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.StatusRuntimeException;
import io.tenure.client.FailedPreconditionException;
import io.tenure.client.Lease;
import io.tenure.client.TenureBarrier;
import io.tenure.client.TenureClient;
import io.tenure.proto.v1.BarrierAwaitRequest;
import io.tenure.proto.v1.BarrierServiceGrpc;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Barriers through the Java client and the gRPC service, against one real member. */
class BarrierApiTest {
    private static final Duration TTL = Duration.ofSeconds(5);

    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.members(1);

    @Test
    void theLastArrivalReleasesEveryPartyTogether() throws Exception {
        TenureClient client = tenure.client();
        Lease a = client.grantLease(TTL, "a");
        Lease b = client.grantLease(TTL, "b");
        Lease c = client.grantLease(TTL, "c");
        CompletableFuture<TenureBarrier.Release> first = client.barrier("gate/start", 3, a).awaitAsync();
        CompletableFuture<TenureBarrier.Release> second = client.barrier("gate/start", 3, b).awaitAsync();
        awaitWaiting(client, "gate/start", 2);
        assertThat(client.barrier("gate/start", 3).describe().waiting()).extracting(TenureBarrier.Party::clientId)
                .containsExactly("a", "b");
        assertThat(first).isNotDone();

        long revision = client.barrier("gate/start", 3, c).await();

        assertThat(first.get(10, TimeUnit.SECONDS).revision()).isEqualTo(revision);
        assertThat(second.get(10, TimeUnit.SECONDS).revision()).isEqualTo(revision);
        assertThat(client.barrier("gate/start", 3).describeAsync().get(10, TimeUnit.SECONDS).exists()).as("a new round starts empty").isFalse();
        List.of(a, b, c).forEach(Lease::revoke);
    }

    @Test
    void aTimeoutOrAnEndedLeaseLeavesTheBarrier() throws Exception {
        TenureClient client = tenure.client();
        Lease mortal = client.grantLease(TTL, "mortal");
        Lease patient = client.grantLease(TTL, "patient");
        CompletableFuture<TenureBarrier.Release> dying = client.barrier("gate/leave", 3, mortal).awaitAsync();
        awaitWaiting(client, "gate/leave", 1);

        assertThat(client.barrier("gate/leave", 3, patient).await(Duration.ofMillis(200))).isFalse();
        assertThat(client.barrier("gate/leave", 3).describe().waiting()).extracting(TenureBarrier.Party::clientId)
                .as("the timed-out party left").containsExactly("mortal");
        mortal.revoke();
        assertThatThrownBy(() -> dying.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(io.tenure.client.LeaseLostException.class);
        Await.until("the barrier to empty", Duration.ofSeconds(10), () -> !client.barrier("gate/leave", 3).describe().exists());
        patient.revoke();
    }

    @Test
    void badRequestsAreRefusedAndNothingChanges() {
        TenureClient client = tenure.client();
        Lease a = client.grantLease(TTL, "a");
        Lease b = client.grantLease(TTL, "b");
        CompletableFuture<TenureBarrier.Release> waiting = client.barrier("gate/bad", 3, a).awaitAsync();
        awaitWaiting(client, "gate/bad", 1);

        assertThatThrownBy(() -> client.barrier("gate/bad", 4, b).await(Duration.ofSeconds(1)))
                .isInstanceOf(FailedPreconditionException.class).hasMessageContaining("barrier 'gate/bad' has 3 parties, not 4");
        assertThatThrownBy(() -> client.barrier("gate/bad", 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("parties must be between 1 and 100000");
        // Barriers have a namespace of their own (seed 004): a barrier may have a held lock's name.
        client.lock("jobs/locked", b).acquire();
        assertThat(client.barrier("jobs/locked", 1, a).await()).as("a barrier of one party named like a held lock").isPositive();
        BarrierServiceGrpc.BarrierServiceBlockingStub raw = BarrierServiceGrpc.newBlockingStub(tenure.cluster().channel(0));
        assertThatThrownBy(() -> raw.await(BarrierAwaitRequest.newBuilder().setName("gate/raw").setLeaseId(a.id()).setParties(0).build()))
                .isInstanceOf(StatusRuntimeException.class).hasMessageContaining("INVALID_ARGUMENT").hasMessageContaining("parties");
        assertThat(client.barrier("gate/bad", 3).describe().waiting()).hasSize(1);
        assertThat(waiting).isNotDone();
        a.revoke();
        b.revoke();
    }

    private static void awaitWaiting(TenureClient client, String name, int count) {
        Await.until("barrier " + name + " to have " + count + " waiting", Duration.ofSeconds(10),
                () -> client.barrier(name, 1).describe().waiting().size() >= count);
    }
}
