package io.tenure.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnknownFieldSet;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.tenure.proto.v1.BarrierAwaitRequest;
import io.tenure.proto.v1.BarrierDescribeRequest;
import io.tenure.proto.v1.BarrierLeaveRequest;
import io.tenure.proto.v1.BarrierServiceGrpc;
import io.tenure.proto.v1.CampaignCancelRequest;
import io.tenure.proto.v1.CampaignRequest;
import io.tenure.proto.v1.DescribeRequest;
import io.tenure.proto.v1.DoubleBarrierCancelRequest;
import io.tenure.proto.v1.DoubleBarrierDescribeRequest;
import io.tenure.proto.v1.DoubleBarrierEnterRequest;
import io.tenure.proto.v1.DoubleBarrierLeaveRequest;
import io.tenure.proto.v1.DoubleBarrierServiceGrpc;
import io.tenure.proto.v1.ElectionServiceGrpc;
import io.tenure.proto.v1.LatchAwaitRequest;
import io.tenure.proto.v1.LatchCancelRequest;
import io.tenure.proto.v1.LatchCountDownRequest;
import io.tenure.proto.v1.LatchDescribeRequest;
import io.tenure.proto.v1.LatchServiceGrpc;
import io.tenure.proto.v1.LatchSetCountRequest;
import io.tenure.proto.v1.LeaderRequest;
import io.tenure.proto.v1.LeaseGrantRequest;
import io.tenure.proto.v1.LeaseRevokeRequest;
import io.tenure.proto.v1.LeaseTimeToLiveRequest;
import io.tenure.proto.v1.LockCancelRequest;
import io.tenure.proto.v1.LockRequest;
import io.tenure.proto.v1.ProclaimRequest;
import io.tenure.proto.v1.ResignRequest;
import io.tenure.proto.v1.SemaphoreAcquireRequest;
import io.tenure.proto.v1.SemaphoreDescribeRequest;
import io.tenure.proto.v1.SemaphoreReleaseRequest;
import io.tenure.proto.v1.SemaphoreServiceGrpc;
import io.tenure.proto.v1.SessionAnswer;
import io.tenure.proto.v1.SessionCall;
import io.tenure.proto.v1.SessionRequest;
import io.tenure.proto.v1.SessionResponse;
import io.tenure.proto.v1.TryLockRequest;
import io.tenure.proto.v1.UnlockRequest;
import io.tenure.proto.v1.CounterAddRequest;
import io.tenure.proto.v1.CounterCompareAndSetRequest;
import io.tenure.proto.v1.CounterGetRequest;
import io.tenure.proto.v1.CounterServiceGrpc;
import io.tenure.proto.v1.CounterSetRequest;
import io.tenure.proto.v1.KvCompare;
import io.tenure.proto.v1.KvCompareAndSetRequest;
import io.tenure.proto.v1.KvDeleteRequest;
import io.tenure.proto.v1.KvGetRequest;
import io.tenure.proto.v1.KvGetResponse;
import io.tenure.proto.v1.KvPutRequest;
import io.tenure.proto.v1.KvServiceGrpc;
import io.tenure.proto.v1.KvTxnCompare;
import io.tenure.proto.v1.KvTxnKind;
import io.tenure.proto.v1.KvTxnOp;
import io.tenure.proto.v1.KvTxnPut;
import io.tenure.proto.v1.KvTxnRelation;
import io.tenure.proto.v1.KvTxnRequest;
import io.tenure.proto.v1.KvTxnTarget;
import io.tenure.testing.Await;
import io.tenure.testing.TenureCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Session stream on a real member: many calls to a message, of every kind, each answered once
 * by id with what its unary RPC gives (its response, or its status naming the field at fault),
 * waits answered when the log decides, abandons and a broken stream forgetting the call but not
 * the lease's place.
 */
class SessionStreamTest {
    @TempDir
    Path dataDir;
    TenureCluster member;

    @BeforeEach
    void start() {
        member = TenureCluster.builder().dataDir(dataDir).start();
    }

    @AfterEach
    void stop() {
        member.close();
    }

    /** One client's stream: what it sent and what came back, by call id. */
    private final class Session implements StreamObserver<SessionResponse> {
        final Map<Long, SessionAnswer> answers = new ConcurrentHashMap<>();
        final BlockingQueue<SessionResponse> messages = new LinkedBlockingQueue<>();
        final CompletableFuture<Status> ended = new CompletableFuture<>();
        final StreamObserver<SessionRequest> requests = member.async(0).session(this);

        void send(SessionCall.Builder... calls) {
            SessionRequest.Builder message = SessionRequest.newBuilder();
            for (SessionCall.Builder call : calls) {
                message.addCalls(call);
            }
            requests.onNext(message.build());
        }

        SessionAnswer await(long id) {
            Await.until("the answer to call " + id, Duration.ofSeconds(10), () -> answers.containsKey(id));
            return answers.get(id);
        }

        @Override
        public void onNext(SessionResponse response) {
            messages.add(response);
            for (SessionAnswer answer : response.getAnswersList()) {
                assertThat(answers.putIfAbsent(answer.getId(), answer)).as("call " + answer.getId() + " answered once").isNull();
            }
        }

        @Override
        public void onError(Throwable t) {
            ended.complete(Status.fromThrowable(t));
        }

        @Override
        public void onCompleted() {
            ended.complete(Status.OK);
        }
    }

    private long lease(long id) {
        return member.blocking(0).leaseGrant(LeaseGrantRequest.newBuilder().setId(id).setClientId("c" + id).setTtlMs(30_000).build()).getId();
    }

    private static SessionCall.Builder lock(long id, String name, long lease, long timeoutMs) {
        return SessionCall.newBuilder().setId(id).setLock(LockRequest.newBuilder().setName(name).setLeaseId(lease).setTimeoutMs(timeoutMs));
    }

    @Test
    void manyCallsInOneMessageAreEachAnsweredByIdAsTheirUnaryCallWouldBe() {
        long a = lease(1);
        Session session = new Session();
        session.send(lock(1, "s/one", a, 0), lock(2, "s/two", a, 0),
                SessionCall.newBuilder().setId(3).setTryLock(TryLockRequest.newBuilder().setName("s/three").setLeaseId(a)),
                lock(4, "", a, 0),
                SessionCall.newBuilder().setId(0).setLock(LockRequest.newBuilder().setName("s/zero").setLeaseId(a)),
                SessionCall.newBuilder().setId(5));

        SessionAnswer one = session.await(1);
        SessionAnswer two = session.await(2);
        assertThat(one.getLock().getAcquired()).isTrue();
        assertThat(two.getLock().getAcquired()).isTrue();
        assertThat(two.getLock().getFencingToken()).isGreaterThan(one.getLock().getFencingToken());
        assertThat(session.await(3).getTryLock().getAcquired()).isTrue();
        assertThat(session.await(4).getError().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT.value());
        assertThat(session.await(4).getError().getMessage()).contains("name");
        assertThat(session.await(0).getError().getMessage()).contains("id");
        assertThat(session.await(5).getError().getMessage()).startsWith("call:");
        int messages = session.messages.size();
        assertThat(messages).as("six answers, fewer messages: those of one log entry travel together").isLessThan(6);

        session.send(SessionCall.newBuilder().setId(6).setUnlock(UnlockRequest.newBuilder().setKey("s/one").setLeaseId(a)
                        .setFencingToken(one.getLock().getFencingToken())),
                SessionCall.newBuilder().setId(7).setUnlock(UnlockRequest.newBuilder().setKey("s/two").setLeaseId(a)
                        .setFencingToken(one.getLock().getFencingToken())));
        assertThat(session.await(6).hasUnlock()).isTrue();
        assertThat(session.await(7).getError().getCode()).as("a stale token").isEqualTo(Status.Code.FAILED_PRECONDITION.value());
        assertThat(member.blocking(0).describe(DescribeRequest.newBuilder().setName("s/one").build()).getLock().getHeld()).isFalse();
        assertThat(member.blocking(0).describe(DescribeRequest.newBuilder().setName("s/two").build()).getLock().getHeld()).isTrue();
    }

    @Test
    void aWaitIsAnsweredOnTheStreamWhenTheHolderReleases() {
        long holder = lease(1);
        long waiter = lease(2);
        Session first = new Session();
        Session second = new Session();
        first.send(lock(1, "s/handoff", holder, -1));
        long token = first.await(1).getLock().getFencingToken();
        second.send(lock(1, "s/handoff", waiter, -1));
        Await.until("the second lease waits", Duration.ofSeconds(10),
                () -> member.blocking(0).describe(DescribeRequest.newBuilder().setName("s/handoff").build()).getLock().getWaitersCount() == 1);
        assertThat(second.answers).isEmpty();

        first.send(SessionCall.newBuilder().setId(2).setUnlock(UnlockRequest.newBuilder().setKey("s/handoff").setLeaseId(holder)
                .setFencingToken(token)));
        SessionAnswer granted = second.await(1);
        assertThat(granted.getLock().getAcquired()).isTrue();
        assertThat(granted.getLock().getFencingToken()).isGreaterThan(token);
        assertThat(first.await(2).getUnlock().getNextFencingToken()).isEqualTo(granted.getLock().getFencingToken());
    }

    @Test
    void anAbandonedOrBrokenWaitLeavesTheLeaseQueuedUntilItIsCancelled() throws Exception {
        long holder = lease(1);
        long abandoned = lease(2);
        long broken = lease(3);
        Session session = new Session();
        session.send(lock(1, "s/queue", holder, -1));
        session.await(1);
        session.send(lock(2, "s/queue", abandoned, -1), SessionCall.newBuilder().setAbandon(2));
        Session other = new Session();
        other.send(lock(1, "s/queue", broken, -1));
        Await.until("both leases wait", Duration.ofSeconds(10),
                () -> member.blocking(0).describe(DescribeRequest.newBuilder().setName("s/queue").build()).getLock().getWaitersCount() == 2);
        other.requests.onError(Status.CANCELLED.asRuntimeException());

        session.send(SessionCall.newBuilder().setId(3).setLockCancel(LockCancelRequest.newBuilder().setName("s/queue").setLeaseId(abandoned)));
        assertThat(session.await(3).getLockCancel().getAcquired()).isFalse();
        assertThat(session.answers).as("the abandoned wait is not answered").doesNotContainKey(2L);
        List<io.tenure.proto.v1.Waiter> waiters = member.blocking(0).describe(DescribeRequest.newBuilder().setName("s/queue").build())
                .getLock().getWaitersList();
        assertThat(waiters).singleElement().satisfies(w -> assertThat(w.getLeaseId()).isEqualTo(broken));
        session.requests.onCompleted();
        assertThat(session.ended.get(10, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.OK);
    }

    private static SessionCall.Builder call(long id) {
        return SessionCall.newBuilder().setId(id);
    }

    private SemaphoreServiceGrpc.SemaphoreServiceBlockingStub semaphores() {
        return SemaphoreServiceGrpc.newBlockingStub(member.channel(0));
    }

    private ElectionServiceGrpc.ElectionServiceBlockingStub elections() {
        return ElectionServiceGrpc.newBlockingStub(member.channel(0));
    }

    private BarrierServiceGrpc.BarrierServiceBlockingStub barriers() {
        return BarrierServiceGrpc.newBlockingStub(member.channel(0));
    }

    private LatchServiceGrpc.LatchServiceBlockingStub latches() {
        return LatchServiceGrpc.newBlockingStub(member.channel(0));
    }

    @Test
    void aCallOfEveryKindIsAnsweredOnTheStreamWithWhatItsUnaryCallGives() {
        Session session = new Session();
        session.send(call(1).setLeaseGrant(LeaseGrantRequest.newBuilder().setId(41).setClientId("kinds").setTtlMs(30_000)));
        long lease = session.await(1).getLeaseGrant().getId();
        assertThat(lease).isEqualTo(41);

        session.send(call(2).setSemaphoreAcquire(SemaphoreAcquireRequest.newBuilder().setName("k/pool").setLeaseId(lease).setLimit(2)
                        .setPermits(1)),
                call(3).setCampaign(CampaignRequest.newBuilder().setName("k/election").setLeaseId(lease)
                        .setValue(ByteString.copyFromUtf8("here"))),
                call(4).setBarrierAwait(BarrierAwaitRequest.newBuilder().setName("k/barrier").setLeaseId(lease).setParties(1)),
                call(5).setDoubleBarrierEnter(DoubleBarrierEnterRequest.newBuilder().setName("k/double").setLeaseId(lease).setParties(1)),
                call(6).setLatchSetCount(LatchSetCountRequest.newBuilder().setName("k/latch").setCount(1).setRequestId(7)));
        SessionAnswer permit = session.await(2);
        assertThat(permit.getSemaphoreAcquire().getAcquired()).isTrue();
        assertThat(permit.getSemaphoreAcquire().getHeader().getRevision()).isPositive();
        SessionAnswer elected = session.await(3);
        assertThat(elected.getCampaign().getElected()).isTrue();
        assertThat(session.await(4).getBarrierAwait().getReleased()).as("the only party").isTrue();
        assertThat(session.await(5).getDoubleBarrierEnter().getEntered()).isTrue();
        assertThat(session.await(6).getLatchSetCount().getSet()).isTrue();

        long token = elected.getCampaign().getFencingToken();
        session.send(call(7).setProclaim(ProclaimRequest.newBuilder().setName("k/election").setLeaseId(lease).setFencingToken(token)
                        .setValue(ByteString.copyFromUtf8("still here"))),
                call(8).setLeader(LeaderRequest.newBuilder().setName("k/election")),
                call(9).setLatchCountDown(LatchCountDownRequest.newBuilder().setName("k/latch").setRequestId(8)),
                call(10).setDoubleBarrierLeave(DoubleBarrierLeaveRequest.newBuilder().setName("k/double").setLeaseId(lease)),
                call(11).setSemaphoreRelease(SemaphoreReleaseRequest.newBuilder().setName("k/pool").setLeaseId(lease)
                        .setFencingToken(permit.getSemaphoreAcquire().getFencingToken())));
        assertThat(session.await(7).getProclaim().getRevision()).isGreaterThan(token);
        assertThat(session.await(8).getLeader().getLeaseId()).isEqualTo(lease);
        assertThat(session.await(9).getLatchCountDown().getCount()).isZero();
        assertThat(session.await(10).getDoubleBarrierLeave().getLeft()).isTrue();
        assertThat(session.await(11).hasSemaphoreRelease()).isTrue();

        session.send(call(12).setLatchAwait(LatchAwaitRequest.newBuilder().setName("k/latch").setLeaseId(lease)),
                call(13).setResign(ResignRequest.newBuilder().setName("k/election").setLeaseId(lease).setFencingToken(token)),
                call(14).setBarrierLeave(BarrierLeaveRequest.newBuilder().setName("k/barrier").setLeaseId(lease)));
        assertThat(session.await(12).getLatchAwait().getOpen()).as("the count is zero").isTrue();
        assertThat(session.await(13).hasResign()).isTrue();
        assertThat(session.await(14).hasBarrierLeave()).isTrue();
        assertThat(elections().leader(LeaderRequest.newBuilder().setName("k/election").build()).getHasLeader()).isFalse();

        session.send(call(15).setLeaseRevoke(LeaseRevokeRequest.newBuilder().setId(lease)));
        assertThat(session.await(15).hasLeaseRevoke()).isTrue();
        assertThat(member.blocking(0).leaseTimeToLive(LeaseTimeToLiveRequest.newBuilder().setId(lease).build()).getTtl()).isEqualTo(-1);
    }

    @Test
    void counterAndKeyValueCallsAreAnsweredOnTheStreamWithWhatTheirUnaryCallsGive() {
        Session session = new Session();
        session.send(call(1).setCounterAdd(CounterAddRequest.newBuilder().setName("c/seq").setDelta(5).setRequestId(71)),
                call(2).setKvPut(KvPutRequest.newBuilder().setKey("c/flag").setValue(ByteString.copyFromUtf8("on")).setRequestId(72)));
        assertThat(session.await(1).getCounterAdd().getValue()).isEqualTo(5);
        long put = session.await(2).getKvPut().getRevision();
        assertThat(put).isPositive();

        session.send(call(3).setCounterAdd(CounterAddRequest.newBuilder().setName("c/seq").setDelta(5).setRequestId(71)),
                call(4).setCounterGet(CounterGetRequest.newBuilder().setName("c/seq")),
                call(5).setKvGet(KvGetRequest.newBuilder().setKey("c/flag")),
                call(6).setCounterCompareAndSet(CounterCompareAndSetRequest.newBuilder().setName("c/seq").setExpected(5).setValue(9)),
                call(7).setKvCompareAndSet(KvCompareAndSetRequest.newBuilder().setKey("c/flag").setCompare(KvCompare.KV_COMPARE_MOD_REVISION)
                        .setExpectedModRevision(put).setValue(ByteString.copyFromUtf8("off"))));
        assertThat(session.await(3).getCounterAdd().getValue()).as("a retry of request 71 is answered as the first copy").isEqualTo(5);
        assertThat(session.await(4).getCounterGet().getValue()).isEqualTo(5);
        KvGetResponse read = session.await(5).getKvGet();
        assertThat(read.getExists()).isTrue();
        assertThat(read.getEntry().getValue().toStringUtf8()).isEqualTo("on");
        assertThat(read.getEntry().getModRevision()).isEqualTo(put);
        assertThat(session.await(6).getCounterCompareAndSet().getSwapped()).isTrue();
        assertThat(session.await(7).getKvCompareAndSet().getSwapped()).isTrue();

        session.send(call(8).setCounterSet(CounterSetRequest.newBuilder().setName("c/seq").setValue(-2)),
                call(9).setKvTxn(KvTxnRequest.newBuilder()
                        .addCompare(KvTxnCompare.newBuilder().setKind(KvTxnKind.KV_TXN_KIND_KV).setKey("c/flag")
                                .setTarget(KvTxnTarget.KV_TXN_TARGET_VALUE).setRelation(KvTxnRelation.KV_TXN_RELATION_EQUAL)
                                .setValue(ByteString.copyFromUtf8("off")))
                        .addSuccess(KvTxnOp.newBuilder().setPut(KvTxnPut.newBuilder().setKey("c/other")
                                .setValue(ByteString.copyFromUtf8("x"))))),
                call(10).setKvDelete(KvDeleteRequest.newBuilder().setKey("c/flag")));
        assertThat(session.await(8).getCounterSet().getPrevious()).isEqualTo(9);
        assertThat(session.await(9).getKvTxn().getSucceeded()).isTrue();
        assertThat(session.await(10).getKvDelete().getDeleted()).isTrue();
        KvServiceGrpc.KvServiceBlockingStub kv = KvServiceGrpc.newBlockingStub(member.channel(0));
        assertThat(kv.get(KvGetRequest.newBuilder().setKey("c/flag").build()).getExists()).isFalse();
        assertThat(kv.get(KvGetRequest.newBuilder().setKey("c/other").build()).getEntry().getValue().toStringUtf8()).isEqualTo("x");
        assertThat(CounterServiceGrpc.newBlockingStub(member.channel(0)).get(CounterGetRequest.newBuilder().setName("c/seq").build())
                .getValue()).isEqualTo(-2);

        // Bad input: the status of the unary call, naming the field; nothing stored changes.
        KvPutRequest tooBig = KvPutRequest.newBuilder().setKey("c/big").setValue(ByteString.copyFrom(new byte[70_000])).build();
        KvDeleteRequest badRevision = KvDeleteRequest.newBuilder().setKey("c/other").setExpectedModRevision(-1).build();
        CounterAddRequest overflow = CounterAddRequest.newBuilder().setName("c/seq").setDelta(Long.MIN_VALUE).build();
        session.send(call(11).setKvPut(tooBig), call(12).setKvDelete(badRevision), call(13).setCounterAdd(overflow));
        List<Runnable> unary = List.of(() -> kv.put(tooBig), () -> kv.delete(badRevision),
                () -> CounterServiceGrpc.newBlockingStub(member.channel(0)).add(overflow));
        List<String> fields = List.of("value", "expected_mod_revision", "64-bit range");
        for (int i = 0; i < unary.size(); i++) {
            SessionAnswer answer = session.await(11 + i);
            Status status = Status.fromThrowable(catchThrowable(unary.get(i)::run));
            assertThat(answer.hasError()).as("call " + (11 + i) + " is refused").isTrue();
            assertThat(answer.getError().getCode()).isEqualTo(status.getCode().value());
            assertThat(answer.getError().getMessage()).isEqualTo(status.getDescription()).containsIgnoringCase(fields.get(i));
        }
        assertThat(kv.get(KvGetRequest.newBuilder().setKey("c/other").build()).getExists()).isTrue();
        assertThat(kv.get(KvGetRequest.newBuilder().setKey("c/big").build()).getExists()).isFalse();
    }

    @Test
    void aWaitOfEveryKindIsAnsweredOnTheStreamWhenTheLogDecides() {
        long first = lease(1);
        long second = lease(2);
        Session holder = new Session();
        Session waiter = new Session();
        holder.send(call(1).setSemaphoreAcquire(SemaphoreAcquireRequest.newBuilder().setName("w/pool").setLeaseId(first).setLimit(1)
                        .setPermits(1)),
                call(2).setCampaign(CampaignRequest.newBuilder().setName("w/election").setLeaseId(first)),
                call(3).setLatchSetCount(LatchSetCountRequest.newBuilder().setName("w/latch").setCount(1).setRequestId(1)));
        long permit = holder.await(1).getSemaphoreAcquire().getFencingToken();
        long leadership = holder.await(2).getCampaign().getFencingToken();
        holder.await(3);

        waiter.send(call(1).setSemaphoreAcquire(SemaphoreAcquireRequest.newBuilder().setName("w/pool").setLeaseId(second).setLimit(1)
                        .setPermits(1).setTimeoutMs(-1)),
                call(2).setCampaign(CampaignRequest.newBuilder().setName("w/election").setLeaseId(second).setTimeoutMs(-1)),
                call(3).setBarrierAwait(BarrierAwaitRequest.newBuilder().setName("w/barrier").setLeaseId(second).setParties(2)
                        .setTimeoutMs(-1)),
                call(4).setDoubleBarrierEnter(DoubleBarrierEnterRequest.newBuilder().setName("w/double").setLeaseId(second).setParties(2)
                        .setTimeoutMs(-1)),
                call(5).setLatchAwait(LatchAwaitRequest.newBuilder().setName("w/latch").setLeaseId(second).setTimeoutMs(-1)));
        Await.until("every wait is queued", Duration.ofSeconds(10), () -> waitersOfEveryKind("w/", second));
        assertThat(waiter.answers).as("nothing answered while they wait").isEmpty();

        holder.send(call(4).setSemaphoreRelease(SemaphoreReleaseRequest.newBuilder().setName("w/pool").setLeaseId(first)
                        .setFencingToken(permit)),
                call(5).setResign(ResignRequest.newBuilder().setName("w/election").setLeaseId(first).setFencingToken(leadership)),
                call(6).setBarrierAwait(BarrierAwaitRequest.newBuilder().setName("w/barrier").setLeaseId(first).setParties(2)),
                call(7).setDoubleBarrierEnter(DoubleBarrierEnterRequest.newBuilder().setName("w/double").setLeaseId(first).setParties(2)),
                call(8).setLatchCountDown(LatchCountDownRequest.newBuilder().setName("w/latch").setRequestId(2)));
        assertThat(waiter.await(1).getSemaphoreAcquire().getFencingToken()).isGreaterThan(permit);
        assertThat(waiter.await(2).getCampaign().getElected()).isTrue();
        assertThat(waiter.await(3).getBarrierAwait().getReleased()).isTrue();
        assertThat(waiter.await(4).getDoubleBarrierEnter().getEntered()).isTrue();
        assertThat(waiter.await(5).getLatchAwait().getOpen()).isTrue();
        assertThat(holder.await(4).getSemaphoreRelease().getHandedTo()).isEqualTo(1);
        assertThat(holder.await(6).getBarrierAwait().getRevision()).isEqualTo(waiter.await(3).getBarrierAwait().getRevision());
    }

    /** Whether lease {@code lease} waits for the semaphore, election, barrier, double barrier and latch named {@code prefix}... */
    private boolean waitersOfEveryKind(String prefix, long lease) {
        return semaphores().describe(SemaphoreDescribeRequest.newBuilder().setName(prefix + "pool").build()).getSemaphore().getWaitersList()
                .stream().anyMatch(w -> w.getLeaseId() == lease)
                && elections().leader(LeaderRequest.newBuilder().setName(prefix + "election").build()).getCandidatesList().stream()
                .anyMatch(c -> c.getLeaseId() == lease)
                && barriers().describe(BarrierDescribeRequest.newBuilder().setName(prefix + "barrier").build()).getWaitingList().stream()
                .anyMatch(p -> p.getLeaseId() == lease)
                && DoubleBarrierServiceGrpc.newBlockingStub(member.channel(0))
                .describe(DoubleBarrierDescribeRequest.newBuilder().setName(prefix + "double").build()).getEnteringList().stream()
                .anyMatch(p -> p.getLeaseId() == lease)
                && latches().describe(LatchDescribeRequest.newBuilder().setName(prefix + "latch").build()).getWaitingList().stream()
                .anyMatch(w -> w.getLeaseId() == lease);
    }

    @Test
    void anAbandonedWaitOfEveryKindKeepsTheLeasesPlaceAndAGrantAfterItStaysWithTheLease() {
        long first = lease(1);
        long second = lease(2);
        Session holder = new Session();
        holder.send(call(1).setSemaphoreAcquire(SemaphoreAcquireRequest.newBuilder().setName("a/pool").setLeaseId(first).setLimit(1)
                        .setPermits(1)),
                call(2).setCampaign(CampaignRequest.newBuilder().setName("a/election").setLeaseId(first)),
                call(3).setLatchSetCount(LatchSetCountRequest.newBuilder().setName("a/latch").setCount(1).setRequestId(1)));
        long permit = holder.await(1).getSemaphoreAcquire().getFencingToken();
        holder.await(2);
        holder.await(3);

        Session waiter = new Session();
        waiter.send(call(1).setSemaphoreAcquire(SemaphoreAcquireRequest.newBuilder().setName("a/pool").setLeaseId(second).setLimit(1)
                        .setPermits(1).setTimeoutMs(-1)),
                call(2).setCampaign(CampaignRequest.newBuilder().setName("a/election").setLeaseId(second).setTimeoutMs(-1)),
                call(3).setBarrierAwait(BarrierAwaitRequest.newBuilder().setName("a/barrier").setLeaseId(second).setParties(2)
                        .setTimeoutMs(-1)),
                call(4).setDoubleBarrierEnter(DoubleBarrierEnterRequest.newBuilder().setName("a/double").setLeaseId(second).setParties(2)
                        .setTimeoutMs(-1)),
                call(5).setLatchAwait(LatchAwaitRequest.newBuilder().setName("a/latch").setLeaseId(second).setTimeoutMs(-1)));
        Await.until("every wait is queued", Duration.ofSeconds(10), () -> waitersOfEveryKind("a/", second));
        waiter.send(call(0).setAbandon(1), call(0).setAbandon(2), call(0).setAbandon(3));
        waiter.requests.onError(Status.CANCELLED.asRuntimeException()); // and the double barrier's and the latch's with the stream

        // Forgotten here, not withdrawn: every lease keeps its place, as after a unary call's cancel.
        holder.send(call(4).setLeaseGrant(LeaseGrantRequest.newBuilder().setId(1).setClientId("c1").setTtlMs(30_000)));
        holder.await(4); // a round trip after the abandons
        assertThat(waitersOfEveryKind("a/", second)).isTrue();
        assertThat(waiter.answers).isEmpty();

        holder.send(call(5).setSemaphoreRelease(SemaphoreReleaseRequest.newBuilder().setName("a/pool").setLeaseId(first)
                .setFencingToken(permit)));
        assertThat(holder.await(5).getSemaphoreRelease().getHandedTo()).as("handed to the lease whose call was abandoned").isEqualTo(1);
        assertThat(semaphores().describe(SemaphoreDescribeRequest.newBuilder().setName("a/pool").build()).getSemaphore().getHoldersList())
                .singleElement().satisfies(h -> assertThat(h.getLeaseId()).isEqualTo(second));

        holder.send(call(6).setCampaignCancel(CampaignCancelRequest.newBuilder().setName("a/election").setLeaseId(second)),
                call(7).setLatchCancel(LatchCancelRequest.newBuilder().setName("a/latch").setLeaseId(second)),
                call(8).setDoubleBarrierCancel(DoubleBarrierCancelRequest.newBuilder().setName("a/double").setLeaseId(second)),
                call(9).setBarrierLeave(BarrierLeaveRequest.newBuilder().setName("a/barrier").setLeaseId(second)));
        assertThat(holder.await(6).getCampaignCancel().getElected()).isFalse();
        assertThat(holder.await(7).getLatchCancel().getOpen()).isFalse();
        assertThat(holder.await(8).getDoubleBarrierCancel().getEntered()).isFalse();
        assertThat(holder.await(9).getBarrierLeave().getReleased()).isFalse();
        assertThat(waitersOfEveryKind("a/", second)).isFalse();
        assertThat(waiter.answers).as("nothing answered on the ended stream").isEmpty();
    }

    @Test
    void badInputOfEveryKindIsAnsweredWithTheStatusOfItsUnaryCallNamingTheField() {
        long lease = lease(1);
        List<SessionCall.Builder> bad = List.of(
                call(1).setSemaphoreAcquire(SemaphoreAcquireRequest.newBuilder().setName("b/pool").setLeaseId(lease).setLimit(0).setPermits(1)),
                call(2).setCampaign(CampaignRequest.newBuilder().setName("").setLeaseId(lease)),
                call(3).setBarrierAwait(BarrierAwaitRequest.newBuilder().setName("b/barrier").setLeaseId(lease).setParties(0)),
                call(4).setDoubleBarrierEnter(DoubleBarrierEnterRequest.newBuilder().setName("b/double").setLeaseId(lease).setParties(-1)),
                call(5).setLatchSetCount(LatchSetCountRequest.newBuilder().setName("b/latch").setCount(-3)),
                call(6).setLatchAwait(LatchAwaitRequest.newBuilder().setName("b/latch").setLeaseId(lease).setTimeoutMs(-7)),
                call(7).setLeaseGrant(LeaseGrantRequest.newBuilder().setClientId("b")),
                call(8).setSemaphoreRelease(SemaphoreReleaseRequest.newBuilder().setName("b/pool").setLeaseId(lease).setFencingToken(5)),
                call(9).setLeaseRevoke(LeaseRevokeRequest.newBuilder().setId(987_654_321)));
        List<Runnable> unary = List.of(
                () -> semaphores().acquire(bad.get(0).getSemaphoreAcquire()),
                () -> elections().campaign(bad.get(1).getCampaign()),
                () -> barriers().await(bad.get(2).getBarrierAwait()),
                () -> DoubleBarrierServiceGrpc.newBlockingStub(member.channel(0)).enter(bad.get(3).getDoubleBarrierEnter()),
                () -> latches().trySetCount(bad.get(4).getLatchSetCount()),
                () -> latches().await(bad.get(5).getLatchAwait()),
                () -> member.blocking(0).leaseGrant(bad.get(6).getLeaseGrant()),
                () -> semaphores().release(bad.get(7).getSemaphoreRelease()),
                () -> member.blocking(0).leaseRevoke(bad.get(8).getLeaseRevoke()));
        // What each message names: the field at fault, or for a refused release the semaphore it is not held in.
        List<String> fields = List.of("limit", "name", "parties", "parties", "count", "timeout_ms", "ttl", "b/pool", "lease");
        Session session = new Session();
        session.send(bad.toArray(SessionCall.Builder[]::new));
        for (int i = 0; i < bad.size(); i++) {
            SessionAnswer answer = session.await(i + 1);
            Status status = Status.fromThrowable(catchThrowable(unary.get(i)::run));
            assertThat(answer.hasError()).as(bad.get(i).getCallCase() + " is refused").isTrue();
            assertThat(answer.getError().getCode()).as(bad.get(i).getCallCase() + "'s code").isEqualTo(status.getCode().value());
            assertThat(answer.getError().getMessage()).as(bad.get(i).getCallCase() + "'s message").isEqualTo(status.getDescription())
                    .containsIgnoringCase(fields.get(i));
        }

        session.send(call(0).setSemaphoreAcquire(SemaphoreAcquireRequest.newBuilder().setName("b/pool").setLeaseId(lease).setLimit(1)
                        .setPermits(1)),
                call(10).setUnknownFields(UnknownFieldSet.newBuilder()
                        .addField(999, UnknownFieldSet.Field.newBuilder().addVarint(1).build()).build()));
        assertThat(session.await(0).getError().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT.value());
        assertThat(session.await(0).getError().getMessage()).startsWith("id:");
        assertThat(session.await(10).getError().getCode()).as("a kind of call this member does not know: the client sends it unary")
                .isEqualTo(Status.Code.UNIMPLEMENTED.value());
        assertThat(semaphores().describe(SemaphoreDescribeRequest.newBuilder().setName("b/pool").build()).getSemaphore().getExists())
                .as("nothing stored").isFalse();
    }
}
