package io.tenure.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenure.proto.v1.BarrierServiceGrpc;
import io.tenure.proto.v1.CounterServiceGrpc;
import io.tenure.proto.v1.DoubleBarrierServiceGrpc;
import io.tenure.proto.v1.ElectionServiceGrpc;
import io.tenure.proto.v1.KvServiceGrpc;
import io.tenure.proto.v1.LatchServiceGrpc;
import io.tenure.proto.v1.LockRequest;
import io.tenure.proto.v1.LockResponse;
import io.tenure.proto.v1.LockServiceGrpc;
import io.tenure.proto.v1.SemaphoreAcquireRequest;
import io.tenure.proto.v1.SemaphoreAcquireResponse;
import io.tenure.proto.v1.SemaphoreServiceGrpc;
import io.tenure.proto.v1.SessionAnswer;
import io.tenure.proto.v1.SessionCall;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The calls in the client's session stream: one stream per member for all of them (lease grants
 * and revokes with the lock calls), the deadline of a call kept by the client (which tells the
 * member to forget it), a broken stream failing its calls over to the next member, unary calls to
 * a member without the stream and for a kind of call a member does not carry, and a route for
 * every kind's calls.
 */
class SessionStreamsTest {
    private static final long TOKEN = (9L << 16) + 1;

    private final InProcessMembers members = new InProcessMembers(2);
    private final ScriptedLockService first = members.service(0);
    private final ScriptedLockService second = members.service(1);
    private final TenureClient client = members.client();
    private final Lease lease = client.grantLease(Duration.ofSeconds(9), "worker-1");

    @AfterEach
    void tearDown() {
        members.close();
    }

    private static LockResponse grant(LockRequest request) {
        return LockResponse.newBuilder().setKey(request.getName()).setAcquired(true).setFencingToken(TOKEN).build();
    }

    @Test
    void everyLockCallOfTheClientTravelsInOneStreamPerMember() {
        first.lockAnswer = SessionStreamsTest::grant;
        for (int i = 0; i < 5; i++) {
            LockHandle held = client.acquire("s/" + i, lease, Duration.ofSeconds(1), null);
            held.release();
        }
        assertThat(client.tryAcquire("s/try", lease, null)).isNotNull();

        assertThat(first.sessionsOpened).hasValue(1);
        assertThat(first.sessionCalls).as("the lease grant, 5 acquires, 5 releases, 1 try").hasValue(12);
        assertThat(first.grants).as("the lease grant travelled in the stream too").hasSize(1);
        assertThat(first.locks).hasSize(5);
        assertThat(first.unlocks).hasSize(5);
        assertThat(second.sessionsOpened).hasValue(0);
    }

    @Test
    void aCallPastItsDeadlineEndsAndTheMemberIsToldToForgetIt() throws Exception {
        first.lockAnswer = request -> null; // parked: never answered
        CompletableFuture<LockHandle> waiting = client.acquireAsync("s/parked", lease, Duration.ofSeconds(1), null);
        assertThat(first.parkedLockCount()).isEqualTo(1);

        // The wait may take its timeout plus the request timeout (10 s) to be answered.
        members.time.advance(Duration.ofSeconds(12));

        assertThat(first.abandons).as("the member was told to forget the call").hasSize(1);
        first.parkedLockCancelled.get(5, TimeUnit.SECONDS);
        assertThat(waiting).isCompletedExceptionally();
        assertThatThrownBy(waiting::get).isInstanceOf(ExecutionException.class);
    }

    @Test
    void aStreamThatBreaksFailsItsCallsOverToTheNextMember() throws Exception {
        first.lockAnswer = request -> null;
        second.lockAnswer = SessionStreamsTest::grant;
        CompletableFuture<LockHandle> waiting = client.acquireAsync("s/failover", lease, Duration.ofSeconds(30), null);
        assertThat(first.parkedLockCount()).isEqualTo(1);

        members.kill(0);

        assertThat(waiting.get(5, TimeUnit.SECONDS).fencingToken()).isEqualTo(TOKEN);
        assertThat(second.sessionsOpened).hasValue(1);
        assertThat(second.locks.poll().getLeaseId()).as("the same wait, asked again").isEqualTo(lease.id());
    }

    @Test
    void aMemberWithoutTheStreamIsSpokenToWithUnaryCalls() {
        first.sessions = false;
        first.lockAnswer = SessionStreamsTest::grant;
        TenureClient older = members.client();
        Lease own = older.grantLease(Duration.ofSeconds(9), "worker-2");
        for (int i = 0; i < 3; i++) {
            older.acquire("u/" + i, own, Duration.ofSeconds(1), null).release();
        }
        assertThat(first.sessionsOpened).as("only the first client's, opened before").hasValue(1);
        assertThat(first.sessionCalls).as("the first client's lease grant").hasValue(1);
        assertThat(first.locks).as("answered as unary calls").hasSize(3);
        assertThat(first.unlocks).hasSize(3);
    }

    @Test
    void aKindOfCallTheMemberDoesNotCarryGoesUnaryAndTheOthersStayInTheStream() {
        first.notCarried.add(SessionCall.CallCase.LEASE_REVOKE);
        first.lockAnswer = SessionStreamsTest::grant;
        Lease own = client.grantLease(Duration.ofSeconds(9), "worker-2");
        client.acquire("k/held", own, Duration.ofSeconds(1), null).release();
        own.revoke();
        client.grantLease(Duration.ofSeconds(9), "worker-3").revoke();

        assertThat(first.revokes).as("both revokes answered, as unary calls").hasSize(2);
        assertThat(first.sessionCalls).as("3 grants, an acquire, a release, and the one revoke refused there").hasValue(6);
        assertThat(first.sessionsOpened).hasValue(1);
    }

    @Test
    void aCallOfEveryKindIsSetOnASessionCallAndReadFromTheAnswerOfTheSameNumber() {
        for (var method : List.of(LockServiceGrpc.getLockMethod(), LockServiceGrpc.getLeaseGrantMethod(),
                SemaphoreServiceGrpc.getAcquireMethod(), ElectionServiceGrpc.getCampaignMethod(), BarrierServiceGrpc.getAwaitMethod(),
                DoubleBarrierServiceGrpc.getLeaveMethod(), LatchServiceGrpc.getCountDownMethod(), CounterServiceGrpc.getAddMethod(),
                CounterServiceGrpc.getGetMethod(), KvServiceGrpc.getPutMethod(), KvServiceGrpc.getGetMethod(), KvServiceGrpc.getTxnMethod())) {
            assertThat(SessionStreams.route(method)).as(method.getFullMethodName()).isNotNull();
        }
        SessionCall call = SessionStreams.route(SemaphoreServiceGrpc.getAcquireMethod())
                .callOf(SemaphoreAcquireRequest.newBuilder().setName("pool").setLimit(3).setPermits(1).build()).build();
        assertThat(call.getSemaphoreAcquire().getName()).isEqualTo("pool");
        SessionAnswer answer = SessionAnswer.newBuilder()
                .setSemaphoreAcquire(SemaphoreAcquireResponse.newBuilder().setName("pool").setAcquired(true)).build();
        assertThat(answer.getAnswerCase().getNumber()).isEqualTo(call.getCallCase().getNumber());
        assertThat(SessionStreams.route(SemaphoreServiceGrpc.getAcquireMethod()).answer().apply(answer).getAcquired()).isTrue();
        for (SessionCall.CallCase kind : SessionCall.CallCase.values()) {
            if (kind != SessionCall.CallCase.CALL_NOT_SET && kind != SessionCall.CallCase.ABANDON) {
                assertThat(SessionAnswer.AnswerCase.forNumber(kind.getNumber())).as(kind + "'s answer").isNotNull();
            }
        }
        assertThat(SessionStreams.route(SemaphoreServiceGrpc.getDescribeMethod())).as("descriptions stay unary").isNull();
        assertThat(SessionStreams.route(KvServiceGrpc.getListMethod())).as("listings stay unary").isNull();
        assertThat(SessionStreams.route(LockServiceGrpc.getLeaseKeepAliveMethod())).as("keep-alives have their own stream").isNull();
    }

    @Test
    void aClientMadeWithoutSessionsUsesUnaryCalls() {
        TenureClient unary = TenureClient.builder().endpoints(java.util.List.of(members.endpoint(0)))
                .clock(members.time).scheduler(members.time).channelFactory(InProcessMembers::channel)
                .sessionStream(false).build();
        try {
            first.lockAnswer = SessionStreamsTest::grant;
            Lease own = unary.grantLease(Duration.ofSeconds(9), "unary");
            unary.acquire("u/plain", own, Duration.ofSeconds(1), null).release();
            assertThat(first.sessionsOpened).as("only the other client's, for its lease").hasValue(1);
            assertThat(first.sessionCalls).as("the other client's lease grant").hasValue(1);
            assertThat(first.grants).hasSize(2);
            assertThat(first.locks).hasSize(1);
        } finally {
            unary.close();
        }
    }
}
