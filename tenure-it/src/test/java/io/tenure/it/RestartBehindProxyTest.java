package io.tenure.it;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Members reached through peer proxies (as the safety suite's F11 runs them: every peer connection
 * into a member passes its proxy, which accepts and then closes a connection while the member is
 * down): a follower killed while the others write, then restarted, catches up; then the leader is
 * killed and the other two elect another. The safety suite found a restarted member behind its
 * proxy left unreachable for new peer connections on one engine; this is that sequence alone.
 */
@ExtendWith(ItLogs.class)
class RestartBehindProxyTest {
    @TempDir
    Path work;

    @Test
    @Timeout(value = 10, unit = TimeUnit.MINUTES)
    void aFollowerRestartedBehindItsProxyCatchesUpAndTheOthersElectAfterTheLeaderDies() throws Exception {
        try (Cluster cluster = Cluster.start(work, new Cluster.Options().size(3).peerProxies().snapshotEvery(200))) {
            String leader = cluster.awaitLeader(Cluster.ELECTION_LIMIT);
            String follower = cluster.followers().get(0);
            cluster.kill9(follower);
            try (LockCycler load = new LockCycler(cluster.endpoints(cluster.live().toArray(String[]::new)), "proxy/during")) {
                load.start(2, 300).awaitDone(Duration.ofSeconds(120));
                assertThat(load.failures()).isEmpty();
            }
            cluster.restart(follower);
            cluster.awaitCaughtUp(follower);

            cluster.kill9(leader);
            String next = cluster.awaitNewLeader(leader, Cluster.ELECTION_LIMIT);
            assertThat(next).isNotEqualTo(leader);
            try (LockCycler after = new LockCycler(cluster.endpoints(cluster.live().toArray(String[]::new)), "proxy/after")) {
                after.start(1, 20).awaitDone(Duration.ofSeconds(60));
                assertThat(after.failures()).isEmpty();
            }
        }
    }
}
