package io.tenure.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.StatusRuntimeException;
import io.tenure.client.ElectionDescription;
import io.tenure.client.ElectionLatch;
import io.tenure.client.FailedPreconditionException;
import io.tenure.client.LeaderInfo;
import io.tenure.client.Lease;
import io.tenure.client.Leadership;
import io.tenure.client.LeadershipListener;
import io.tenure.client.NotElectedException;
import io.tenure.client.NotHolderException;
import io.tenure.client.TenureClient;
import io.tenure.client.TenureElection;
import io.tenure.client.Watch;
import io.tenure.proto.v1.CampaignRequest;
import io.tenure.proto.v1.ElectionServiceGrpc;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Leader elections through the Java client and the gRPC service, against one real member. */
class ElectionApiTest {
    private static final Duration TTL = Duration.ofSeconds(5);

    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.members(1);

    /** The client the tests use: the extension's, whose calls travel in the session stream. */
    TenureClient client() {
        return tenure.client();
    }

    @Test
    void candidatesLeadInTurnAndObserversSeeEveryChange() throws Exception {
        TenureClient client = client();
        Lease a = client.grantLease(TTL, "a");
        Lease b = client.grantLease(TTL, "b");
        List<Optional<LeaderInfo>> seen = new CopyOnWriteArrayList<>();
        Watch observing = client.election("leader/turns").observe(seen::add);

        Leadership first = client.election("leader/turns", a).campaign("a:1");
        CompletableFuture<Leadership> second = client.election("leader/turns", b).campaignAsync("b:1".getBytes());
        awaitCandidates(client, "leader/turns", 1);
        long proclaimed = first.proclaim("a:2");
        assertThat(second).isNotDone();
        LeaderInfo now = client.election("leader/turns").leader().orElseThrow();
        assertThat(now.valueAsString()).isEqualTo("a:2");
        assertThat(now.fencingToken()).as("a proclaim is no new election").isEqualTo(first.fencingToken());
        assertThat(now.revision()).isEqualTo(proclaimed);
        ElectionDescription described = client.election("leader/turns").describe();
        assertThat(described.leader()).hasValueSatisfying(l -> assertThat(l.leaseId()).isEqualTo(a.id()));
        assertThat(described.leaderTtlRemaining()).hasValueSatisfying(ttl -> assertThat(ttl).isPositive().isLessThanOrEqualTo(TTL));
        assertThat(described.candidates()).singleElement().satisfies(c -> {
            assertThat(c.leaseId()).isEqualTo(b.id());
            assertThat(c.clientId()).isEqualTo("b");
            assertThat(c.joinedRevision()).isPositive().isLessThan(proclaimed);
        });
        assertThat(described.revision()).isGreaterThanOrEqualTo(proclaimed);

        first.resign();
        Leadership next = second.get(10, TimeUnit.SECONDS);
        assertThat(next.fencingToken()).isGreaterThan(proclaimed);
        next.resign();
        ElectionDescription over = client.election("leader/turns").describe();
        assertThat(over.leader()).as("nobody leads").isEmpty();
        assertThat(over.leaderTtlRemaining()).isEmpty();
        assertThat(over.candidates()).isEmpty();

        Await.until("the observer to see four changes", Duration.ofSeconds(10), () -> seen.size() >= 5);
        observing.close();
        assertThat(seen.get(0)).as("nobody led when the observation started").isEmpty();
        assertThat(seen.subList(1, 5)).extracting(l -> l.map(LeaderInfo::valueAsString).orElse("none"))
                .containsExactly("a:1", "a:2", "b:1", "none");
        assertThat(seen.get(2).orElseThrow().fencingToken()).isEqualTo(first.fencingToken());
        assertThat(seen.get(3).orElseThrow().fencingToken()).isEqualTo(next.fencingToken());
        a.revoke();
        b.revoke();
    }

    @Test
    void aLatchLeadsUntilItsLeaseIsLostAndTheNextLatchTakesOver() throws Exception {
        TenureClient client = client();
        Lease mortal = client.grantLease(TTL, "mortal");
        Lease next = client.grantLease(TTL, "next");
        Events first = new Events();
        Events second = new Events();
        try (ElectionLatch one = client.election("leader/latch", mortal).latch("one", first);
             ElectionLatch two = client.election("leader/latch", next).latch("two", second)) {
            Await.until("one to lead", Duration.ofSeconds(10), one::hasLeadership);
            awaitCandidates(client, "leader/latch", 1);
            assertThat(two.hasLeadership()).isFalse();

            mortal.revoke();

            Await.until("two to lead", Duration.ofSeconds(10), two::hasLeadership);
            Await.until("one to be told", Duration.ofSeconds(10), () -> first.calls.contains("notLeader"));
            assertThat(first.calls).containsExactly("isLeader", "notLeader");
            assertThat(second.calls).containsExactly("isLeader");
            assertThat(two.leadership().orElseThrow().fencingToken()).isGreaterThan(first.token);
        }
        assertThat(second.calls).containsExactly("isLeader", "notLeader");
        assertThat(client.election("leader/latch").leader()).as("closing resigned").isEmpty();
        next.revoke();
    }

    @Test
    void aTimedOutCampaignWithdrawsAndBadRequestsAreRefused() {
        TenureClient client = client();
        Lease a = client.grantLease(TTL, "a");
        Lease b = client.grantLease(TTL, "b");
        Leadership leading = client.election("leader/bad", a).campaign("a");
        TenureElection other = client.election("leader/bad", b);

        assertThatThrownBy(() -> other.campaign("b", Duration.ofMillis(200)))
                .isInstanceOf(NotElectedException.class).hasMessageContaining("'a' leads");
        assertThat(candidates(client, "leader/bad")).as("withdrawn on the server").isZero();
        client.lock("jobs/locked", b).acquire();
        assertThatThrownBy(() -> client.election("jobs/locked", a).campaign("a", Duration.ZERO))
                .isInstanceOf(FailedPreconditionException.class).isNotInstanceOf(NotHolderException.class)
                .hasMessageContaining("'jobs/locked' is a lock, not an election");
        assertThatThrownBy(() -> client.election("leader/bad").campaign(new byte[64 * 1024 + 1]))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("over the limit");
        ElectionServiceGrpc.ElectionServiceBlockingStub raw = ElectionServiceGrpc.newBlockingStub(tenure.cluster().channel(0));
        assertThatThrownBy(() -> raw.campaign(CampaignRequest.newBuilder().setName("").setLeaseId(a.id()).build()))
                .isInstanceOf(StatusRuntimeException.class).hasMessageContaining("INVALID_ARGUMENT").hasMessageContaining("name");
        assertThatThrownBy(() -> raw.campaign(CampaignRequest.newBuilder().setName("leader/bad").setLeaseId(a.id()).setTimeoutMs(-5).build()))
                .hasMessageContaining("timeout_ms");
        leading.resign();
        assertThatThrownBy(() -> leading.proclaim("late")).isInstanceOf(NotHolderException.class);
        leading.resign(); // again: a no-op
        a.revoke();
        b.revoke();
    }

    private static int candidates(TenureClient client, String name) {
        return client.election(name).describe().candidates().size();
    }

    private static void awaitCandidates(TenureClient client, String name, int count) {
        Await.until("election " + name + " to have " + count + " candidates", Duration.ofSeconds(10),
                () -> candidates(client, name) >= count);
    }

    private static final class Events implements LeadershipListener {
        final List<String> calls = new CopyOnWriteArrayList<>();
        volatile long token;

        @Override
        public void isLeader(Leadership leadership) {
            token = leadership.fencingToken();
            calls.add("isLeader");
        }

        @Override
        public void notLeader() {
            calls.add("notLeader");
        }
    }
}
