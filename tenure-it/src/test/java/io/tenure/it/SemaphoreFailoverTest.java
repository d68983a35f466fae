package io.tenure.it;

import io.tenure.client.FailedPreconditionException;
import io.tenure.client.Lease;
import io.tenure.client.SemaphoreDescription;
import io.tenure.client.SemaphorePermit;
import io.tenure.client.TenureClient;
import io.tenure.client.TenureSemaphore;
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
 * A full semaphore across {@code kill -9} of the leader, with real processes: the holders keep
 * their grants (same tokens: no acknowledged grant is lost), the waiters keep their places in
 * order (their waits fail over to a survivor), the limit still holds, and the permits freed
 * afterwards go to the waiters in turn with larger tokens.
 */
@ExtendWith(ItLogs.class)
class SemaphoreFailoverTest {
    static final Duration TTL = Duration.ofSeconds(30);
    static final String POOL = "failover/pool";
    static final int LIMIT = 3;

    @TempDir
    Path work;

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void aFullSemaphoreAndItsQueueSurviveALeaderKill() throws Exception {
        try (Cluster cluster = Cluster.start(work, 3);
             TenureClient client = TenureClient.connect(cluster.endpoints())) {
            List<Lease> holders = new ArrayList<>();
            List<SemaphorePermit> permits = new ArrayList<>();
            for (int i = 0; i < LIMIT; i++) {
                Lease lease = client.grantLease(TTL, "holder-" + i);
                holders.add(lease);
                permits.add(client.semaphore(POOL, LIMIT, lease).acquire(1, Duration.ofSeconds(10)));
            }
            Lease small = client.grantLease(TTL, "waits-for-1");
            Lease large = client.grantLease(TTL, "waits-for-2");
            CompletableFuture<SemaphorePermit> first = client.semaphore(POOL, LIMIT, small).acquireAsync(1);
            awaitWaiters(client, 1);
            CompletableFuture<SemaphorePermit> second = client.semaphore(POOL, LIMIT, large).acquireAsync(2);
            awaitWaiters(client, 2);

            String leader = cluster.leader();
            cluster.kill9(leader);
            String newLeader = cluster.awaitNewLeader(leader, Cluster.ELECTION_LIMIT);

            SemaphoreDescription after = client.semaphore(POOL, LIMIT).describe();
            assertThat(after.holders()).as("the holders after " + leader + " was killed (" + newLeader + " leads)")
                    .extracting(SemaphoreDescription.Holder::fencingToken)
                    .containsExactlyElementsOf(permits.stream().map(SemaphorePermit::fencingToken).toList());
            assertThat(after.available()).isZero();
            assertThat(after.waiters()).extracting(SemaphoreDescription.Waiter::clientId).containsExactly("waits-for-1", "waits-for-2");
            assertThat(holders).allSatisfy(lease -> assertThat(lease.isValid()).as(lease.clientId() + " still valid").isTrue());
            assertThat(first).isNotDone();
            TenureSemaphore otherLimit = client.semaphore(POOL, LIMIT + 1, small);
            assertThatThrownBy(() -> otherLimit.tryAcquire(1)).isInstanceOf(FailedPreconditionException.class)
                    .hasMessageContaining("has limit " + LIMIT);

            long highest = permits.stream().mapToLong(SemaphorePermit::fencingToken).max().orElseThrow();
            permits.get(0).release();
            SemaphorePermit granted = first.get(30, TimeUnit.SECONDS);
            assertThat(granted.fencingToken()).isGreaterThan(highest);
            assertThat(second).as("two permits are needed; one was freed").isNotDone();

            permits.get(1).release();
            awaitAvailable(client, 1);
            assertThat(second).as("one permit is free; two are needed").isNotDone();
            permits.get(2).release();
            SemaphorePermit both = second.get(30, TimeUnit.SECONDS);
            assertThat(both.permits()).isEqualTo(2);
            assertThat(both.fencingToken()).isGreaterThan(granted.fencingToken());
            SemaphoreDescription full = client.semaphore(POOL, LIMIT).describe();
            assertThat(full.holders()).extracting(SemaphoreDescription.Holder::clientId).containsExactly("waits-for-1", "waits-for-2");
            assertThat(full.available()).isZero();
            assertThat(full.waiters()).isEmpty();
        }
    }

    private static void awaitAvailable(TenureClient client, int available) {
        Await.until("semaphore " + POOL + " to have " + available + " permits free", Duration.ofSeconds(30),
                () -> client.semaphore(POOL, LIMIT).describe().available() == available);
    }

    private static void awaitWaiters(TenureClient client, int count) {
        Await.until("semaphore " + POOL + " to have " + count + " waiters", Duration.ofSeconds(30),
                () -> client.semaphore(POOL, LIMIT).describe().waiters().size() >= count);
    }
}
