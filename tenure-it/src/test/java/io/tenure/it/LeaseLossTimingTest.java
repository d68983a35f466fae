package io.tenure.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenure.client.Lease;
import io.tenure.client.LeaseLoss;
import io.tenure.client.LockHandle;
import io.tenure.client.TenureClient;
import io.tenure.server.ServerConfig;
import io.tenure.testing.Await;
import io.tenure.testing.MemberProcess;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The SDK's fail-fast promise (I6) against real processes: a client cut off from the cluster
 * declares its lease lost a safe window (TTL/2 for TTLs from 15 s) after the send of its last acknowledged keep-alive, before the
 * server can expire the lease and hand its lock to the next waiter. Both instants are taken on
 * this JVM's monotonic clock: the loss when {@link Lease#lost()} completes, the expiry when the
 * waiter (another client, connected elsewhere) is granted the lock. The margin between them is
 * printed; it should be about the safe window.
 */
class LeaseLossTimingTest {
    @TempDir
    Path work;

    /** The member the client talks to is paused (SIGSTOP): its sockets stay open, nothing answers. */
    @Test
    @Timeout(value = 4, unit = TimeUnit.MINUTES)
    void aClientWhoseMemberIsPausedGivesUpItsLeaseBeforeTheClusterExpiresIt() throws Exception {
        Duration electionTimeout = Duration.ofMillis(300);
        // The cluster's minimum (5 s), where the SDK's safe window is at its cap, 5/6 of the TTL:
        // the least margin between the client's giving up and the expiry.
        Duration ttl = ServerConfig.minClusterTtl(electionTimeout);
        try (Cluster cluster = Cluster.start(work, new Cluster.Options().electionTimeout(electionTimeout))) {
            String leader = cluster.awaitLeader(Cluster.ELECTION_LIMIT);
            String paused = cluster.names().stream().filter(n -> !n.equals(leader)).findFirst().orElseThrow();
            List<String> others = cluster.names().stream().filter(n -> !n.equals(paused)).toList();
            try (TenureClient cutOff = TenureClient.connect(cluster.endpoints(paused));
                 TenureClient waiter = TenureClient.connect(cluster.endpoints(others.toArray(String[]::new)))) {
                Timeline timeline = race(cutOff, waiter, ttl, "timing/paused", () -> cluster.pause(paused));
                cluster.resume(paused);
                timeline.check(ttl, "paused member");
            } finally {
                cluster.resume(paused);
            }
        }
    }

    /** The client's connection is blackholed by a proxy: a partition between client and cluster. */
    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void aClientCutOffByAPartitionGivesUpItsLeaseBeforeTheServerExpiresIt() throws Exception {
        Duration ttl = Duration.ofSeconds(4);
        try (MemberProcess server = ItLogs.single(work.resolve("single")).start();
             FaultProxy proxy = new FaultProxy(server.clientPort());
             TenureClient cutOff = TenureClient.connect(List.of(proxy.endpoint()));
             TenureClient waiter = TenureClient.connect(List.of("127.0.0.1:" + server.clientPort()))) {
            Timeline timeline = race(cutOff, waiter, ttl, "timing/partitioned", proxy::blackhole);
            timeline.check(ttl, "partition");
        }
    }

    interface Fault {
        void inject() throws Exception;
    }

    /**
     * The cut-off client holds the lock, the waiter queues for it, the fault is injected; returns
     * when the cut-off client has declared its loss and the waiter has been granted the lock.
     */
    private static Timeline race(TenureClient cutOff, TenureClient waiter, Duration ttl, String key, Fault fault) throws Exception {
        Lease doomed = cutOff.grantLease(ttl, "cut-off");
        LockHandle held = cutOff.lock(key, doomed).acquire(Duration.ofSeconds(10));
        Lease next = waiter.grantLease(ttl.multipliedBy(3), "waiter");
        CompletableFuture<LockHandle> waiting = waiter.lock(key, next).acquireAsync();
        Await.PROCESSES.until("the waiter is queued", Duration.ofSeconds(30), () -> waiter.describe(key).waiters().size() == 1);

        CompletableFuture<Long> lostAt = doomed.lost().thenApply(loss -> System.nanoTime());
        CompletableFuture<Long> grantedAt = waiting.thenApply(handle -> System.nanoTime());
        // The last keep-alive that can be acknowledged was sent no later than the fault.
        long faultAt = System.nanoTime();
        fault.inject();
        long lost = lostAt.get(ttl.multipliedBy(3).toMillis(), TimeUnit.MILLISECONDS);
        long lastAckedSend = doomed.safeUntil() - doomed.safeWindow().toNanos();
        long granted = grantedAt.get(ttl.multipliedBy(4).toMillis(), TimeUnit.MILLISECONDS);
        LockHandle nextHolder = waiting.get();
        assertThat(nextHolder.fencingToken()).isGreaterThan(held.fencingToken());
        assertThat(doomed.lost().get().reason()).isEqualTo(LeaseLoss.Reason.UNREACHABLE);
        return new Timeline(faultAt, lastAckedSend, lost, granted);
    }

    private record Timeline(long faultAt, long lastAckedSend, long lostAt, long grantedAt) {
        void check(Duration ttl, String fault) {
            long lostAfterAck = TimeUnit.NANOSECONDS.toMillis(lostAt - lastAckedSend);
            long grantedAfterAck = TimeUnit.NANOSECONDS.toMillis(grantedAt - lastAckedSend);
            long margin = TimeUnit.NANOSECONDS.toMillis(grantedAt - lostAt);
            System.out.printf("lease-loss timing (%s, TTL %d ms): last acknowledged keep-alive sent %d ms before the fault; "
                            + "client declared the lease lost %d ms after that send; the waiter was granted the lock %d ms after it; "
                            + "margin %d ms%n", fault, ttl.toMillis(), TimeUnit.NANOSECONDS.toMillis(faultAt - lastAckedSend),
                    lostAfterAck, grantedAfterAck, margin);
            assertThat(lastAckedSend).as("the last acknowledged send precedes the fault").isLessThanOrEqualTo(faultAt);
            // Declared a safe window after the last acknowledged send (a late timer may add a little).
            long window = Lease.safeWindowFor(ttl).toMillis();
            assertThat(lostAfterAck).as("loss declared after the last acknowledged send (ms)")
                    .isGreaterThanOrEqualTo(window - 1).isLessThan(window + 1_000);
            // The server renewed no earlier than that send, so it cannot have expired the lease sooner than TTL after it.
            assertThat(grantedAfterAck).as("next grant after the last acknowledged send (ms)").isGreaterThanOrEqualTo(ttl.toMillis());
            assertThat(lostAt).as("the client gave up before the lock went to another").isLessThan(grantedAt);
        }
    }
}
