package io.tenure.server;

import com.google.protobuf.ByteString;
import io.grpc.Context;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.tenure.core.kernel.LeaseView;
import io.tenure.core.lock.LockView;
import io.tenure.proto.v1.Event;
import io.tenure.proto.v1.LeaseGrantRequest;
import io.tenure.proto.v1.LeaseKeepAliveRequest;
import io.tenure.proto.v1.LeaseKeepAliveResponse;
import io.tenure.proto.v1.LeaseRevokeRequest;
import io.tenure.proto.v1.LeaseTimeToLiveRequest;
import io.tenure.proto.v1.LeaseTimeToLiveResponse;
import io.tenure.proto.v1.LockCancelRequest;
import io.tenure.proto.v1.LockCancelResponse;
import io.tenure.proto.v1.LockRequest;
import io.tenure.proto.v1.LockResponse;
import io.tenure.proto.v1.StatusRequest;
import io.tenure.proto.v1.StatusResponse;
import io.tenure.proto.v1.TryLockRequest;
import io.tenure.proto.v1.TryLockResponse;
import io.tenure.proto.v1.UnlockRequest;
import io.tenure.proto.v1.WatchRequest;
import io.tenure.proto.v1.WatchResponse;
import io.tenure.testing.Await;
import io.tenure.testing.TenureCluster;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** One real member over gRPC on 127.0.0.1, with its Raft log fsynced in a temporary directory. */
class SingleMemberTest {
    @TempDir
    Path dataDir;
    TenureCluster member;

    @BeforeEach
    void start() {
        member = TenureCluster.builder().dataDir(dataDir).start();
    }

    @AfterEach
    void stop() throws Exception {
        member.close();
    }

    private long grantLease(String clientId, long ttlMillis) {
        return member.blocking(0).leaseGrant(LeaseGrantRequest.newBuilder().setClientId(clientId).setTtlMs(ttlMillis).build()).getId();
    }

    private LockResponse lock(String name, long lease, long timeoutMs) {
        return member.blocking(0).lock(LockRequest.newBuilder().setName(name).setLeaseId(lease).setTimeoutMs(timeoutMs).build());
    }

    private void unlock(String name, long lease, long token) {
        member.blocking(0).unlock(UnlockRequest.newBuilder().setKey(name).setLeaseId(lease).setFencingToken(token).build());
    }

    @Test
    void thirtyTwoClientsHandOneLockAroundWithoutOverlapOrStaleWrite() throws Exception {
        int clients = 32;
        int cycles = 200;
        FencedRegister register = new FencedRegister();
        ExecutorService pool = Executors.newFixedThreadPool(clients);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int c = 0; c < clients; c++) {
                int client = c;
                done.add(pool.submit(() -> {
                    long lease = grantLease("client-" + client, 60_000);
                    for (int i = 0; i < cycles; i++) {
                        LockResponse granted = lock("hot", lease, -1);
                        assertThat(granted.getAcquired()).isTrue();
                        register.enter();
                        register.increment(granted.getFencingToken());
                        register.leave();
                        unlock("hot", lease, granted.getFencingToken());
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(5, TimeUnit.MINUTES);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(register.overlaps()).as("overlapping holders").isZero();
        assertThat(register.refusals()).as("stale tokens refused by the fenced register").isZero();
        assertThat(register.value()).isEqualTo((long) clients * cycles);
        assertThat(member.server(0).member().locks().describe("hot")).isNull();
    }

    @Test
    void lockWithTimeoutReturnsNotAcquiredAndLeavesNoWaiter() {
        long holder = grantLease("holder", 60_000);
        long waiter = grantLease("waiter", 60_000);
        LockResponse held = lock("jobs/nightly", holder, 0);
        assertThat(held.getAcquired()).isTrue();

        LockResponse timedOut = lock("jobs/nightly", waiter, 200);

        assertThat(timedOut.getAcquired()).isFalse();
        assertThat(timedOut.getFencingToken()).isZero();
        assertThat(timedOut.getHolder()).isEqualTo("holder");
        LockView view = member.server(0).member().locks().describe("jobs/nightly");
        assertThat(view.leaseId()).isEqualTo(holder);
        assertThat(view.waiters()).isEmpty();
        assertThat(member.server(0).member().waits().count()).isZero();
    }

    @Test
    void tryLockNeverWaitsAndNamesTheHolder() {
        long a = grantLease("a", 60_000);
        long b = grantLease("b", 60_000);
        TryLockResponse first = member.blocking(0).tryLock(TryLockRequest.newBuilder().setName("k").setLeaseId(a).build());
        TryLockResponse second = member.blocking(0).tryLock(TryLockRequest.newBuilder().setName("k").setLeaseId(b).build());
        TryLockResponse again = member.blocking(0).tryLock(TryLockRequest.newBuilder().setName("k").setLeaseId(a).build());
        assertThat(first.getAcquired()).isTrue();
        assertThat(second.getAcquired()).isFalse();
        assertThat(second.getHolder()).isEqualTo("a");
        assertThat(again.getAcquired()).isTrue();
        assertThat(again.getFencingToken()).as("reentrant: the same grant").isEqualTo(first.getFencingToken());
        assertThat(member.server(0).member().locks().describe("k").waiters()).isEmpty();
    }

    /**
     * A copy of an acquire that reaches the member after that acquire ended (a retry still in
     * flight when the client released, or gave up waiting) is refused: it must not grant the lock,
     * or queue the lease, for a caller that stopped waiting.
     */
    @Test
    void aLateCopyOfAnEndedAcquireIsRefusedOverTheWire() {
        long a = grantLease("a", 60_000);
        long b = grantLease("b", 60_000);
        LockRequest acquire = LockRequest.newBuilder().setName("late").setLeaseId(a).setTimeoutMs(-1).setRequestId(41).build();
        LockResponse granted = member.blocking(0).lock(acquire);
        member.blocking(0).unlock(UnlockRequest.newBuilder().setKey("late").setLeaseId(a).setFencingToken(granted.getFencingToken()).build());

        assertThatThrownBy(() -> member.blocking(0).lock(acquire))
                .isInstanceOf(StatusRuntimeException.class)
                .hasMessageContaining("FAILED_PRECONDITION")
                .hasMessageContaining("acquire request 41 of lease " + a + " for lock 'late' already ended");
        assertThatThrownBy(() -> member.blocking(0).tryLock(TryLockRequest.newBuilder().setName("late").setLeaseId(a).setRequestId(41).build()))
                .hasMessageContaining("already ended");
        assertThat(member.server(0).member().locks().describe("late")).as("still free").isNull();

        // Withdrawn before the acquire it names arrives (the withdrawal overtook a slow copy).
        TryLockResponse held = member.blocking(0).tryLock(TryLockRequest.newBuilder().setName("late").setLeaseId(b).build());
        member.blocking(0).lockCancel(LockCancelRequest.newBuilder().setName("late").setLeaseId(a).setRequestId(42).build());
        assertThatThrownBy(() -> member.blocking(0).lock(acquire.toBuilder().setRequestId(42).build()))
                .hasMessageContaining("already ended");
        assertThat(member.server(0).member().locks().describe("late").waiters()).as("lease a was not queued").isEmpty();

        // A new acquire is a new request, and is queued as ever.
        LockResponse fresh = member.blocking(0).lock(acquire.toBuilder().setRequestId(43).setTimeoutMs(50).build());
        assertThat(fresh.getAcquired()).isFalse();
        assertThat(fresh.getHolder()).isEqualTo("b");
        assertThat(held.getAcquired()).isTrue();
    }

    @Test
    void anExpiredLeaseFreesItsLockAndTheNextWaiterGetsALargerToken() throws Exception {
        long mortal = grantLease("mortal", 1_000);
        long next = grantLease("next", 60_000);
        LockResponse first = lock("leader-duty", mortal, 0);
        assertThat(first.getAcquired()).isTrue();

        // Nobody keeps `mortal` alive: the leader expires it through the log about a second later.
        LockResponse second = member.blocking(0).withDeadlineAfter(20, TimeUnit.SECONDS)
                .lock(LockRequest.newBuilder().setName("leader-duty").setLeaseId(next).setTimeoutMs(-1).build());

        assertThat(second.getAcquired()).isTrue();
        assertThat(second.getFencingToken()).isGreaterThan(first.getFencingToken());
        LeaseTimeToLiveResponse gone = member.blocking(0).leaseTimeToLive(LeaseTimeToLiveRequest.newBuilder().setId(mortal).build());
        assertThat(gone.getTtl()).isEqualTo(-1);
        assertThatThrownBy(() -> unlock("leader-duty", mortal, first.getFencingToken()))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND));
    }

    @Test
    void keepAlivesHoldALeasePastItsTtl() throws Exception {
        long lease = grantLease("kept", 1_000);
        assertThat(lock("kept-lock", lease, 0).getAcquired()).isTrue();
        BlockingQueue<LeaseKeepAliveResponse> acks = new LinkedBlockingQueue<>();
        StreamObserver<LeaseKeepAliveRequest> stream = member.async(0).leaseKeepAlive(new StreamObserver<>() {
            @Override public void onNext(LeaseKeepAliveResponse r) { acks.add(r); }
            @Override public void onError(Throwable t) { }
            @Override public void onCompleted() { }
        });
        // Renew at TTL/3 for three TTLs, as a client does.
        java.util.concurrent.ScheduledExecutorService renewer = Executors.newSingleThreadScheduledExecutor();
        renewer.scheduleAtFixedRate(() -> stream.onNext(LeaseKeepAliveRequest.newBuilder().setId(lease).build()),
                0, 300, TimeUnit.MILLISECONDS);
        try {
            for (int i = 0; i < 10; i++) {
                LeaseKeepAliveResponse ack = acks.poll(5, TimeUnit.SECONDS);
                assertThat(ack).isNotNull();
                assertThat(ack.getId()).isEqualTo(lease);
                assertThat(ack.getTtlMs()).isEqualTo(1_000);
            }
        } finally {
            renewer.shutdownNow();
            renewer.awaitTermination(5, TimeUnit.SECONDS);
        }
        acks.clear();
        stream.onNext(LeaseKeepAliveRequest.newBuilder().setId(123456789L).build());
        assertThat(acks.poll(5, TimeUnit.SECONDS).getTtl()).as("unknown lease answers ttl 0").isZero();
        stream.onCompleted();
        assertThat(member.server(0).member().locks().describe("kept-lock").leaseId()).isEqualTo(lease);
        LeaseTimeToLiveResponse ttl = member.blocking(0).leaseTimeToLive(LeaseTimeToLiveRequest.newBuilder().setId(lease).setKeys(true).build());
        assertThat(ttl.getKeysList()).containsExactly("kept-lock");
        assertThat(ttl.getGrantedTtlMs()).isEqualTo(1_000);
        assertThat(ttl.getClientId()).isEqualTo("kept");
    }

    @Test
    void aKeepAliveForSeveralLeasesIsAnsweredOnceListingEach() throws Exception {
        long a = grantLease("a", 60_000);
        long b = grantLease("b", 30_000);
        BlockingQueue<LeaseKeepAliveResponse> acks = new LinkedBlockingQueue<>();
        CompletableFuture<Throwable> ended = new CompletableFuture<>();
        StreamObserver<LeaseKeepAliveRequest> stream = member.async(0).leaseKeepAlive(new StreamObserver<>() {
            @Override public void onNext(LeaseKeepAliveResponse r) { acks.add(r); }
            @Override public void onError(Throwable t) { ended.complete(t); }
            @Override public void onCompleted() { ended.complete(null); }
        });
        long renewedBefore = member.server(0).member().stateMachine().read(s -> s.lease(a).renewedAt());

        stream.onNext(LeaseKeepAliveRequest.newBuilder().setId(a).addIds(b).addIds(424242L).build());

        LeaseKeepAliveResponse ack = acks.poll(5, TimeUnit.SECONDS);
        assertThat(ack).isNotNull();
        assertThat(ack.getRenewedIdsList()).containsExactly(a, b, 424242L);
        assertThat(ack.getRenewedTtlMsList()).as("an unknown lease answers 0").containsExactly(60_000L, 30_000L, 0L);
        long renewedAfter = member.server(0).member().stateMachine().read(s -> s.lease(a).renewedAt());
        assertThat(renewedAfter).isGreaterThan(renewedBefore);

        LeaseKeepAliveRequest.Builder tooMany = LeaseKeepAliveRequest.newBuilder();
        for (int i = 0; i <= 10_000; i++) {
            tooMany.addIds(a);
        }
        stream.onNext(tooMany.build());
        Throwable refusal = ended.get(5, TimeUnit.SECONDS);
        assertThat(refusal).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
            assertThat(e.getStatus().getDescription()).contains("ids").contains("10000");
        });
        LeaseView stillThere = member.server(0).member().stateMachine().read(s -> s.lease(b));
        assertThat(stillThere).as("nothing stored is lost").isNotNull();
    }

    /** A parked Lock call of {@code lease} on {@code name}, cancellable as a client going away would be. */
    private Context.CancellableContext parkedCall(String name, long lease, long timeoutMs, CompletableFuture<LockResponse> answer) {
        Context.CancellableContext call = Context.current().withCancellation();
        call.run(() -> member.async(0).lock(LockRequest.newBuilder().setName(name).setLeaseId(lease).setTimeoutMs(timeoutMs).build(),
                new StreamObserver<>() {
                    @Override public void onNext(LockResponse r) { answer.complete(r); }
                    @Override public void onError(Throwable t) { answer.completeExceptionally(t); }
                    @Override public void onCompleted() { }
                }));
        return call;
    }

    @Test
    void aWaiterWhoseCallerGoesAwayKeepsItsPlaceForTheRetriedCall() throws Exception {
        long holder = grantLease("holder", 60_000);
        long waiter = grantLease("waiter", 60_000);
        long token = lock("q", holder, 0).getFencingToken();

        Context.CancellableContext first = parkedCall("q", waiter, -1, new CompletableFuture<>());
        Await.until("the waiter's first call waits in the queue", Duration.ofSeconds(10),
                () -> member.server(0).member().locks().describe("q").waiters().size() == 1);
        // The client re-attaches its wait (as after a failover), then its first call goes away.
        CompletableFuture<LockResponse> retried = new CompletableFuture<>();
        parkedCall("q", waiter, -1, retried);
        Await.until("both calls are parked", Duration.ofSeconds(10), () -> member.server(0).member().waits().count() == 2);
        first.cancel(null);
        Await.until("the cancelled call is forgotten", Duration.ofSeconds(10), () -> member.server(0).member().waits().count() == 1);
        assertThat(member.server(0).member().locks().describe("q").waiters()).as("the lease keeps its place")
                .extracting(w -> w.leaseId()).containsExactly(waiter);

        unlock("q", holder, token);
        LockResponse granted = retried.get(10, TimeUnit.SECONDS);
        assertThat(granted.getAcquired()).isTrue();
        assertThat(granted.getFencingToken()).isGreaterThan(token);
        LockView now = member.server(0).member().locks().describe("q");
        assertThat(now.leaseId()).as("the retried call's grant is held").isEqualTo(waiter);
        assertThat(now.fencingToken()).isEqualTo(granted.getFencingToken());
    }

    @Test
    void lockCancelWithdrawsAWaitAndAnswersItsParkedCall() throws Exception {
        long holder = grantLease("holder", 60_000);
        long waiter = grantLease("waiter", 60_000);
        long token = lock("c", holder, 0).getFencingToken();
        CompletableFuture<LockResponse> parked = new CompletableFuture<>();
        parkedCall("c", waiter, -1, parked);
        Await.until("the waiter waits", Duration.ofSeconds(10), () -> member.server(0).member().locks().describe("c").waiters().size() == 1);

        LockCancelResponse cancelled = member.blocking(0).lockCancel(LockCancelRequest.newBuilder().setName("c").setLeaseId(waiter).build());
        assertThat(cancelled.getAcquired()).isFalse();
        assertThat(cancelled.getFencingToken()).isZero();
        assertThat(parked.get(10, TimeUnit.SECONDS).getAcquired()).as("the parked call is answered").isFalse();
        assertThat(member.server(0).member().locks().describe("c").waiters()).isEmpty();
        assertThat(member.server(0).member().waits().count()).isZero();

        unlock("c", holder, token);
        assertThat(member.server(0).member().locks().describe("c")).as("nobody inherits the lock").isNull();
        // Cancelling again, or a wait that never was, changes nothing.
        assertThat(member.blocking(0).lockCancel(LockCancelRequest.newBuilder().setName("c").setLeaseId(waiter).build()).getAcquired()).isFalse();
    }

    @Test
    void lockCancelAfterTheGrantSaysSoAndKeepsTheLock() {
        long lease = grantLease("holder", 60_000);
        long token = lock("won", lease, 0).getFencingToken();
        LockCancelResponse answer = member.blocking(0).lockCancel(LockCancelRequest.newBuilder().setName("won").setLeaseId(lease).build());
        assertThat(answer.getAcquired()).isTrue();
        assertThat(answer.getFencingToken()).isEqualTo(token);
        assertThat(member.server(0).member().locks().describe("won").fencingToken()).isEqualTo(token);
        expect(Status.Code.INVALID_ARGUMENT, "name", () -> member.blocking(0).lockCancel(LockCancelRequest.newBuilder().setName("").setLeaseId(lease).build()));
    }

    @Test
    void aTryByALeaseThatAlreadyWaitsAnswersAtOnceAndKeepsItsPlace() throws Exception {
        long holder = grantLease("holder", 60_000);
        long waiter = grantLease("waiter", 60_000);
        lock("t", holder, 0);
        parkedCall("t", waiter, -1, new CompletableFuture<>());
        Await.until("the waiter waits", Duration.ofSeconds(10), () -> member.server(0).member().locks().describe("t").waiters().size() == 1);

        TryLockResponse tried = member.blocking(0).tryLock(TryLockRequest.newBuilder().setName("t").setLeaseId(waiter).build());
        assertThat(tried.getAcquired()).isFalse();
        assertThat(tried.getHolder()).isEqualTo("holder");
        assertThat(member.server(0).member().locks().describe("t").waiters()).extracting(w -> w.leaseId()).containsExactly(waiter);
    }

    @Test
    void revokingALeaseHandsItsLockToTheNextWaiter() throws Exception {
        long first = grantLease("first", 60_000);
        long second = grantLease("second", 60_000);
        long token = lock("r", first, 0).getFencingToken();
        CompletableFuture<LockResponse> waiting = CompletableFuture.supplyAsync(() -> lock("r", second, -1));
        Await.until("second waits", Duration.ofSeconds(10), () -> member.server(0).member().locks().describe("r").waiters().size() == 1);

        member.blocking(0).leaseRevoke(LeaseRevokeRequest.newBuilder().setId(first).build());

        LockResponse granted = waiting.get(10, TimeUnit.SECONDS);
        assertThat(granted.getAcquired()).isTrue();
        assertThat(granted.getFencingToken()).isGreaterThan(token);
    }

    @Test
    void watchSeesPutOnAcquireAndDeleteOnReleaseInOrderAndReplaysFromARevision() throws Exception {
        BlockingQueue<WatchResponse> live = new LinkedBlockingQueue<>();
        StreamObserver<WatchRequest> watch = member.async(0).watch(collector(live));
        watch.onNext(WatchRequest.newBuilder().setKey("w").setWatchId(1).setPrevKv(true).build());
        assertThat(live.poll(10, TimeUnit.SECONDS).getCreated()).isTrue();

        long lease = grantLease("watched-holder", 60_000);
        LockResponse granted = member.blocking(0).lock(LockRequest.newBuilder().setName("w").setLeaseId(lease)
                .setMetadata(ByteString.copyFromUtf8("migration 42")).build());
        unlock("w", lease, granted.getFencingToken());

        List<Event> events = take(live, 2);
        assertThat(events).extracting(Event::getType).containsExactly(Event.EventType.PUT, Event.EventType.DELETE);
        Event put = events.get(0);
        assertThat(put.getKv().getModRevision()).isEqualTo(granted.getFencingToken());
        assertThat(put.getKv().getHolder()).isEqualTo("watched-holder");
        assertThat(put.getKv().getLease()).isEqualTo(lease);
        assertThat(put.getKv().getMetadata().toStringUtf8()).isEqualTo("migration 42");
        assertThat(events.get(1).getKv().getModRevision()).isGreaterThan(put.getKv().getModRevision());
        assertThat(events.get(1).getPrevKv().getHolder()).isEqualTo("watched-holder");
        watch.onCompleted();

        BlockingQueue<WatchResponse> replayed = new LinkedBlockingQueue<>();
        StreamObserver<WatchRequest> again = member.async(0).watch(collector(replayed));
        again.onNext(WatchRequest.newBuilder().setKey("w").setWatchId(7).setStartRevision(put.getKv().getModRevision()).build());
        assertThat(replayed.poll(10, TimeUnit.SECONDS).getCreated()).isTrue();
        List<Event> history = take(replayed, 2);
        assertThat(history).extracting(e -> e.getKv().getModRevision())
                .containsExactly(put.getKv().getModRevision(), events.get(1).getKv().getModRevision());
        again.onCompleted();
    }

    /** Barriers have a namespace of their own: one name, a lock's and a barrier's events, each naming its kind, and a watch may keep one kind. */
    @Test
    void eachEventNamesItsKindAndAWatchMayKeepOnlyTheKindsItNames() throws Exception {
        BlockingQueue<WatchResponse> every = new LinkedBlockingQueue<>();
        StreamObserver<WatchRequest> all = member.async(0).watch(collector(every));
        all.onNext(WatchRequest.newBuilder().setKey("k/shared").setWatchId(1).build());
        BlockingQueue<WatchResponse> barriersOnly = new LinkedBlockingQueue<>();
        StreamObserver<WatchRequest> barriers = member.async(0).watch(collector(barriersOnly));
        barriers.onNext(WatchRequest.newBuilder().setKey("k/shared").setWatchId(2).addKinds("barrier").build());
        assertThat(every.poll(10, TimeUnit.SECONDS).getCreated()).isTrue();
        assertThat(barriersOnly.poll(10, TimeUnit.SECONDS).getCreated()).isTrue();

        long lease = grantLease("kinds", 60_000);
        lock("k/shared", lease, 0);
        io.tenure.proto.v1.BarrierServiceGrpc.newBlockingStub(member.channel(0)).await(io.tenure.proto.v1.BarrierAwaitRequest.newBuilder()
                .setName("k/shared").setLeaseId(lease).setParties(1).build());

        assertThat(take(every, 3)).extracting(Event::getKind, Event::getType).containsExactly(
                org.assertj.core.api.Assertions.tuple("lock", Event.EventType.PUT),
                org.assertj.core.api.Assertions.tuple("barrier", Event.EventType.PUT),
                org.assertj.core.api.Assertions.tuple("barrier", Event.EventType.DELETE));
        assertThat(take(barriersOnly, 2)).extracting(Event::getKind).containsExactly("barrier", "barrier");

        BlockingQueue<WatchResponse> refused = new LinkedBlockingQueue<>();
        StreamObserver<WatchRequest> unknown = member.async(0).watch(collector(refused));
        unknown.onNext(WatchRequest.newBuilder().setKey("k/shared").setWatchId(3).addKinds("spreadsheet").build());
        WatchResponse cancelled = refused.poll(10, TimeUnit.SECONDS);
        assertThat(cancelled.getCanceled()).isTrue();
        assertThat(cancelled.getCancelReason()).contains("INVALID_ARGUMENT", "kinds", "'spreadsheet'");
        all.onCompleted();
        barriers.onCompleted();
        unknown.onCompleted();
    }

    @Test
    void badInputIsRefusedWithAStatusNamingTheProblemAndChangesNothing() {
        long lease = grantLease("owner", 60_000);
        long other = grantLease("other", 60_000);
        long token = lock("guarded", lease, 0).getFencingToken();
        long revision = status().getRevision();

        expect(Status.Code.INVALID_ARGUMENT, "name", () -> lock("", lease, 0));
        expect(Status.Code.INVALID_ARGUMENT, "name", () -> lock("x".repeat(1025), lease, 0));
        expect(Status.Code.INVALID_ARGUMENT, "metadata", () -> member.blocking(0).lock(LockRequest.newBuilder()
                .setName("guarded").setLeaseId(lease).setMetadata(ByteString.copyFrom(new byte[64 * 1024 + 1])).build()));
        expect(Status.Code.INVALID_ARGUMENT, "timeout_ms", () -> lock("guarded", other, -2));
        expect(Status.Code.INVALID_ARGUMENT, "ttl", () -> grantLease("zero", 0));
        expect(Status.Code.INVALID_ARGUMENT, "ttl", () -> grantLease("negative", -5));
        expect(Status.Code.INVALID_ARGUMENT, "ttl", () -> grantLease("forever", 365L * 24 * 3600 * 1000));
        expect(Status.Code.NOT_FOUND, "lease", () -> lock("guarded", 424242, 0));
        expect(Status.Code.FAILED_PRECONDITION, "stale", () -> unlock("guarded", lease, token - 1));
        expect(Status.Code.FAILED_PRECONDITION, "not held by lease", () -> unlock("guarded", other, token));
        expect(Status.Code.NOT_FOUND, "lease", () -> unlock("guarded", 424242, token));
        expect(Status.Code.NOT_FOUND, "lease", () -> member.blocking(0).leaseRevoke(LeaseRevokeRequest.newBuilder().setId(999).build()));

        LockView view = member.server(0).member().locks().describe("guarded");
        assertThat(view.leaseId()).isEqualTo(lease);
        assertThat(view.fencingToken()).isEqualTo(token);
        assertThat(view.waiters()).isEmpty();
        int leases = member.server(0).member().stateMachine().read(s -> s.leaseCount());
        assertThat(leases).isEqualTo(2);
        assertThat(status().getRevision()).as("rejections change no state, only the applied position").isGreaterThanOrEqualTo(revision);
    }

    @Test
    void statusNamesTheLeaderAndTheAppliedIndex() {
        grantLease("status-check", 60_000); // the first entry of a fresh log is index 0, Raft's own
        StatusResponse status = status();
        assertThat(status.getLeader()).isEqualTo("n1");
        assertThat(status.getMemberName()).isEqualTo("n1");
        assertThat(status.getMemberId()).isEqualTo(MemberInfo.idOf("n1"));
        assertThat(status.getLeaderEndpoint()).isEqualTo("127.0.0.1:" + member.server(0).clientPort());
        assertThat(status.getRaftTerm()).isPositive();
        assertThat(status.getAppliedIndex()).isPositive();
        assertThat(status.getCommitIndex()).isGreaterThanOrEqualTo(status.getAppliedIndex());
        assertThat(status.getHeader().getClusterId()).isEqualTo(status.getClusterId()).isNotZero();
    }

    private StatusResponse status() {
        return member.blocking(0).status(StatusRequest.getDefaultInstance());
    }

    private static void expect(Status.Code code, String messagePart, Runnable call) {
        assertThatThrownBy(call::run)
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(code);
                    assertThat(e.getStatus().getDescription()).contains(messagePart);
                });
    }

    private static StreamObserver<WatchResponse> collector(BlockingQueue<WatchResponse> into) {
        return new StreamObserver<>() {
            @Override public void onNext(WatchResponse r) { into.add(r); }
            @Override public void onError(Throwable t) { }
            @Override public void onCompleted() { }
        };
    }

    private static List<Event> take(BlockingQueue<WatchResponse> responses, int count) throws InterruptedException {
        List<Event> events = new ArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (events.size() < count) {
            WatchResponse r = responses.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            assertThat(r).as("watch response within 10 s").isNotNull();
            events.addAll(r.getEventsList());
        }
        return events;
    }
}
