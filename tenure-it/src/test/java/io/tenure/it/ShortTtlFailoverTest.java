package io.tenure.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenure.client.Lease;
import io.tenure.client.LockHandle;
import io.tenure.client.TenureClient;
import io.tenure.proto.v1.LeaseGrantRequest;
import io.tenure.proto.v1.LeaseTimeToLiveRequest;
import io.tenure.proto.v1.LeaseTimeToLiveResponse;
import io.tenure.proto.v1.TryLockRequest;
import io.tenure.proto.v1.TryLockResponse;
import io.tenure.server.ServerConfig;
import io.tenure.testing.Await;
import io.tenure.testing.MemberProcess;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shortest TTL a cluster grants (10 election timeouts and at least 5 s: 5 s with the default 300 ms) is short
 * enough to unblock a crashed holder's locks quickly and long enough for a kept-alive lease to
 * survive leader kills: leases at every phase of the keep-alive cycle, each holding a lock, stay
 * valid in the client and held on the server across {@link #KILLS} kills of the leader (each
 * followed by a restart of the killed member), and every lock still belongs to its lease at the
 * end. Each kill comes just before one of the leases sends its next keep-alive, the worst moment:
 * that keep-alive goes into the failover.
 *
 * <p>Prints, per kill, how long the failover took (kill to new leader agreed) and the closest call:
 * the least safe time any lease had left when its first keep-alive after the kill was acknowledged.
 * CI runs 5 kills; the long form 20 ({@code mvn -B -ntp test -pl tenure-it -Pfaults-long
 * -Dtest=ShortTtlFailoverTest}).
 */
@ExtendWith(ItLogs.class)
class ShortTtlFailoverTest {
    static final int KILLS = ItScale.of("shortTtlKills", 5, 20);
    static final int LEASES = 12;

    @TempDir
    Path work;

    @Test
    @Timeout(value = 20, unit = TimeUnit.MINUTES) // a ceiling for the long form; every wait inside has its own deadline
    void leasesAtTheClustersShortestTtlSurviveRepeatedLeaderKills() throws Exception {
        List<String> report = new ArrayList<>();
        List<Long> closestCalls = new ArrayList<>();
        try (Cluster cluster = Cluster.start(work, 3);
             TenureClient client = TenureClient.connect(cluster.endpoints())) {
            Duration ttl = Duration.ofMillis(Long.getLong("tenure.it.shortTtlMs", ServerConfig.minClusterTtl(cluster.electionTimeout()).toMillis()));
            Duration period = ttl.dividedBy(3);
            List<Lease> leases = new ArrayList<>();
            List<LockHandle> locks = new ArrayList<>();
            for (int i = 0; i < LEASES; i++) {
                if (i > 0) {
                    Await.untilTime(System.nanoTime() + period.toNanos() / LEASES); // spread the phases over the period
                }
                Lease lease = client.grantLease(ttl, "short-" + i);
                leases.add(lease);
                locks.add(client.acquire("short/" + i, lease, Duration.ofSeconds(10), null));
            }
            Duration window = leases.get(0).safeWindow();

            for (int kill = 1; kill <= KILLS; kill++) {
                // Just before lease k's next keep-alive: its last acknowledged send is safeUntil - window.
                Lease target = leases.get(kill % LEASES);
                long acked = target.safeUntil();
                Await.PROCESSES.until("a fresh keep-alive of " + target.clientId() + " is acknowledged", ttl, () -> target.safeUntil() != acked);
                long nextSend = target.safeUntil() - window.toNanos() + period.toNanos();
                Await.untilTime(nextSend - TimeUnit.MILLISECONDS.toNanos(50));
                String leader = cluster.leader();
                long[] safeBefore = new long[LEASES]; // the safe moment each lease had before its first renewal after the kill
                long killedAt = System.nanoTime();
                for (int i = 0; i < LEASES; i++) {
                    safeBefore[i] = leases.get(i).safeUntil();
                }
                cluster.kill9(leader);
                String newLeader = cluster.awaitNewLeader(leader, Cluster.ELECTION_LIMIT);
                long electedAfter = Await.millisSince(killedAt);

                // Every lease gets a keep-alive acknowledged through the new leader; the least
                // time any had left before that is how close the kill came to losing it.
                long[] closest = {Long.MAX_VALUE};
                boolean[] renewed = new boolean[LEASES];
                Await.PROCESSES.until("every lease renewed after kill " + kill, ttl, () -> {
                    long now = System.nanoTime();
                    boolean all = true;
                    for (int i = 0; i < LEASES; i++) {
                        Lease lease = leases.get(i);
                        long safeUntil = lease.safeUntil();
                        if (renewed[i]) {
                            continue;
                        }
                        if (safeUntil - window.toNanos() - killedAt > 0 || lease.lost().isDone()) {
                            renewed[i] = true;
                            closest[0] = Math.min(closest[0], safeBefore[i] - now);
                        } else {
                            safeBefore[i] = safeUntil; // a keep-alive sent before the kill may be acknowledged after it
                        }
                    }
                    for (boolean r : renewed) {
                        all &= r;
                    }
                    return all;
                });
                for (Lease lease : leases) {
                    assertThat(lease.lost()).as("%s lost at kill %d of %d (%s killed; %s agreed as leader %d ms after)",
                            lease.clientId(), kill, KILLS, leader, newLeader, electedAfter).isNotDone();
                }
                long closestMs = TimeUnit.NANOSECONDS.toMillis(closest[0]);
                closestCalls.add(closestMs);
                report.add("kill " + kill + ": " + leader + " → " + newLeader + " in " + electedAfter + " ms, closest call "
                        + closestMs + " ms");

                cluster.restart(leader);
                cluster.awaitCaughtUp(leader);
            }

            List<String> lost = new ArrayList<>();
            for (Lease lease : leases) {
                if (!lease.isValid()) {
                    lost.add(lease.clientId() + ": " + lease.lost().getNow(null));
                }
            }
            assertThat(lost).as("kept-alive leases lost over %d leader kills: %s", KILLS, report).isEmpty();

            MemberProcess serving = cluster.member(cluster.leader());
            long intruder = serving.blocking().leaseGrant(LeaseGrantRequest.newBuilder().setClientId("intruder")
                    .setTtl(ttl.toSeconds()).build()).getId();
            for (int i = 0; i < LEASES; i++) {
                Lease lease = leases.get(i);
                LeaseTimeToLiveResponse left = serving.blocking().leaseTimeToLive(
                        LeaseTimeToLiveRequest.newBuilder().setId(lease.id()).setKeys(true).build());
                assertThat(left.getTtl()).as("remaining TTL of " + lease.clientId() + " on the leader").isPositive();
                assertThat(left.getKeysList()).containsExactly("short/" + i);
                TryLockResponse stolen = serving.blocking().tryLock(TryLockRequest.newBuilder().setName("short/" + i)
                        .setLeaseId(intruder).build());
                assertThat(stolen.getAcquired()).as("short/" + i + " is still held by its kept-alive lease").isFalse();
                locks.get(i).release();
            }
        } finally {
            List<Long> sorted = new ArrayList<>(closestCalls);
            Collections.sort(sorted);
            System.out.printf("ShortTtlFailoverTest: %d kills; %s; closest calls ms: least %s, median %s%n", report.size(), report,
                    sorted.isEmpty() ? "-" : sorted.get(0), sorted.isEmpty() ? "-" : sorted.get(sorted.size() / 2));
        }
    }
}
