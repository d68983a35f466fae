package io.tenure.it;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * I1, I2 and I9 through leader crashes: 3 members, 16 clients contending on 4 keys, each holder
 * doing a read-modify-write on a fenced register ({@link ContendedWorkload}), while the leader is
 * killed with {@code kill -9} and restarted several times in a row. Zero overlapping holders,
 * zero stale writes accepted, per-key tokens strictly increasing, and every acknowledged
 * acquisition present in the register and in the server's watch history. Also reports the
 * failover time: from the kill to the first new acquisition through another member.
 *
 * <p>Short form (CI): 5 kills. Long form: {@code mvn -B -ntp test -pl tenure-it -Pfaults-long
 * -Dtest=LeaderKillTest} (20 kills, more acquisitions between kills); or set
 * {@code -Dtenure.it.kills=N -Dtenure.it.acquisitionsBetweenKills=M}.
 */
@ExtendWith(ItLogs.class)
class LeaderKillTest {
    static final int KILLS = ItScale.of("kills", 5, 20);
    static final int ACQUISITIONS_BETWEEN_KILLS = ItScale.of("acquisitionsBetweenKills", 40, 400);

    @TempDir
    Path work;

    @Test
    @Timeout(value = 60, unit = TimeUnit.MINUTES) // a ceiling for the long form; every wait inside has its own deadline
    void killingTheLeaderRepeatedlyKeepsEveryLockExclusiveFencedAndDurable() throws Exception {
        List<Long> failoverMillis = new ArrayList<>();
        List<String> killed = new ArrayList<>();
        String summary;
        List<String> leasesLost;
        try (Cluster cluster = Cluster.start(work, 3);
             ContendedWorkload load = new ContendedWorkload(cluster, "kill", 16, 4).start()) {
            load.awaitAcquisitions(ACQUISITIONS_BETWEEN_KILLS, "before the first kill");
            for (int kill = 1; kill <= KILLS; kill++) {
                String leader = cluster.leader();
                long killedAt = System.nanoTime();
                cluster.kill9(leader);
                killed.add(leader);

                failoverMillis.add(load.firstAcquisitionAfter("probe/" + kill, killedAt));
                String newLeader = cluster.awaitNewLeader(leader, Cluster.ELECTION_LIMIT);
                assertThat(newLeader).isNotEqualTo(leader);

                cluster.restart(leader);
                cluster.awaitCaughtUp(leader);
                load.awaitAcquisitions(ACQUISITIONS_BETWEEN_KILLS, "after kill " + kill + " of " + KILLS + " (" + leader + ")");
            }
            load.stop();
            load.check(cluster.member(cluster.leader()), (KILLS + 1) * ACQUISITIONS_BETWEEN_KILLS);
            summary = load.summary();
            leasesLost = load.leasesLost();
        }
        List<Long> sorted = new ArrayList<>(failoverMillis);
        Collections.sort(sorted);
        System.out.printf("LeaderKillTest: %d kills %s; %s; failover ms %s (median %d, worst %d)%n", KILLS, killed, summary,
                failoverMillis, sorted.get(sorted.size() / 2), sorted.get(sorted.size() - 1));
        leasesLost.stream().limit(5).forEach(loss -> System.out.println("LeaderKillTest: lease lost: " + loss));
    }
}
