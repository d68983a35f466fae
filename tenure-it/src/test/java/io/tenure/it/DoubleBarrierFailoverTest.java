package io.tenure.it;

import io.tenure.client.FailedPreconditionException;
import io.tenure.client.Lease;
import io.tenure.client.TenureClient;
import io.tenure.client.TenureDoubleBarrier;
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
 * A double barrier across {@code kill -9} of the leader in each phase, with real processes: the
 * leases waiting to enter keep their places (their waits fail over to a survivor) and nobody is
 * let in early; then, with the killed member back, the parties waiting to leave keep waiting
 * across a second leader kill and nobody is let go early; the last entrant and the last leaver
 * each let every party through together, with one revision.
 */
@ExtendWith(ItLogs.class)
class DoubleBarrierFailoverTest {
    static final Duration TTL = Duration.ofSeconds(30);
    static final String ROUND = "failover/round";
    static final int PARTIES = 3;

    @TempDir
    Path work;

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void thePartiesOfADoubleBarrierSurviveALeaderKillInEachPhase() throws Exception {
        try (Cluster cluster = Cluster.start(work, 3);
             TenureClient client = TenureClient.connect(cluster.endpoints())) {
            List<Lease> leases = new ArrayList<>();
            for (int i = 0; i < PARTIES; i++) {
                leases.add(client.grantLease(TTL, "party-" + i));
            }
            List<CompletableFuture<TenureDoubleBarrier.Entry>> entering = new ArrayList<>();
            for (int i = 0; i < PARTIES - 1; i++) {
                entering.add(party(client, leases.get(i)).enterAsync());
                int count = i + 1;
                Await.until(count + " entering", Duration.ofSeconds(30), () -> describe(client).entering().size() >= count);
            }

            String leader = cluster.leader();
            cluster.kill9(leader);
            String newLeader = cluster.awaitNewLeader(leader, Cluster.ELECTION_LIMIT);

            assertThat(describe(client).entering()).as("waiting to enter after " + leader + " was killed (" + newLeader + " leads)")
                    .extracting(TenureDoubleBarrier.Party::clientId).containsExactly("party-0", "party-1");
            assertThat(entering).as("nobody let in early").noneMatch(CompletableFuture::isDone);
            assertThatThrownBy(() -> client.doubleBarrier(ROUND, PARTIES + 1, leases.get(2)).enter(Duration.ZERO))
                    .isInstanceOf(FailedPreconditionException.class).hasMessageContaining("has " + PARTIES + " parties");

            long entered = party(client, leases.get(2)).enter();

            for (CompletableFuture<TenureDoubleBarrier.Entry> party : entering) {
                assertThat(party.get(30, TimeUnit.SECONDS).revision()).as("one entry for every party").isEqualTo(entered);
            }

            cluster.restart(leader);
            cluster.awaitCaughtUp(leader);
            List<CompletableFuture<TenureDoubleBarrier.Exit>> leaving = new ArrayList<>();
            for (int i = 0; i < PARTIES - 1; i++) {
                leaving.add(party(client, leases.get(i)).leaveAsync());
                int count = i + 1;
                Await.until(count + " leaving", Duration.ofSeconds(30), () -> describe(client).leaving().size() >= count);
            }

            String second = cluster.leader();
            cluster.kill9(second);
            cluster.awaitNewLeader(second, Cluster.ELECTION_LIMIT);

            TenureDoubleBarrier.Description after = describe(client);
            assertThat(after.leaving()).extracting(TenureDoubleBarrier.Party::clientId).containsExactly("party-0", "party-1");
            assertThat(after.inside()).extracting(TenureDoubleBarrier.Party::clientId).containsExactly("party-2");
            assertThat(leaving).as("nobody let go early").noneMatch(CompletableFuture::isDone);

            long left = party(client, leases.get(2)).leave();

            for (CompletableFuture<TenureDoubleBarrier.Exit> party : leaving) {
                assertThat(party.get(30, TimeUnit.SECONDS).revision()).as("one exit for every party").isEqualTo(left);
            }
            assertThat(left).isGreaterThan(entered);
            assertThat(describe(client).exists()).isFalse();
            leases.forEach(Lease::revoke);
        }
    }

    private static TenureDoubleBarrier party(TenureClient client, Lease lease) {
        return client.doubleBarrier(ROUND, PARTIES, lease);
    }

    private static TenureDoubleBarrier.Description describe(TenureClient client) {
        return client.doubleBarrier(ROUND, PARTIES).describe();
    }
}
