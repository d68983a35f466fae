package io.tenure.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.StatusRuntimeException;
import io.tenure.client.FailedPreconditionException;
import io.tenure.client.Lease;
import io.tenure.client.LeaseLostException;
import io.tenure.client.TenureClient;
import io.tenure.client.TenureBarrier;
import io.tenure.client.TenureDoubleBarrier;
import io.tenure.proto.v1.DoubleBarrierEnterRequest;
import io.tenure.proto.v1.DoubleBarrierLeaveRequest;
import io.tenure.proto.v1.DoubleBarrierServiceGrpc;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Double barriers through the Java client and the gRPC service, against one real member. */
class DoubleBarrierApiTest {
    private static final Duration TTL = Duration.ofSeconds(5);

    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.members(1);

    @Test
    void threeClientsEnterTogetherAndLeaveTogether() throws Exception {
        List<TenureClient> clients = List.of(tenure.cluster().newClient(), tenure.cluster().newClient(), tenure.cluster().newClient());
        try {
            List<TenureDoubleBarrier> parties = clients.stream().map(c -> c.doubleBarrier("round/a", 3)).toList();
            CompletableFuture<TenureDoubleBarrier.Entry> first = parties.get(0).enterAsync();
            CompletableFuture<TenureDoubleBarrier.Entry> second = parties.get(1).enterAsync();
            Await.until("two entering", Duration.ofSeconds(10), () -> describe("round/a").entering().size() == 2);
            assertThat(first).isNotDone();

            long entered = parties.get(2).enter();

            assertThat(first.get(10, TimeUnit.SECONDS).revision()).isEqualTo(entered);
            assertThat(second.get(10, TimeUnit.SECONDS).revision()).isEqualTo(entered);
            TenureDoubleBarrier.Description inside = describe("round/a");
            assertThat(inside.inside()).hasSize(3);
            assertThat(inside.enteredRevision()).isEqualTo(entered);
            assertThat(parties.get(0).enter(Duration.ZERO)).as("entering again answers again").isTrue();

            CompletableFuture<TenureDoubleBarrier.Exit> firstOut = parties.get(0).leaveAsync();
            CompletableFuture<TenureDoubleBarrier.Exit> secondOut = parties.get(1).leaveAsync();
            Await.until("two leaving", Duration.ofSeconds(10), () -> describe("round/a").leaving().size() == 2);
            assertThat(firstOut).as("one party is still inside").isNotDone();

            long left = parties.get(2).leave();

            assertThat(left).isGreaterThan(entered);
            assertThat(firstOut.get(10, TimeUnit.SECONDS).revision()).isEqualTo(left);
            assertThat(secondOut.get(10, TimeUnit.SECONDS).revision()).isEqualTo(left);
            assertThat(describe("round/a").exists()).as("the generation is over").isFalse();
            assertThat(parties.get(0).leave(Duration.ZERO)).as("no party any more: nothing to wait for").isTrue();
        } finally {
            clients.forEach(TenureClient::close);
        }
    }

    @Test
    void aTimedOutEnterWithdrawsAndATimedOutLeaveHasLeftAllTheSame() {
        TenureClient client = tenure.client();
        Lease a = client.grantLease(TTL, "a");
        Lease b = client.grantLease(TTL, "b");

        assertThat(client.doubleBarrier("round/timeout", 2, a).enter(Duration.ofMillis(200))).isFalse();
        assertThat(describe("round/timeout").exists()).as("the timed-out entry was withdrawn").isFalse();

        CompletableFuture<TenureDoubleBarrier.Entry> waiting = client.doubleBarrier("round/timeout", 2, a).enterAsync();
        Await.until("one entering", Duration.ofSeconds(10), () -> describe("round/timeout").entering().size() == 1);
        assertThat(client.doubleBarrier("round/timeout", 2, b).enter(Duration.ofSeconds(5))).isTrue();
        assertThat(waiting.join().entered()).isTrue();

        assertThat(client.doubleBarrier("round/timeout", 2, a).leave(Duration.ofMillis(200))).isFalse();
        TenureDoubleBarrier.Description half = describe("round/timeout");
        assertThat(half.left()).extracting(TenureDoubleBarrier.Party::clientId).as("left, not waiting").containsExactly("a");
        assertThat(half.inside()).extracting(TenureDoubleBarrier.Party::clientId).containsExactly("b");
        CompletableFuture<TenureDoubleBarrier.Exit> again = client.doubleBarrier("round/timeout", 2, a).leaveAsync();
        Await.until("a waiting again", Duration.ofSeconds(10), () -> describe("round/timeout").leaving().size() == 1);

        long left = client.doubleBarrier("round/timeout", 2, b).leave();

        assertThat(again.join().revision()).isEqualTo(left);
        assertThat(describe("round/timeout").exists()).isFalse();
        a.revoke();
        b.revoke();
    }

    @Test
    void aPartyWhoseLeaseEndsLeavesInEitherPhase() throws Exception {
        TenureClient client = tenure.client();
        Lease mortal = client.grantLease(TTL, "mortal");
        Lease a = client.grantLease(TTL, "a");
        Lease b = client.grantLease(TTL, "b");
        CompletableFuture<TenureDoubleBarrier.Entry> dying = client.doubleBarrier("round/end", 3, mortal).enterAsync();
        Await.until("one entering", Duration.ofSeconds(10), () -> describe("round/end").entering().size() == 1);
        mortal.revoke();
        assertThatThrownBy(() -> dying.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(LeaseLostException.class);
        Await.until("the entry withdrawn", Duration.ofSeconds(10), () -> !describe("round/end").exists());

        Lease inside = client.grantLease(TTL, "inside");
        List<CompletableFuture<TenureDoubleBarrier.Entry>> entering = new ArrayList<>();
        for (Lease lease : List.of(inside, a)) {
            entering.add(client.doubleBarrier("round/end", 3, lease).enterAsync());
        }
        client.doubleBarrier("round/end", 3, b).enter();
        entering.forEach(CompletableFuture::join);
        CompletableFuture<TenureDoubleBarrier.Exit> aOut = client.doubleBarrier("round/end", 3, a).leaveAsync();
        CompletableFuture<TenureDoubleBarrier.Exit> bOut = client.doubleBarrier("round/end", 3, b).leaveAsync();
        Await.until("two leaving", Duration.ofSeconds(10), () -> describe("round/end").leaving().size() == 2);
        assertThat(aOut).isNotDone();

        inside.revoke();

        assertThat(aOut.get(10, TimeUnit.SECONDS).left()).as("the ended party counts as having left").isTrue();
        assertThat(bOut.get(10, TimeUnit.SECONDS).revision()).isEqualTo(aOut.join().revision());
        assertThat(describe("round/end").exists()).isFalse();
        a.revoke();
        b.revoke();
    }

    @Test
    void closeLeavesWithoutWaiting() {
        TenureClient client = tenure.client();
        Lease a = client.grantLease(TTL, "a");
        Lease b = client.grantLease(TTL, "b");
        TenureDoubleBarrier aParty = client.doubleBarrier("round/close", 2, a);
        CompletableFuture<TenureDoubleBarrier.Entry> entering = aParty.enterAsync();
        try (TenureDoubleBarrier bParty = client.doubleBarrier("round/close", 2, b)) {
            bParty.enter();
        }
        assertThat(entering.join().entered()).isTrue();
        assertThat(describe("round/close").left()).extracting(TenureDoubleBarrier.Party::clientId).containsExactly("b");
        assertThat(aParty.leave(Duration.ofSeconds(5))).as("b left on close").isTrue();
        a.revoke();
        b.revoke();
    }

    @Test
    void badRequestsAreRefusedAndNothingChanges() {
        TenureClient client = tenure.client();
        Lease a = client.grantLease(TTL, "a");
        Lease b = client.grantLease(TTL, "b");
        CompletableFuture<TenureDoubleBarrier.Entry> waiting = client.doubleBarrier("round/bad", 3, a).enterAsync();
        Await.until("one entering", Duration.ofSeconds(10), () -> describe("round/bad").entering().size() == 1);

        assertThatThrownBy(() -> client.doubleBarrier("round/bad", 4, b).enter(Duration.ofSeconds(1)))
                .isInstanceOf(FailedPreconditionException.class)
                .hasMessageContaining("parties: double barrier 'round/bad' has 3 parties, not 4");
        assertThatThrownBy(() -> client.doubleBarrier("round/bad", 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("parties must be between 1 and 1000000");
        // Barriers and double barriers share a namespace of their own: a waited-at barrier's name is refused.
        CompletableFuture<TenureBarrier.Release> gate = client.barrier("gate/taken", 2, b).awaitAsync();
        Await.until("a party at the barrier", Duration.ofSeconds(10), () -> client.barrier("gate/taken", 2).describe().exists());
        assertThatThrownBy(() -> client.doubleBarrier("gate/taken", 2, a).enter(Duration.ZERO))
                .isInstanceOf(FailedPreconditionException.class)
                .hasMessageContaining("'gate/taken' is a barrier, not a double barrier");
        assertThat(gate).isNotDone();
        client.barrier("gate/single", 2, b).await(Duration.ZERO);
        DoubleBarrierServiceGrpc.DoubleBarrierServiceBlockingStub raw = DoubleBarrierServiceGrpc.newBlockingStub(tenure.cluster().channel(0));
        assertThatThrownBy(() -> raw.enter(DoubleBarrierEnterRequest.newBuilder().setName("round/raw").setLeaseId(a.id())
                .setParties(1_000_001).build()))
                .isInstanceOf(StatusRuntimeException.class).hasMessageContaining("INVALID_ARGUMENT").hasMessageContaining("parties");
        assertThatThrownBy(() -> raw.enter(DoubleBarrierEnterRequest.newBuilder().setName("").setLeaseId(a.id()).setParties(2).build()))
                .isInstanceOf(StatusRuntimeException.class).hasMessageContaining("INVALID_ARGUMENT").hasMessageContaining("name");
        assertThatThrownBy(() -> raw.enter(DoubleBarrierEnterRequest.newBuilder().setName("round/raw").setLeaseId(a.id()).setParties(2)
                .setTimeoutMs(-5).build()))
                .isInstanceOf(StatusRuntimeException.class).hasMessageContaining("INVALID_ARGUMENT").hasMessageContaining("timeout_ms");
        assertThatThrownBy(() -> raw.leave(DoubleBarrierLeaveRequest.newBuilder().setName("round/raw").setLeaseId(987_654_321).build()))
                .isInstanceOf(StatusRuntimeException.class).hasMessageContaining("NOT_FOUND");
        assertThat(describe("round/bad").entering()).extracting(TenureDoubleBarrier.Party::clientId).containsExactly("a");
        assertThat(describe("round/raw").exists()).isFalse();
        assertThat(waiting).isNotDone();
        a.revoke();
        b.revoke();
    }

    private static TenureDoubleBarrier.Description describe(String name) {
        return tenure.client().doubleBarrier(name, 1).describe();
    }
}
