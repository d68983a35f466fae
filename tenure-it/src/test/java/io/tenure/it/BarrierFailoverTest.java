package io.tenure.it;

import io.tenure.client.FailedPreconditionException;
import io.tenure.client.Lease;
import io.tenure.client.TenureBarrier;
import io.tenure.client.TenureClient;
import io.tenure.testing.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A barrier across {@code kill -9} of the leader, with real processes: the parties that arrived
 * before the kill keep their places in order (their waits fail over to a survivor), nobody is
 * released early, the number of parties still holds, and the last arrival after the failover
 * releases every party together, all with one revision.
 */
@ExtendWith(ItLogs.class)
class BarrierFailoverTest {
    static final Duration TTL = Duration.ofSeconds(30);
    static final String GATE = "failover/gate";
    static final int PARTIES = 4;

    @TempDir
    Path work;

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void thePartiesWaitingAtABarrierSurviveALeaderKillAndAreReleasedTogether() throws Exception {
        try (Cluster cluster = Cluster.start(work, 3);
             TenureClient client = TenureClient.connect(cluster.endpoints())) {
            List<Lease> leases = new ArrayList<>();
            List<CompletableFuture<TenureBarrier.Release>> waiting = new ArrayList<>();
            for (int i = 0; i < PARTIES - 1; i++) {
                Lease lease = client.grantLease(TTL, "party-" + i);
                leases.add(lease);
                waiting.add(client.barrier(GATE, PARTIES, lease).awaitAsync());
                awaitWaiting(client, i + 1);
            }

            String leader = cluster.leader();
            cluster.kill9(leader);
            String newLeader = cluster.awaitNewLeader(leader, Cluster.ELECTION_LIMIT);

            TenureBarrier.Description after = client.barrier(GATE, PARTIES).describe();
            assertThat(after.waiting()).as("the parties after " + leader + " was killed (" + newLeader + " leads)")
                    .extracting(TenureBarrier.Party::clientId).containsExactly("party-0", "party-1", "party-2");
            assertThat(waiting).as("nobody released early").noneMatch(CompletableFuture::isDone);
            assertThat(leases).allSatisfy(lease -> assertThat(lease.isValid()).as(lease.clientId() + " still valid").isTrue());
            Lease last = client.grantLease(TTL, "party-3");
            leases.add(last);
            assertThatThrownBy(() -> client.barrier(GATE, PARTIES + 1, last).await(Duration.ZERO))
                    .isInstanceOf(FailedPreconditionException.class).hasMessageContaining("has " + PARTIES + " parties");

            long revision = client.barrier(GATE, PARTIES, last).await();

            for (CompletableFuture<TenureBarrier.Release> party : waiting) {
                TenureBarrier.Release release = party.get(30, TimeUnit.SECONDS);
                assertThat(release.released()).isTrue();
                assertThat(release.revision()).as("one release for every party").isEqualTo(revision);
            }
            assertThat(client.barrier(GATE, PARTIES).describe().exists()).isFalse();
            leases.forEach(Lease::revoke);
        }
    }

    private static void awaitWaiting(TenureClient client, int count) {
        Await.until("barrier " + GATE + " to have " + count + " waiting", Duration.ofSeconds(30),
                () -> client.barrier(GATE, PARTIES).describe().waiting().size() >= count);
    }
}
