package io.tenure.it;

import io.grpc.stub.StreamObserver;
import io.tenure.client.Lease;
import io.tenure.client.LockHandle;
import io.tenure.client.TenureClient;
import io.tenure.proto.v1.LeaseGrantRequest;
import io.tenure.proto.v1.LeaseRevokeRequest;
import io.tenure.proto.v1.LeaseTimeToLiveRequest;
import io.tenure.proto.v1.LeaseTimeToLiveResponse;
import io.tenure.proto.v1.LockRequest;
import io.tenure.proto.v1.LockResponse;
import io.tenure.proto.v1.TryLockRequest;
import io.tenure.proto.v1.TryLockResponse;
import io.tenure.testing.Await;
import io.tenure.testing.MemberProcess;
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

/**
 * I5 across a leader change, with real processes:
 * <ol>
 *   <li>leases their client keeps alive (SDK {@code Lease}) are neither lost by the client nor
 *       expired by the new leader after {@code kill -9} of the old one, also when the kill comes
 *       at the worst moment of the keep-alive cycle (just before the next keep-alive), and when
 *       the leader is paused (SIGSTOP) instead of killed;</li>
 *   <li>a lease whose client stopped renewing is expired by the new leader within TTL + one
 *       election timeout + the expiry loop period (+ a margin for this 2-core machine) after its
 *       last acknowledged keep-alive, and no sooner than TTL after that keep-alive was sent; the
 *       old leader is killed halfway through the TTL, so a new leader that restarted the TTL
 *       (etcd's complaint) expires it too late and fails the test.</li>
 * </ol>
 *
 * <p>Runs the same in CI and in the long form ({@code mvn -B -ntp test -pl tenure-it -Pfaults-long
 * -Dtest=LeaseAcrossFailoverTest} repeats the expiry measurement {@code tenure.it.expiryTrials} times).
 */
@ExtendWith(ItLogs.class)
class LeaseAcrossFailoverTest {
    /** A TTL well above a cluster's shortest (10 election timeouts: 5 s with the default 500 ms); ShortTtlFailoverTest runs at the shortest. */
    static final Duration TTL = Duration.ofSeconds(30);
    /** The leader's expiry loop period (LeaseKeeper.EXPIRY_TICK_MILLIS in tenure-server). */
    static final Duration EXPIRY_LOOP = Duration.ofMillis(50);
    /** Scheduling, JIT and GC on 2 cores running 3 members and the test. */
    static final Duration MARGIN = Duration.ofMillis(Long.getLong("tenure.it.expiryMarginMs", 2_000));
    static final int EXPIRY_TRIALS = ItScale.of("expiryTrials", 1, 5);
    /** Longer than an election (1-2 s and a vote), shorter than a TTL. */
    static final Duration PAUSE = Duration.ofSeconds(8);

    @TempDir
    Path work;

    /**
     * Three kept-alive leases at different keep-alive phases; the leader is killed just before the
     * first one sends its next keep-alive, the hardest moment: that keep-alive goes into the
     * failover, and its acknowledgement must arrive within what is left of the TTL/2 window of the
     * previous one (TTL/2 - TTL/3 = TTL/6 after the kill, with the SDK's TTL/3 period).
     */
    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void leasesKeptAliveAcrossALeaderKillAreNotLostNorExpired() throws Exception {
        try (Cluster cluster = Cluster.start(work, 3);
             TenureClient client = TenureClient.connect(cluster.endpoints())) {
            List<Lease> leases = new ArrayList<>();
            List<LockHandle> locks = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                if (i > 0) {
                    // Spread the keep-alive phases over the period (TTL/3).
                    Await.untilTime(System.nanoTime() + TTL.toNanos() / 9);
                }
                Lease lease = client.grantLease(TTL, "kept-alive-" + i);
                leases.add(lease);
                locks.add(client.acquire("failover/kept-" + i, lease, Duration.ofSeconds(10), null));
            }
            // Kill the leader just before lease 0 sends its next keep-alive. Its sends are on a grid
            // of TTL/3 from the grant; the send time of its last acknowledged one is safeUntil - the safe window (TTL/2 here).
            Lease first = leases.get(0);
            long acked = first.safeUntil();
            Await.PROCESSES.until("a fresh keep-alive of lease 0 is acknowledged", TTL, () -> first.safeUntil() != acked);
            long nextSend = first.safeUntil() - first.safeWindow().toNanos() + TTL.toNanos() / 3;
            Await.untilTime(nextSend - TimeUnit.MILLISECONDS.toNanos(150));
            String leader = cluster.leader();
            long killedAt = System.nanoTime();
            cluster.kill9(leader);
            String newLeader = cluster.awaitNewLeader(leader, Cluster.ELECTION_LIMIT);
            long electedAfter = Await.millisSince(killedAt);

            // Watch the leases for longer than a TTL after the kill: a new leader that expired them
            // from a stale renewal time, or lost renewals, ends them within this window.
            long until = killedAt + TTL.plus(cluster.electionTimeout().multipliedBy(3)).toNanos();
            Await.untilTime(until);
            List<String> lost = new ArrayList<>();
            for (Lease lease : leases) {
                if (lease.lost().isDone()) {
                    lost.add(lease.clientId() + ": " + lease.lost().getNow(null));
                }
            }
            assertThat(lost).as("kept-alive leases lost across the failover (leader " + leader + " killed "
                    + TimeUnit.NANOSECONDS.toMillis(nextSend - killedAt) + " ms before kept-alive-0's next keep-alive; " + newLeader
                    + " agreed as leader " + electedAfter + " ms after the kill)").isEmpty();

            MemberProcess serving = cluster.member(newLeader);
            long other = serving.blocking().leaseGrant(LeaseGrantRequest.newBuilder().setClientId("intruder").setTtl(30).build()).getId();
            for (int i = 0; i < leases.size(); i++) {
                Lease lease = leases.get(i);
                String key = "failover/kept-" + i;
                LeaseTimeToLiveResponse ttl = serving.blocking().leaseTimeToLive(
                        LeaseTimeToLiveRequest.newBuilder().setId(lease.id()).setKeys(true).build());
                assertThat(ttl.getTtl()).as("remaining TTL of " + lease.clientId() + " on the new leader").isPositive();
                assertThat(ttl.getKeysList()).as("keys " + lease.clientId() + " holds").containsExactly(key);
                TryLockResponse intruder = serving.blocking().tryLock(TryLockRequest.newBuilder().setName(key).setLeaseId(other).build());
                assertThat(intruder.getAcquired()).as(key + " is still held by its kept-alive lease").isFalse();
                assertThat(intruder.getHolder()).isEqualTo(lease.clientId());

                // And it still works: the holder releases, another takes it with a larger token.
                long token = locks.get(i).fencingToken();
                locks.get(i).release();
                TryLockResponse next = serving.blocking().tryLock(TryLockRequest.newBuilder().setName(key).setLeaseId(other).build());
                assertThat(next.getAcquired()).isTrue();
                assertThat(next.getFencingToken()).isGreaterThan(token);
                lease.revoke();
            }
        }
    }

    /**
     * A slow leader rather than a dead one: paused with SIGSTOP for {@link #PAUSE} (longer than an
     * election, shorter than a TTL), its sockets open but silent. One client talks to the paused
     * leader first, one to a follower first; both keep their leases alive through the others.
     */
    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void leasesKeptAliveAcrossALeaderPauseAreNotLostNorExpired() throws Exception {
        try (Cluster cluster = Cluster.start(work, 3)) {
            String leader = cluster.leader();
            String follower = cluster.followers().get(0);
            List<String> leaderFirst = new ArrayList<>(cluster.endpoints());
            leaderFirst.remove(cluster.member(leader).endpoint());
            leaderFirst.add(0, cluster.member(leader).endpoint());
            List<String> followerFirst = new ArrayList<>(cluster.endpoints());
            followerFirst.remove(cluster.member(follower).endpoint());
            followerFirst.add(0, cluster.member(follower).endpoint());
            try (TenureClient viaLeader = TenureClient.connect(leaderFirst);
                 TenureClient viaFollower = TenureClient.connect(followerFirst)) {
                List<Lease> leases = List.of(viaLeader.grantLease(TTL, "via-leader"), viaFollower.grantLease(TTL, "via-follower"));
                viaLeader.acquire("pause/via-leader", leases.get(0), Duration.ofSeconds(10), null);
                viaFollower.acquire("pause/via-follower", leases.get(1), Duration.ofSeconds(10), null);

                long pausedAt = System.nanoTime();
                cluster.pause(leader);
                String newLeader;
                try {
                    newLeader = cluster.awaitNewLeader(leader, Cluster.ELECTION_LIMIT);
                    Await.untilTime(pausedAt + PAUSE.toNanos()); // a pause of a set length, not a condition
                } finally {
                    cluster.resume(leader);
                }
                Await.untilTime(pausedAt + TTL.plus(cluster.electionTimeout().multipliedBy(3)).toNanos());
                List<String> lost = new ArrayList<>();
                for (Lease lease : leases) {
                    if (lease.lost().isDone()) {
                        lost.add(lease.clientId() + ": " + lease.lost().getNow(null));
                    }
                }
                assertThat(lost).as("kept-alive leases lost while leader " + leader + " was paused for " + PAUSE.toMillis()
                        + " ms (new leader " + newLeader + ")").isEmpty();
                MemberProcess serving = cluster.member(cluster.leader());
                for (Lease lease : leases) {
                    LeaseTimeToLiveResponse ttl = serving.blocking().leaseTimeToLive(
                            LeaseTimeToLiveRequest.newBuilder().setId(lease.id()).setKeys(true).build());
                    assertThat(ttl.getTtl()).as("remaining TTL of " + lease.clientId()).isPositive();
                    assertThat(ttl.getKeysList()).containsExactly("pause/" + lease.clientId());
                    lease.revoke();
                }
            }
        }
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.MINUTES)
    void aLeaseWhoseClientStoppedIsExpiredByTheNewLeaderOnTimeAndNotBefore() throws Exception {
        try (Cluster cluster = Cluster.start(work, 3)) {
            Duration election = cluster.electionTimeout();
            for (int trial = 1; trial <= EXPIRY_TRIALS; trial++) {
                String key = "failover/stopped-" + trial;
                String leader = cluster.leader();
                String watched = cluster.followers().get(0); // survives the kill
                MemberProcess watchedMember = cluster.member(watched);

                long stopped = RawLease.grant(watchedMember, TTL, "stopped-client-" + trial);
                LockResponse held = watchedMember.blocking().lock(LockRequest.newBuilder().setName(key).setLeaseId(stopped).build());
                assertThat(held.getAcquired()).isTrue();

                // Another client waits for the lock: the expiry must hand it over (a PUT to the waiter).
                // Its lease is long and never renewed, so only the stopped lease's expiry is measured.
                long waiterLease = RawLease.grant(watchedMember, Duration.ofSeconds(120), "waiter-" + trial);
                CompletableFuture<LockResponse> waiter = new CompletableFuture<>();
                watchedMember.async().lock(LockRequest.newBuilder().setName(key).setLeaseId(waiterLease).setTimeoutMs(-1).build(),
                        completing(waiter));
                try (Watcher watcher = Watcher.open(watchedMember, key, false, held.getFencingToken()).awaitCreated(Duration.ofSeconds(30))) {
                    Await.PROCESSES.until("the waiter is queued", Duration.ofSeconds(30), () -> watchedMember.blocking().leaseTimeToLive(
                            LeaseTimeToLiveRequest.newBuilder().setId(waiterLease).setKeys(true).build()).getWaitingList().contains(key));

                    // The client's last keep-alive; it renews no more.
                    RawLease.Renewal last = RawLease.keepAliveOnce(watchedMember, stopped, Duration.ofSeconds(10));
                    assertThat(last.ttlMs()).as("the keep-alive renewed the lease").isPositive();

                    // Kill the leader halfway through the TTL: a new leader that counted the TTL from its
                    // own election, not from the renewal it applied, would expire the lease about
                    // TTL/2 + the failover too late.
                    Await.untilTime(last.ackNanos() + TTL.toNanos() / 2);
                    cluster.kill9(leader);
                    String newLeader = cluster.awaitNewLeader(leader, Cluster.ELECTION_LIMIT);

                    Watcher.Seen expiry = watcher.await("the lock passing from the stopped lease", TTL.multipliedBy(3),
                            seen -> seen.revision() > held.getFencingToken() && (!seen.isPut() || seen.event().getKv().getLease() != stopped));
                    long sinceSend = TimeUnit.NANOSECONDS.toMillis(expiry.atNanos() - last.sentNanos());
                    long sinceAck = TimeUnit.NANOSECONDS.toMillis(expiry.atNanos() - last.ackNanos());
                    long bound = TTL.plus(election).plus(EXPIRY_LOOP).plus(MARGIN).toMillis();
                    System.out.printf("LeaseAcrossFailoverTest trial %d: expired by %s (old leader %s) %d ms after the last keep-alive was sent,"
                            + " %d ms after its ack (TTL %d ms, bound %d ms): %s%n", trial, newLeader, leader, sinceSend, sinceAck,
                            TTL.toMillis(), bound, expiry);
                    assertThat(sinceSend).as("expired no sooner than TTL after the last acknowledged keep-alive was sent (I5)")
                            .isGreaterThanOrEqualTo(TTL.toMillis());
                    assertThat(sinceAck).as("expired within TTL + election timeout + expiry loop + margin of the last ack (I5)")
                            .isLessThanOrEqualTo(bound);
                    assertThat(expiry.isPut()).as("the lock went to the waiter: " + expiry + "; its wait " + waiter).isTrue();
                    assertThat(expiry.event().getKv().getLease()).isEqualTo(waiterLease);

                    LockResponse handed = waiter.get(30, TimeUnit.SECONDS);
                    assertThat(handed.getAcquired()).isTrue();
                    assertThat(handed.getFencingToken()).isEqualTo(expiry.revision()).isGreaterThan(held.getFencingToken());
                    LeaseTimeToLiveResponse gone = cluster.member(newLeader).blocking().leaseTimeToLive(
                            LeaseTimeToLiveRequest.newBuilder().setId(stopped).build());
                    assertThat(gone.getTtl()).as("the stopped lease is gone").isEqualTo(-1);
                } finally {
                    watchedMember.blocking().leaseRevoke(LeaseRevokeRequest.newBuilder().setId(waiterLease).build());
                }
                cluster.restart(leader);
            }
        }
    }

    /** A unary gRPC observer completing {@code future}. */
    static <T> StreamObserver<T> completing(CompletableFuture<T> future) {
        return new StreamObserver<>() {
            @Override
            public void onNext(T value) {
                future.complete(value);
            }

            @Override
            public void onError(Throwable t) {
                future.completeExceptionally(t);
            }

            @Override
            public void onCompleted() {
                future.completeExceptionally(new IllegalStateException("completed without an answer"));
            }
        };
    }
}
