package io.tenure.server;

import io.tenure.client.TenureClient;
import io.tenure.client.TenureCounter;
import io.tenure.testing.Await;
import io.tenure.testing.TenureCluster;
import io.tenure.testing.TenureExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Increments from several clients while the leader stops: the clients retry the calls the stop
 * cut off, with their request ids, on the members left. Every acknowledged increment is counted
 * exactly once: the answers are 1 to n with no gap and no repeat, and the counter ends at n.
 */
class CounterFailoverTest {
    static final int WRITERS = 4;
    static final int BEFORE_STOP = 40;
    static final int AFTER_STOP = 40;

    @RegisterExtension
    final TenureExtension tenure = TenureExtension.of(TenureCluster.builder().members(3).electionTimeout(ServerConfig.DEFAULT_ELECTION_TIMEOUT));

    @Test
    void noAcknowledgedIncrementIsLostOrDoubledAcrossALeaderStop() throws Exception {
        TenureCluster cluster = tenure.cluster();
        int leader = cluster.leader();
        Set<Long> answers = ConcurrentHashMap.newKeySet();
        AtomicInteger acknowledged = new AtomicInteger();
        AtomicLong repeated = new AtomicLong();
        List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());
        CountDownLatch stopped = new CountDownLatch(1);
        List<Thread> writers = new ArrayList<>();
        for (int w = 0; w < WRITERS; w++) {
            TenureClient client = cluster.newClient();
            TenureCounter counter = client.counter("failover/seq");
            Thread writer = new Thread(() -> {
                try {
                    for (int i = 0; i < BEFORE_STOP + AFTER_STOP; i++) {
                        if (i == BEFORE_STOP) {
                            stopped.await();
                        }
                        long value = counter.incrementAndGet();
                        acknowledged.incrementAndGet();
                        if (!answers.add(value)) {
                            repeated.incrementAndGet();
                        }
                    }
                } catch (Throwable e) {
                    failures.add(e);
                }
            }, "writer-" + w);
            writers.add(writer);
            writer.start();
        }
        Await.until("half of the increments acknowledged", Duration.ofSeconds(60),
                () -> acknowledged.get() >= WRITERS * BEFORE_STOP / 2 || !failures.isEmpty());
        cluster.stop(leader); // with increments in flight
        stopped.countDown();
        for (Thread writer : writers) {
            writer.join(TimeUnit.SECONDS.toMillis(120));
            assertThat(writer.isAlive()).as(writer.getName() + " finished").isFalse();
        }
        assertThat(failures).as("every increment acknowledged, through the failover").isEmpty();
        int n = WRITERS * (BEFORE_STOP + AFTER_STOP);
        assertThat(acknowledged.get()).isEqualTo(n);
        assertThat(repeated.get()).as("no value answered twice (an increment lost)").isZero();
        assertThat(answers).as("1 to n: none lost, none doubled").hasSize(n).allMatch(v -> v >= 1 && v <= n);
        TenureClient reader = cluster.newClient();
        assertThat(reader.counter("failover/seq").get()).isEqualTo(n);
    }
}
