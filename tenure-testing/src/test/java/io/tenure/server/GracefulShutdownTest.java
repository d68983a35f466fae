package io.tenure.server;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.tenure.proto.v1.DescribeRequest;
import io.tenure.proto.v1.LeaseGrantRequest;
import io.tenure.proto.v1.LeaseKeepAliveRequest;
import io.tenure.proto.v1.LeaseKeepAliveResponse;
import io.tenure.proto.v1.LockRequest;
import io.tenure.proto.v1.LockResponse;
import io.tenure.proto.v1.LockServiceGrpc;
import io.tenure.proto.v1.LockState;
import io.tenure.proto.v1.StatusRequest;
import io.tenure.proto.v1.TryLockRequest;
import io.tenure.proto.v1.TryLockResponse;
import io.tenure.proto.v1.UnlockRequest;
import io.tenure.proto.v1.Waiter;
import io.tenure.proto.v1.WatchRequest;
import io.tenure.proto.v1.WatchResponse;
import io.tenure.testing.Await;
import io.tenure.testing.TenureCluster;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link TenureServer#shutdownGracefully()} in one JVM over real sockets: the leader of three hands
 * leadership over faster than any election could replace it, keeps every lock and every queue
 * place, ends its streams and parked waits with UNAVAILABLE, and refuses what comes after; a
 * single member does the same minus the hand-over, and a restart finds every lock.
 */
class GracefulShutdownTest {
    /**
     * Long enough that a leader replaced by an election (after a crash) takes at least this
     * long: followers wait one to two of it before they even campaign. A hand-over must beat it.
     */
    static final Duration ELECTION_TIMEOUT = Duration.ofSeconds(2);
    /** 60 election timeouts: well above the shortest lease a cluster with this timeout grants (10). */
    static final long TTL_MS = 120_000;

    @TempDir
    Path dir;
    TenureCluster cluster;

    @AfterEach
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void theLeaderHandsOverWithinAnElectionTimeoutAndKeepsLocksAndQueuePlaces() throws Exception {
        startCluster();
        String leader = Await.value("a leader every member names", Duration.ofSeconds(30), this::agreedLeader);
        List<String> followers = names().stream().filter(n -> !n.equals(leader)).toList();
        String f1 = followers.get(0);
        String f2 = followers.get(1);

        long holder = stub(f1).leaseGrant(LeaseGrantRequest.newBuilder().setClientId("holder").setTtlMs(TTL_MS).build()).getId();
        long waiter = stub(f1).leaseGrant(LeaseGrantRequest.newBuilder().setClientId("waiter").setTtlMs(TTL_MS).build()).getId();
        long token = stub(f1).lock(LockRequest.newBuilder().setName("kept").setLeaseId(holder).build()).getFencingToken();

        // On the leader: a parked wait, a keep-alive stream and a watch stream.
        Recorder<LockResponse> parked = new Recorder<>();
        LockServiceGrpc.newStub(channel(leader)).lock(
                LockRequest.newBuilder().setName("kept").setLeaseId(waiter).setTimeoutMs(-1).build(), parked);
        Await.until("the waiter parks on " + leader, Duration.ofSeconds(10),
                () -> server(leader).member().waits().count() == 1);
        long joined = describe(f1, "kept").getWaiters(0).getJoinedRevision();
        Recorder<LeaseKeepAliveResponse> keepAlive = new Recorder<>();
        StreamObserver<LeaseKeepAliveRequest> keepAlives = LockServiceGrpc.newStub(channel(leader)).leaseKeepAlive(keepAlive);
        keepAlives.onNext(LeaseKeepAliveRequest.newBuilder().setId(holder).build());
        Await.until("a keep-alive acknowledged", Duration.ofSeconds(10), () -> !keepAlive.values.isEmpty());
        Recorder<WatchResponse> watch = new Recorder<>();
        LockServiceGrpc.newStub(channel(leader)).watch(watch)
                .onNext(WatchRequest.newBuilder().setKey("kept").setWatchId(1).build());
        Await.until("the watch is created", Duration.ofSeconds(10), () -> watch.values.stream().anyMatch(WatchResponse::getCreated));

        long started = System.nanoTime();
        CompletableFuture<Boolean> shutdown = CompletableFuture.supplyAsync(() -> server(leader).shutdownGracefully());
        String next = Await.value("a leader other than " + leader + " named by " + f1, ELECTION_TIMEOUT.multipliedBy(3), () -> {
            String seen = leaderSeenBy(f1);
            return seen != null && !seen.equals(leader) ? seen : null;
        });
        long handOverMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
        assertThat(shutdown.get(30, TimeUnit.SECONDS)).as("the shutdown finished within its timeout").isTrue();
        long stoppedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
        System.out.printf("GracefulShutdownTest: %s handed over to %s in %d ms (election timeout %d ms), stopped in %d ms%n",
                leader, next, handOverMillis, ELECTION_TIMEOUT.toMillis(), stoppedMillis);
        assertThat(handOverMillis).as("another member leads sooner than an election after a crash could make one")
                .isLessThan(ELECTION_TIMEOUT.toMillis());
        assertThat(next).isIn(f1, f2);

        // What was open on the leader ended with UNAVAILABLE, the parked wait without leaving the queue.
        assertThat(parked.awaitError().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(parked.values).as("the parked wait was not answered with a result").isEmpty();
        assertThat(keepAlive.awaitError().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        Status watchEnd = watch.awaitError();
        assertThat(watchEnd.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(watch.values).anySatisfy(r -> assertThat(r.getCancelReason()).contains("shutting down"));

        LockState kept = describe(f2, "kept");
        assertThat(kept.getLeaseId()).as("the lock is still the holder's").isEqualTo(holder);
        assertThat(kept.getFencingToken()).as("with the same token").isEqualTo(token);
        assertThat(kept.getWaitersList()).extracting(Waiter::getLeaseId, Waiter::getJoinedRevision)
                .as("the waiter kept its place").containsExactly(org.assertj.core.groups.Tuple.tuple(waiter, joined));

        // New calls to the stopped member fail UNAVAILABLE; the others serve, and the waiter,
        // re-attached elsewhere as the SDK does, is granted on the release.
        assertThatThrownBy(() -> stub(leader).status(StatusRequest.getDefaultInstance()))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
        CompletableFuture<LockResponse> reattached = CompletableFuture.supplyAsync(() ->
                stub(f2).lock(LockRequest.newBuilder().setName("kept").setLeaseId(waiter).setTimeoutMs(-1).build()));
        stub(f1).unlock(UnlockRequest.newBuilder().setKey("kept").setLeaseId(holder).setFencingToken(token).build());
        LockResponse granted = reattached.get(30, TimeUnit.SECONDS);
        assertThat(granted.getAcquired()).isTrue();
        assertThat(granted.getFencingToken()).isGreaterThan(token);
    }

    @Test
    void aDrainingMemberRefusesNewCallsAndAStoppedSingleMemberKeepsEveryLock() throws Exception {
        TenureCluster.Builder config = TenureCluster.builder().dataDir(dir.resolve("single"))
                .config(c -> c.withShutdownTimeout(Duration.ofSeconds(10)));
        Map<String, Long> tokens = new LinkedHashMap<>();
        long holder;
        long waiter;
        long joined;
        try (TenureCluster single = config.start()) {
            holder = grantLease(single, "holder", TTL_MS);
            waiter = grantLease(single, "waiter", TTL_MS);
            for (int i = 0; i < 20; i++) {
                String key = "single/" + i;
                tokens.put(key, single.blocking(0).lock(LockRequest.newBuilder().setName(key).setLeaseId(holder).build()).getFencingToken());
            }
            Recorder<LockResponse> parked = new Recorder<>();
            single.async(0).lock(LockRequest.newBuilder().setName("single/0").setLeaseId(waiter).setTimeoutMs(-1).build(), parked);
            Await.until("the waiter parks", Duration.ofSeconds(10), () -> single.server(0).member().waits().count() == 1);
            joined = single.blocking(0).describe(DescribeRequest.newBuilder().setName("single/0").build())
                    .getLock().getWaiters(0).getJoinedRevision();

            // Draining alone (the first step of a shutdown): new calls are refused, with the reason.
            single.server(0).member().startDraining();
            assertThatThrownBy(() -> single.blocking(0).status(StatusRequest.getDefaultInstance()))
                    .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
                        assertThat(e.getStatus().getDescription()).contains("shutting down, retry another member");
                    });
            assertThat(parked.values).as("a call admitted before keeps waiting").isEmpty();
            assertThat(parked.error).isNull();

            assertThat(single.server(0).shutdownGracefully()).isTrue();
            assertThat(parked.awaitError().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(single.server(0).failure()).isNull();
        }

        try (TenureCluster restarted = config.start()) {
            for (Map.Entry<String, Long> held : tokens.entrySet()) {
                TryLockResponse again = restarted.blocking(0).tryLock(TryLockRequest.newBuilder()
                        .setName(held.getKey()).setLeaseId(holder).build());
                assertThat(again.getAcquired()).as(held.getKey() + " still held by its lease").isTrue();
                assertThat(again.getFencingToken()).as(held.getKey() + " keeps its token").isEqualTo(held.getValue());
            }
            LockState first = restarted.blocking(0).describe(DescribeRequest.newBuilder().setName("single/0").build()).getLock();
            assertThat(first.getWaitersList()).extracting(Waiter::getLeaseId, Waiter::getJoinedRevision)
                    .as("the waiter handed back at shutdown kept its place")
                    .containsExactly(org.assertj.core.groups.Tuple.tuple(waiter, joined));
        }
    }

    private void startCluster() {
        cluster = TenureCluster.builder().members(3).dataDir(dir).electionTimeout(ELECTION_TIMEOUT)
                .config(c -> c.withShutdownTimeout(Duration.ofSeconds(10))).start();
    }

    private List<String> names() {
        return List.of("n1", "n2", "n3");
    }

    private TenureServer server(String name) {
        return cluster.server(cluster.indexOf(name));
    }

    private ManagedChannel channel(String name) {
        return cluster.channel(cluster.indexOf(name));
    }

    /** The leader as the member's Raft division knows it (no read barrier, so it answers during a hand-over). */
    private String leaderSeenBy(String name) {
        return server(name).member().members().stream().filter(io.tenure.proto.v1.Member::getLeader)
                .map(io.tenure.proto.v1.Member::getName).findFirst().orElse(null);
    }

    /** A leader that every member names and that has applied an entry of its term, or null. */
    private String agreedLeader() {
        String first = leaderSeenBy("n1");
        boolean agreed = first != null && names().stream().allMatch(n -> first.equals(leaderSeenBy(n)));
        return agreed && server(first).member().leaderReady() ? first : null;
    }

    private static long grantLease(TenureCluster m, String clientId, long ttlMillis) {
        return m.blocking(0).leaseGrant(LeaseGrantRequest.newBuilder().setClientId(clientId).setTtlMs(ttlMillis).build()).getId();
    }

    private LockServiceGrpc.LockServiceBlockingStub stub(String member) {
        return LockServiceGrpc.newBlockingStub(channel(member)).withDeadlineAfter(30, TimeUnit.SECONDS);
    }

    private LockState describe(String member, String name) {
        return stub(member).describe(DescribeRequest.newBuilder().setName(name).build()).getLock();
    }


    /** Records what a call or stream received and how it ended. */
    static final class Recorder<T> implements StreamObserver<T> {
        final ConcurrentLinkedQueue<T> values = new ConcurrentLinkedQueue<>();
        volatile Status error;
        volatile boolean completed;

        @Override
        public void onNext(T value) {
            values.add(value);
        }

        @Override
        public void onError(Throwable t) {
            error = Status.fromThrowable(t);
        }

        @Override
        public void onCompleted() {
            completed = true;
        }

        Status awaitError() {
            Await.until("the call ends with an error", Duration.ofSeconds(10), () -> error != null || completed);
            assertThat(completed).as("ended with an error, not completed").isFalse();
            return error;
        }
    }
}
