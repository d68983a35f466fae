package io.tenure.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.Status;
import io.tenure.proto.v1.LeaseGrantRequest;
import io.tenure.proto.v1.StatusResponse;
import io.tenure.proto.v1.UnlockRequest;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class FailoverTest {
    private final InProcessMembers members = new InProcessMembers(2);
    private final ScriptedLockService first = members.service(0);
    private final ScriptedLockService second = members.service(1);
    private final TenureClient client = members.client();

    @AfterEach
    void tearDown() {
        members.close();
    }

    @Test
    void anUnavailableMemberPassesTheCallAndThePreferenceToTheNext() {
        first.statusFailure = Status.UNAVAILABLE.withDescription("member n1 is not ready");

        assertThat(client.status().getMemberName()).isEqualTo("n2");
        assertThat(client.status().getMemberName()).isEqualTo("n2");

        assertThat(first.statusCalls).hasValue(1);
        assertThat(second.statusCalls).hasValue(2);
    }

    @Test
    void whileNoMemberServesTheCallCyclesThroughThemWithBackoffUntilTheRequestTimeout() {
        first.statusFailure = Status.UNAVAILABLE.withDescription("no leader");
        second.statusFailure = Status.UNAVAILABLE.withDescription("no leader");

        CompletableFuture<StatusResponse> status = client.statusAsync();
        long[] failedAt = new long[1];
        status.whenComplete((response, failure) -> failedAt[0] = members.time.elapsedNanos());
        // The first pass is immediate: n1, then n2 at once; later attempts wait out a backoff.
        assertThat(first.statusCalls).hasValue(1);
        assertThat(second.statusCalls).hasValue(1);
        assertThat(status).isNotDone();

        // The call gives up once a backoff (at most MAX_BACKOFF, jittered) plus the shortest
        // attempt no longer fits in the request timeout: never before 9.73 s.
        Duration earliestGiveUp = TenureClient.DEFAULT_REQUEST_TIMEOUT.minus(FailoverCall.MAX_BACKOFF).minus(FailoverCall.MIN_ATTEMPT);
        members.time.advance(earliestGiveUp.minusNanos(1));
        assertThat(status).isNotDone();
        // Backoff 50 ms doubling to 250 ms, each between half and all of it: in 9.73 s, 2 at once,
        // then 42 (every wait the longest) to 81 (every wait the shortest).
        assertThat(first.statusCalls.get() + second.statusCalls.get()).isBetween(42, 81);
        // Alternating: neither member was skipped.
        assertThat(Math.abs(first.statusCalls.get() - second.statusCalls.get())).isLessThanOrEqualTo(1);

        // It gives up once the next attempt could not start within the request timeout.
        members.time.advance(FailoverCall.MAX_BACKOFF.plus(FailoverCall.MIN_ATTEMPT));
        assertThatThrownBy(() -> status.get(5, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .cause().isInstanceOf(UnavailableException.class).hasMessageContaining("no leader");
        assertThat(failedAt[0]).isGreaterThanOrEqualTo(earliestGiveUp.toNanos())
                .isLessThan(TenureClient.DEFAULT_REQUEST_TIMEOUT.toNanos());
        int attempts = first.statusCalls.get() + second.statusCalls.get();
        members.time.advance(Duration.ofSeconds(10));
        assertThat(first.statusCalls.get() + second.statusCalls.get()).isEqualTo(attempts);
    }

    @Test
    void theBackoffIsNoneForAFirstFailureThenJitteredFrom50msDoublingTo250ms() {
        assertThat(FailoverCall.backoffNanos(1)).isZero();
        long[] ceilings = {50, 100, 200, 250, 250, 250};
        for (int i = 0; i < ceilings.length; i++) {
            long ceiling = TimeUnit.MILLISECONDS.toNanos(ceilings[i]);
            for (int sample = 0; sample < 100; sample++) {
                assertThat(FailoverCall.backoffNanos(i + 2)).as("failure %d", i + 2).isBetween(ceiling / 2, ceiling);
            }
        }
        assertThat(FailoverCall.backoffNanos(Integer.MAX_VALUE)).isBetween(TimeUnit.MILLISECONDS.toNanos(125),
                TimeUnit.MILLISECONDS.toNanos(250));
    }

    @Test
    void aMemberThatComesBackIsFoundOnALaterPass() throws Exception {
        first.statusFailure = Status.UNAVAILABLE.withDescription("no leader");
        second.statusFailure = Status.UNAVAILABLE.withDescription("no leader");
        CompletableFuture<StatusResponse> status = client.statusAsync();

        members.time.advance(Duration.ofSeconds(3));
        assertThat(status).isNotDone();
        second.statusFailure = null; // a leader was elected
        members.time.advance(FailoverCall.MAX_BACKOFF.multipliedBy(2)); // n1's turn, then n2's

        assertThat(status.get(5, TimeUnit.SECONDS).getMemberName()).isEqualTo("n2");
    }

    @Test
    void cancellingACallThatWaitsOutABackoffStopsItsRetries() {
        first.statusFailure = Status.UNAVAILABLE.withDescription("no leader");
        second.statusFailure = Status.UNAVAILABLE.withDescription("no leader");
        CompletableFuture<StatusResponse> status = client.statusAsync();

        status.cancel(false);
        members.time.advance(Duration.ofSeconds(20));

        assertThat(first.statusCalls.get() + second.statusCalls.get()).isEqualTo(2);
    }

    @Test
    void aGrantRetriedOnAnotherMemberAsksForTheSameLease() throws Exception {
        first.grantFailure = Status.UNAVAILABLE.withDescription("leader changed");

        Lease lease = client.grantLease(Duration.ofSeconds(9), "worker-1");

        LeaseGrantRequest tried = first.grants.poll(5, TimeUnit.SECONDS);
        LeaseGrantRequest granted = second.grants.poll(5, TimeUnit.SECONDS);
        assertThat(granted).isEqualTo(tried);
        assertThat(lease.id()).isEqualTo(tried.getId());
    }

    @Test
    void aReleaseRetriedOnAnotherMemberIsTheSameRelease() throws Exception {
        Lease lease = client.grantLease(Duration.ofSeconds(9), "worker-1");
        LockHandle handle = client.acquire("jobs", lease, null, null);
        first.unlockFailure = Status.UNAVAILABLE.withDescription("shutting down");

        handle.release();

        UnlockRequest tried = first.unlocks.poll(5, TimeUnit.SECONDS);
        assertThat(second.unlocks.poll(5, TimeUnit.SECONDS)).isEqualTo(tried);
        assertThat(tried.getKey()).isEqualTo("jobs");
        assertThat(tried.getLeaseId()).isEqualTo(lease.id());
    }

    @Test
    void aRetriedRevokeOfALeaseTheLostAnswerAlreadyRevokedSucceeds() throws Exception {
        Lease lease = client.grantLease(Duration.ofSeconds(9), "worker-1");
        // n1 revokes the lease, then dies before answering; n2 no longer knows the lease.
        first.revokeAnswerLost = Status.UNAVAILABLE.withDescription("connection reset");

        lease.revoke();

        assertThat(first.revokes).containsExactly(lease.id());
        assertThat(second.revokes).containsExactly(lease.id());
        assertThat(lease.lost().get(5, TimeUnit.SECONDS).reason()).isEqualTo(LeaseLoss.Reason.REVOKED);
    }

    @Test
    void aKeepAliveStreamWhoseMemberDiesMovesToAnotherMemberInsideTheSafeWindow() {
        Duration ttl = Duration.ofSeconds(9);
        Lease lease = client.grantLease(ttl, "worker-1");
        members.time.advance(Duration.ofSeconds(4)); // renewed at 3 s, by n1
        assertThat(first.keepAlivesReceived).hasSize(1);
        long safeBefore = lease.safeUntil();

        members.kill(0);
        members.time.runDueTasks();

        // Reopened on n2 at once, carrying the keep-alive the broken stream could not deliver.
        assertThat(second.streamsOpened).hasValue(1);
        assertThat(second.keepAlivesReceived).hasSize(1);
        assertThat(lease.safeUntil()).isEqualTo(FakeTime.EPOCH + Duration.ofSeconds(4).plus(Duration.ofNanos(LeaseKeeper.safeWindowNanos(ttl.toNanos()))).toNanos())
                .isGreaterThan(safeBefore);
        // Several TTLs later the lease is still kept alive, by n2 alone.
        members.time.advance(ttl.multipliedBy(3));
        assertThat(lease.isValid()).isTrue();
        assertThat(lease.lost()).isNotDone();
        assertThat(second.keepAlivesReceived).hasSize(1 + 9);
        assertThat(first.keepAlivesReceived).hasSize(1);
    }

    @Test
    void otherRefusalsAreNotRetriedElsewhere() {
        first.statusFailure = Status.INVALID_ARGUMENT.withDescription("bad");

        assertThatThrownBy(client::status).isInstanceOf(InvalidArgumentException.class);
        assertThat(second.statusCalls).hasValue(0);
    }

    @Test
    void aBrokenKeepAliveStreamReopensOnTheNextMember() {
        Lease lease = client.grantLease(Duration.ofSeconds(9), "worker-1");

        first.breakStreams(Status.UNAVAILABLE.withDescription("shutting down"));
        members.time.runDueTasks();

        assertThat(second.streamsOpened).hasValue(1);
        assertThat(second.keepAlivesReceived).hasSize(1);
        assertThat(lease.isValid()).isTrue();
    }

    @Test
    void malformedEndpointsAreRefusedUpFront() {
        for (String bad : List.of("localhost", "localhost:", ":7070", "host:port", "host:70000")) {
            assertThatThrownBy(() -> TenureClient.connect(List.of(bad)))
                    .as(bad).isInstanceOf(IllegalArgumentException.class).hasMessageContaining(bad);
        }
        assertThatThrownBy(() -> TenureClient.connect(List.of())).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void wellFormedEndpointsConnectLazily() {
        try (TenureClient lazy = TenureClient.connect(List.of("127.0.0.1:1", "[::1]:7070", "localhost:7070"))) {
            assertThat(lazy).isNotNull();
        }
    }
}
