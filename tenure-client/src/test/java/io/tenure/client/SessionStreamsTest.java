package io.tenure.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenure.proto.v1.LockRequest;
import io.tenure.proto.v1.LockResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The lock calls in the client's session stream: one stream per member for all of them, the
 * deadline of a call kept by the client (which tells the member to forget it), a broken stream
 * failing its calls over to the next member, and unary calls to a member without the stream.
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
        assertThat(first.sessionCalls).as("5 acquires, 5 releases, 1 try").hasValue(11);
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
        for (int i = 0; i < 3; i++) {
            client.acquire("u/" + i, lease, Duration.ofSeconds(1), null).release();
        }
        assertThat(first.sessionsOpened).hasValue(0);
        assertThat(first.locks).as("answered as unary calls").hasSize(3);
        assertThat(first.unlocks).hasSize(3);
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
            assertThat(first.sessionsOpened).hasValue(0);
            assertThat(first.locks).hasSize(1);
        } finally {
            unary.close();
        }
    }
}
