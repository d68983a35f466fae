package io.tenure.it;

import io.tenure.testing.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * I1, I2, I4, I5 and I9 with a slow leader: the same contended load as {@link LeaderKillTest},
 * while the leader is paused with SIGSTOP for longer than a lease TTL, then resumed with SIGCONT.
 * When it wakes, every lease looks overdue on its own clock and it may still believe it leads for
 * a moment: an expiry it proposes then must not take effect (RATIS.md: conditional expiry), so no
 * holder whose lease its client kept alive through the others loses its lock, and nothing
 * acknowledged is lost.
 *
 * <p>Short form (CI): 1 pause of TTL + 2 s. Long form: {@code mvn -B -ntp test -pl tenure-it
 * -Pfaults-long -Dtest=LeaderPauseTest} (5 pauses); or {@code -Dtenure.it.pauses=N -Dtenure.it.pauseMs=M}.
 */
@ExtendWith(ItLogs.class)
class LeaderPauseTest {
    static final int PAUSES = ItScale.of("pauses", 1, 5);
    static final Duration PAUSE = Duration.ofMillis(ItScale.of("pauseMs",
            (int) ContendedWorkload.TTL.plusSeconds(2).toMillis(), (int) ContendedWorkload.TTL.plusSeconds(2).toMillis()));
    static final int ACQUISITIONS_BETWEEN_PAUSES = ItScale.of("acquisitionsBetweenPauses", 40, 400);

    @TempDir
    Path work;

    @Test
    @Timeout(value = 60, unit = TimeUnit.MINUTES) // a ceiling for the long form; every wait inside has its own deadline
    void pausingTheLeaderLongerThanATtlKeepsEveryLockExclusiveFencedAndDurable() throws Exception {
        List<Long> failoverMillis = new ArrayList<>();
        List<String> paused = new ArrayList<>();
        String summary;
        List<String> leasesLost;
        try (Cluster cluster = Cluster.start(work, 3);
             ContendedWorkload load = new ContendedWorkload(cluster, "pause", 16, 4).start()) {
            load.awaitAcquisitions(ACQUISITIONS_BETWEEN_PAUSES, "before the first pause");
            for (int pause = 1; pause <= PAUSES; pause++) {
                String leader = cluster.leader();
                long pausedAt = System.nanoTime();
                cluster.pause(leader);
                paused.add(leader);
                try {
                    failoverMillis.add(load.firstAcquisitionAfter("probe/" + pause, pausedAt));
                    cluster.awaitNewLeader(leader, Cluster.ELECTION_LIMIT);
                    Await.untilTime(pausedAt + PAUSE.toNanos()); // a pause of a set length, not a condition
                } finally {
                    cluster.resume(leader);
                }
                cluster.awaitCaughtUp(leader);
                load.awaitAcquisitions(ACQUISITIONS_BETWEEN_PAUSES, "after pause " + pause + " of " + PAUSES + " (" + leader + ")");
            }
            load.stop();
            load.check(cluster.member(cluster.leader()), (PAUSES + 1) * ACQUISITIONS_BETWEEN_PAUSES);
            summary = load.summary();
            leasesLost = load.leasesLost();
        }
        System.out.printf("LeaderPauseTest: %d pauses of %d ms %s; %s; failover ms %s%n", PAUSES, PAUSE.toMillis(), paused, summary,
                failoverMillis);
        leasesLost.stream().limit(5).forEach(loss -> System.out.println("LeaderPauseTest: lease lost: " + loss));
    }
}
