package io.tenure.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.Status;
import io.tenure.proto.v1.LockRequest;
import io.tenure.proto.v1.LockResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A lock wait survives the death of the member serving it (issue 3): the client re-issues the
 * same Lock, keyed by (name, lease), on another member with what remains of the timeout, so the
 * server keeps the waiter's place. Two scripted members on fake time: n1 takes the wait and
 * fails mid-wait, n2 grants.
 */
class LockFailoverTest {
    private static final Duration TTL = Duration.ofSeconds(9);
    private static final long TOKEN_FROM_N2 = (77L << 16) + 1;
    private static final byte[] METADATA = "batch 7".getBytes(StandardCharsets.UTF_8);

    private final InProcessMembers members = new InProcessMembers(2);
    private final ScriptedLockService first = members.service(0);
    private final ScriptedLockService second = members.service(1);
    private final FakeTime time = members.time;
    private final TenureClient client = members.client();
    private final Lease lease = client.grantLease(TTL, "worker-1");

    @AfterEach
    void tearDown() {
        members.close();
    }

    private static LockResponse grant(LockRequest request) {
        return LockResponse.newBuilder().setKey(request.getName()).setAcquired(true).setFencingToken(TOKEN_FROM_N2).build();
    }

    private static RuntimeException unavailable(String why) {
        return Status.UNAVAILABLE.withDescription(why).asRuntimeException();
    }

    @Test
    void aWaitWhoseMemberStopsServingIsReissuedOnTheNextMemberWithTheRemainingTimeout() throws Exception {
        first.lockAnswer = request -> null;                 // n1 queues the waiter
        second.lockAnswer = LockFailoverTest::grant;         // n2 finds it granted (same queue, replicated)

        CompletableFuture<LockHandle> waiting = client.acquireAsync("invoices", lease, Duration.ofSeconds(30), METADATA);
        LockRequest original = first.locks.poll(5, TimeUnit.SECONDS);
        time.advance(Duration.ofMillis(4250));
        assertThat(waiting).isNotDone();

        first.failParkedLocks(Status.UNAVAILABLE.withDescription("member n1 is shutting down"));

        LockRequest retried = second.locks.poll(5, TimeUnit.SECONDS);
        assertThat(retried).isNotNull();
        assertThat(original.getTimeoutMs()).isEqualTo(30_000);
        // The same waiter: same lock, same lease, same metadata; only the time left differs.
        assertThat(retried.getName()).isEqualTo(original.getName()).isEqualTo("invoices");
        assertThat(retried.getLeaseId()).isEqualTo(original.getLeaseId()).isEqualTo(lease.id());
        assertThat(retried.getMetadata()).isEqualTo(original.getMetadata());
        assertThat(retried.getTimeoutMs()).isEqualTo(30_000 - 4250);
        assertThat(retried.getRequestId()).as("one acquire, one request id, so its late copies can be told apart")
                .isNotZero().isEqualTo(original.getRequestId());
        // The wait ended with n2's grant, for the lease it began with: no second lease was granted.
        LockHandle handle = waiting.get(5, TimeUnit.SECONDS);
        assertThat(handle.fencingToken()).isEqualTo(TOKEN_FROM_N2);
        assertThat(handle.lease()).isSameAs(lease);
        assertThat(first.grants.size() + second.grants.size()).isEqualTo(1);
        assertThat(first.locks).isEmpty();
        assertThat(second.locks).isEmpty();
    }

    @Test
    void aWaitWhoseMemberDiesIsReissuedOnTheNextMember() throws Exception {
        first.lockAnswer = request -> null;
        second.lockAnswer = LockFailoverTest::grant;
        CompletableFuture<LockHandle> waiting = client.acquireAsync("invoices", lease, Duration.ofSeconds(30), null);
        time.advance(Duration.ofSeconds(2));

        members.kill(0); // the connection breaks under the parked call
        time.runDueTasks();

        assertThat(waiting.get(5, TimeUnit.SECONDS).fencingToken()).isEqualTo(TOKEN_FROM_N2);
        LockRequest retried = second.locks.poll(5, TimeUnit.SECONDS);
        assertThat(retried.getLeaseId()).isEqualTo(lease.id());
        assertThat(retried.getTimeoutMs()).isEqualTo(28_000);
        // The keep-alive stream moved to n2 as well, and the lease is still trusted.
        assertThat(lease.isValid()).isTrue();
    }

    @Test
    void aWaitWithoutTimeoutStaysWithoutTimeoutWhenReissued() throws Exception {
        first.lockAnswer = request -> null;
        second.lockAnswer = LockFailoverTest::grant;
        CompletableFuture<LockHandle> waiting = client.acquireAsync("invoices", lease, null, null);
        time.advance(Duration.ofSeconds(5));

        first.failParkedLocks(Status.UNAVAILABLE.withDescription("not the leader"));

        assertThat(waiting.get(5, TimeUnit.SECONDS).fencingToken()).isEqualTo(TOKEN_FROM_N2);
        assertThat(first.locks.poll(5, TimeUnit.SECONDS).getTimeoutMs()).isEqualTo(-1);
        assertThat(second.locks.poll(5, TimeUnit.SECONDS).getTimeoutMs()).isEqualTo(-1);
    }

    @Test
    void whileNoMemberServesTheWaitCyclesThroughThemWithBackoffAndTheSameRequest() throws Exception {
        first.lockAnswer = request -> null;
        second.lockAnswer = request -> {
            throw unavailable("no leader");
        };
        CompletableFuture<LockHandle> waiting = client.acquireAsync("invoices", lease, Duration.ofSeconds(60), METADATA);
        time.advance(Duration.ofSeconds(10));
        first.lockAnswer = request -> {
            throw unavailable("no leader");
        };

        first.failParkedLocks(Status.UNAVAILABLE.withDescription("leader lost"));
        time.advance(Duration.ofSeconds(5)); // an election that takes 5 s
        assertThat(waiting).isNotDone();
        second.lockAnswer = LockFailoverTest::grant;
        time.advance(FailoverCall.MAX_BACKOFF.multipliedBy(2)); // n1's turn, then n2's

        assertThat(waiting.get(5, TimeUnit.SECONDS).fencingToken()).isEqualTo(TOKEN_FROM_N2);
        List<LockRequest> sent = new ArrayList<>(first.locks);
        sent.addAll(second.locks);
        // The first retry went out at once, later ones after 50 ms doubling to 1 s (jittered):
        // in 5-7 s at least 8 further attempts, spread over both members.
        assertThat(sent).hasSizeGreaterThanOrEqualTo(9).hasSizeLessThanOrEqualTo(40);
        assertThat(first.locks).hasSizeGreaterThanOrEqualTo(3);
        assertThat(second.locks).hasSizeGreaterThanOrEqualTo(3);
        for (LockRequest request : sent) {
            assertThat(request.getName()).isEqualTo("invoices");
            assertThat(request.getLeaseId()).isEqualTo(lease.id());
            assertThat(request.getMetadata().toStringUtf8()).isEqualTo("batch 7");
            assertThat(request.getTimeoutMs()).isBetween(60_000L - 17_000, 60_000L);
        }
        assertThat(first.grants.size() + second.grants.size()).isEqualTo(1);
    }

    @Test
    void whenTheTimeoutRunsOutWhileRetryingTheRetriesAskWithZeroAndThenGiveUp() throws Exception {
        first.lockAnswer = request -> {
            throw unavailable("no leader");
        };
        second.lockAnswer = request -> {
            throw unavailable("no leader");
        };
        CompletableFuture<LockHandle> waiting = client.acquireAsync("invoices", lease, Duration.ofSeconds(2), null);

        time.advance(Duration.ofSeconds(3));
        assertThat(waiting).isNotDone();
        // Past the timeout a retry asks with 0: a grant the lease already got still comes back.
        List<LockRequest> sent = new ArrayList<>(first.locks);
        sent.addAll(second.locks);
        assertThat(sent).extracting(LockRequest::getTimeoutMs).contains(2000L, 0L);
        assertThat(sent).extracting(LockRequest::getTimeoutMs).allMatch(ms -> ms >= 0 && ms <= 2000);

        // No answer within the request timeout after the wait: the attempt fails, naming why.
        time.advance(TenureClient.DEFAULT_REQUEST_TIMEOUT);
        assertThatThrownBy(() -> waiting.get(5, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .cause().isInstanceOf(UnavailableException.class).hasMessageContaining("no leader");
        int attempts = first.locks.size() + second.locks.size();
        time.advance(Duration.ofSeconds(30));
        assertThat(first.locks.size() + second.locks.size()).isEqualTo(attempts);
    }

    @Test
    void aGrantAnsweredToARetryAfterTheTimeoutRanOutIsTaken() throws Exception {
        first.lockAnswer = request -> null;
        second.lockAnswer = request -> request.getTimeoutMs() == 0 ? grant(request) : null;
        CompletableFuture<LockHandle> waiting = client.acquireAsync("invoices", lease, Duration.ofSeconds(2), null);
        time.advance(Duration.ofSeconds(2));

        // n1 granted at the last moment and died before answering; the retry learns of the grant.
        first.failParkedLocks(Status.UNAVAILABLE.withDescription("connection reset"));

        assertThat(waiting.get(5, TimeUnit.SECONDS).fencingToken()).isEqualTo(TOKEN_FROM_N2);
        assertThat(second.locks.poll(5, TimeUnit.SECONDS).getTimeoutMs()).isZero();
    }

    @Test
    void aLeaseLostWhileRetryingEndsTheWaitWithLeaseLost() throws Exception {
        first.lockAnswer = request -> {
            throw unavailable("no leader");
        };
        second.lockAnswer = request -> {
            throw unavailable("no leader");
        };
        first.keepAlives = ScriptedLockService.KeepAlives.SILENT;
        second.keepAlives = ScriptedLockService.KeepAlives.SILENT;
        CompletableFuture<LockHandle> waiting = client.acquireAsync("invoices", lease, null, null);

        time.advanceTo(Duration.ofNanos(LeaseKeeper.safeWindowNanos(TTL.toNanos())));

        assertThatThrownBy(() -> waiting.get(5, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .cause().isInstanceOfSatisfying(LeaseLostException.class,
                        e -> assertThat(e.loss().reason()).isEqualTo(LeaseLoss.Reason.UNREACHABLE));
        int attempts = first.locks.size() + second.locks.size();
        time.advance(Duration.ofSeconds(30));
        assertThat(first.locks.size() + second.locks.size()).isEqualTo(attempts);
    }

    @Test
    void aLeaseLostWhileWaitingOnTheNextMemberWithdrawsThatWait() throws Exception {
        first.lockAnswer = request -> null;
        second.lockAnswer = request -> null;
        CompletableFuture<LockHandle> waiting = client.acquireAsync("invoices", lease, null, null);
        first.failParkedLocks(Status.UNAVAILABLE.withDescription("member n1 is shutting down"));
        assertThat(second.parkedLockCount()).isEqualTo(1);

        lease.revoke();

        assertThatThrownBy(() -> waiting.get(5, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .cause().isInstanceOfSatisfying(LeaseLostException.class,
                        e -> assertThat(e.loss().reason()).isEqualTo(LeaseLoss.Reason.REVOKED));
        second.parkedLockCancelled.get(5, TimeUnit.SECONDS);
    }

    @Test
    void aRefusalEndsTheWaitWithoutTryingAnotherMember() {
        first.lockAnswer = request -> null;
        CompletableFuture<LockHandle> waiting = client.acquireAsync("invoices", lease, null, null);

        first.failParkedLocks(Status.NOT_FOUND.withDescription("lease " + lease.id() + " expired"));

        assertThatThrownBy(() -> waiting.get(5, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .cause().isInstanceOf(LeaseNotFoundException.class).hasMessageContaining("expired");
        assertThat(second.locks).isEmpty();
    }

    @Test
    void cancellingAWaitThatIsBackingOffStopsIt() {
        first.lockAnswer = request -> {
            throw unavailable("no leader");
        };
        second.lockAnswer = request -> {
            throw unavailable("no leader");
        };
        CompletableFuture<LockHandle> waiting = client.acquireAsync("invoices", lease, null, null);
        assertThat(first.locks.size() + second.locks.size()).isEqualTo(2);

        waiting.cancel(false);
        time.advance(Duration.ofSeconds(30));

        assertThat(first.locks.size() + second.locks.size()).isEqualTo(2);
        assertThat(lease.isValid()).isTrue();
    }

    @Test
    void aBlockingLockRidesOutTheDeathOfItsMember() throws Exception {
        first.lockAnswer = request -> null;
        second.lockAnswer = request -> {
            throw unavailable("no leader yet");
        };
        // n1 dies 3 s into the wait; n2 has no leader for 2 s, then grants.
        time.schedule(() -> members.kill(0), 3, TimeUnit.SECONDS);
        time.schedule(() -> {
            second.lockAnswer = LockFailoverTest::grant;
        }, 5, TimeUnit.SECONDS);

        LockHandle handle = time.drive(() -> client.acquire("invoices", lease, Duration.ofSeconds(30), null),
                Duration.ofSeconds(30));

        assertThat(handle.fencingToken()).isEqualTo(TOKEN_FROM_N2);
        assertThat(lease.isValid()).isTrue();
        assertThat(second.locks).extracting(LockRequest::getTimeoutMs)
                .allMatch(ms -> ms >= 23_000 && ms <= 27_000);
    }
}
