package io.tenure.it;

import io.tenure.client.Lease;
import io.tenure.client.LockHandle;
import io.tenure.client.TenureClient;
import io.tenure.proto.v1.LeaseTimeToLiveRequest;
import io.tenure.testing.Await;
import io.tenure.testing.MemberProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * I7 across the death of a member: a client waiting for a lock keeps its place in the queue when
 * the member it waits through is killed. H holds K through member A (the leader); W1 waits through
 * follower B, then W2 through follower C; B is killed with {@code kill -9}; W1's client re-attaches
 * its wait on another member; H releases: W1 (not W2) gets K next with a larger token, then W2.
 *
 * <p>Runs the same in CI and in the long form ({@code tenure.it.queueTrials} repetitions).
 */
@ExtendWith(ItLogs.class)
class QueuePositionTest {
    static final Duration TTL = Duration.ofSeconds(30);
    static final Duration GRANT_LIMIT = Duration.ofSeconds(30);
    static final int TRIALS = ItScale.of("queueTrials", 1, 5);

    @TempDir
    Path work;

    @Test
    @Timeout(value = 20, unit = TimeUnit.MINUTES)
    void aWaiterKeepsItsPlaceWhenItsMemberDies() throws Exception {
        try (Cluster cluster = Cluster.start(work, 3)) {
            for (int trial = 1; trial <= TRIALS; trial++) {
                String key = "queue/k" + trial;
                String a = cluster.leader();
                List<String> followers = cluster.followers();
                String b = followers.get(0);
                String c = followers.get(1);
                MemberProcess observer = cluster.member(a);

                try (TenureClient h = TenureClient.connect(cluster.endpoints(a));
                     TenureClient w1 = TenureClient.connect(cluster.endpoints(b, a, c));
                     TenureClient w2 = TenureClient.connect(cluster.endpoints(c))) {
                    Lease hLease = h.grantLease(TTL, "H");
                    LockHandle held = h.acquire(key, hLease, Duration.ofSeconds(10), null);

                    Lease w1Lease = w1.grantLease(TTL, "W1");
                    CompletableFuture<LockHandle> w1Wait = w1.acquireAsync(key, w1Lease, null, null);
                    awaitWaiting(observer, w1Lease, key);
                    Lease w2Lease = w2.grantLease(TTL, "W2");
                    CompletableFuture<LockHandle> w2Wait = w2.acquireAsync(key, w2Lease, null, null);
                    awaitWaiting(observer, w2Lease, key);

                    long killedAt = System.nanoTime();
                    cluster.kill9(b);
                    // W1's client has moved to another member once it has a keep-alive acknowledged that
                    // was sent after the kill (its blocking wait moved on the same UNAVAILABLE).
                    Await.PROCESSES.until("W1's client reaches another member after " + b + " died", GRANT_LIMIT,
                            () -> w1Lease.safeUntil() - (killedAt + w1Lease.safeWindow().toNanos()) > 0 || w1Wait.isDone());
                    assertThat(w1Wait).as("W1 still waits (its wait survived the death of " + b + ")").isNotDone();
                    assertThat(w1Lease.isValid()).isTrue();
                    assertThat(waiting(observer, w1Lease)).as("W1's lease still waits for " + key).contains(key);

                    held.release();
                    LockHandle w1Handle = w1Wait.get(GRANT_LIMIT.toMillis(), TimeUnit.MILLISECONDS);
                    assertThat(w2Wait).as("W2 waits behind W1").isNotDone();
                    assertThat(w1Handle.fencingToken()).as("W1's token").isGreaterThan(held.fencingToken());

                    w1Handle.release();
                    LockHandle w2Handle = w2Wait.get(GRANT_LIMIT.toMillis(), TimeUnit.MILLISECONDS);
                    assertThat(w2Handle.fencingToken()).as("W2's token").isGreaterThan(w1Handle.fencingToken());
                    w2Handle.release();

                    // The server's record of the hand-offs, in order: H, W1, W2.
                    try (Watcher watcher = Watcher.open(observer, key, false, held.fencingToken())) {
                        watcher.await("W2's grant", GRANT_LIMIT, seen -> seen.isPut() && seen.revision() == w2Handle.fencingToken());
                        List<Long> grantedTo = watcher.events().stream().filter(Watcher.Seen::isPut)
                                .map(seen -> seen.event().getKv().getLease()).collect(Collectors.toList());
                        assertThat(grantedTo).as("grants of " + key + " by lease").containsExactly(hLease.id(), w1Lease.id(), w2Lease.id());
                    }
                    hLease.revoke();
                    w1Lease.revoke();
                    w2Lease.revoke();
                }
                cluster.restart(b);
            }
        }
    }

    private static List<String> waiting(MemberProcess member, Lease lease) {
        return member.blocking().leaseTimeToLive(LeaseTimeToLiveRequest.newBuilder().setId(lease.id()).setKeys(true).build())
                .getWaitingList();
    }

    private static void awaitWaiting(MemberProcess member, Lease lease, String key) {
        Await.PROCESSES.until(lease.clientId() + " waits for " + key, GRANT_LIMIT, () -> waiting(member, lease).contains(key));
    }
}
