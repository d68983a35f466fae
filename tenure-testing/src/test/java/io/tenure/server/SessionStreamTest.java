package io.tenure.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.tenure.proto.v1.DescribeRequest;
import io.tenure.proto.v1.LeaseGrantRequest;
import io.tenure.proto.v1.LockCancelRequest;
import io.tenure.proto.v1.LockRequest;
import io.tenure.proto.v1.SessionAnswer;
import io.tenure.proto.v1.SessionCall;
import io.tenure.proto.v1.SessionRequest;
import io.tenure.proto.v1.SessionResponse;
import io.tenure.proto.v1.TryLockRequest;
import io.tenure.proto.v1.UnlockRequest;
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
 * The Session stream on a real member: many calls to a message, each answered once by id with
 * what its unary RPC gives, waits answered when the log decides, abandons and a broken stream
 * forgetting the call but not the lease's place.
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
}
