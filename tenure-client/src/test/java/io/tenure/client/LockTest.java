package io.tenure.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.Status;
import io.tenure.proto.v1.LockCancelRequest;
import io.tenure.proto.v1.LockCancelResponse;
import io.tenure.proto.v1.LockRequest;
import io.tenure.proto.v1.LockResponse;
import io.tenure.proto.v1.TryLockResponse;
import io.tenure.proto.v1.UnlockRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class LockTest {
    private static final Duration TTL = Duration.ofSeconds(9);
    private static final long TOKEN = (42L << 16) + 3;

    private final InProcessMembers members = new InProcessMembers(1);
    private final ScriptedLockService server = members.service(0);
    private final TenureClient client = members.client();
    private final Lease lease = client.grantLease(TTL, "worker-1");

    @AfterEach
    void tearDown() {
        members.close();
    }

    @Test
    void aGrantedLockCarriesKeyFencingTokenAndLease() throws InterruptedException {
        server.lockAnswer = request -> LockResponse.newBuilder()
                .setKey(request.getName()).setAcquired(true).setFencingToken(TOKEN).build();

        LockHandle handle = client.acquire("invoices", lease, Duration.ofMillis(1500), "batch 7".getBytes(StandardCharsets.UTF_8));

        LockRequest sent = server.locks.poll(5, TimeUnit.SECONDS);
        assertThat(sent.getName()).isEqualTo("invoices");
        assertThat(sent.getLeaseId()).isEqualTo(lease.id());
        assertThat(sent.getTimeoutMs()).isEqualTo(1500);
        assertThat(sent.getMetadata().toStringUtf8()).isEqualTo("batch 7");
        assertThat(handle.key()).isEqualTo("invoices");
        assertThat(handle.fencingToken()).isEqualTo(TOKEN);
        assertThat(handle.lease()).isSameAs(lease);
        assertThat(handle.isValid()).isTrue();
    }

    @Test
    void timeoutNullOrNegativeWaitsForeverAndZeroTriesOnce() throws InterruptedException {
        client.acquire("a", lease, null, null);
        client.acquire("a", lease, Duration.ofSeconds(-1), null);
        client.acquire("a", lease, Duration.ZERO, null);
        client.acquire("a", lease, Duration.ofNanos(1), null);

        assertThat(server.locks.poll(5, TimeUnit.SECONDS).getTimeoutMs()).isEqualTo(-1);
        assertThat(server.locks.poll(5, TimeUnit.SECONDS).getTimeoutMs()).isEqualTo(-1);
        assertThat(server.locks.poll(5, TimeUnit.SECONDS).getTimeoutMs()).isZero();
        assertThat(server.locks.poll(5, TimeUnit.SECONDS).getTimeoutMs()).isEqualTo(1);
    }

    @Test
    void aLockNotGrantedInTimeThrowsNamingTheHolder() {
        server.lockAnswer = request -> LockResponse.newBuilder()
                .setKey(request.getName()).setAcquired(false).setHolder("worker-2").setWaiters(3).build();

        assertThatThrownBy(() -> client.acquire("invoices", lease, Duration.ofSeconds(1), null))
                .isInstanceOfSatisfying(LockNotAcquiredException.class, e -> {
                    assertThat(e.key()).isEqualTo("invoices");
                    assertThat(e.holder()).isEqualTo("worker-2");
                    assertThat(e.waiters()).isEqualTo(3);
                    assertThat(e).hasMessageContaining("worker-2");
                });
    }

    @Test
    void releaseSendsOneUnlockWithKeyLeaseAndToken() throws InterruptedException {
        server.lockAnswer = request -> LockResponse.newBuilder()
                .setKey(request.getName()).setAcquired(true).setFencingToken(TOKEN).build();
        LockHandle handle = client.acquire("invoices", lease, null, null);

        handle.release();
        handle.release();
        handle.close();

        UnlockRequest unlock = server.unlocks.poll(5, TimeUnit.SECONDS);
        assertThat(unlock.getKey()).isEqualTo("invoices");
        assertThat(unlock.getLeaseId()).isEqualTo(lease.id());
        assertThat(unlock.getFencingToken()).isEqualTo(TOKEN);
        assertThat(server.unlocks).isEmpty();
        assertThat(handle.isValid()).isFalse();
        assertThat(lease.isValid()).isTrue();
    }

    @Test
    void aReleaseTheServerCallsStaleIsNotAnErrorForTheHandle() {
        LockHandle handle = client.acquire("invoices", lease, null, null);
        server.unlockFailure = Status.FAILED_PRECONDITION.withDescription("lease does not hold 'invoices' at that token");

        handle.release();

        assertThat(handle.isValid()).isFalse();
        assertThat(server.unlocks).hasSize(1);
    }

    @Test
    void aReleaseThatReachedNoMemberWithinTheRequestTimeoutThrowsAndCanBeRetried() {
        LockHandle handle = client.acquire("invoices", lease, null, null);
        server.unlockFailure = Status.UNAVAILABLE.withDescription("no leader");
        long start = members.time.elapsedNanos();

        assertThatThrownBy(() -> members.time.drive(() -> {
            handle.release();
            return null;
        }, Duration.ofMinutes(1))).isInstanceOf(UnavailableException.class).hasMessageContaining("no leader");
        // Retried with backoff for the whole request timeout, not given up after one try. It gives
        // up once a backoff (at most MAX_BACKOFF, jittered) plus the shortest attempt would not fit.
        assertThat(server.unlocks.size()).isGreaterThan(5);
        assertThat(members.time.elapsedNanos() - start)
                .isGreaterThanOrEqualTo(TenureClient.DEFAULT_REQUEST_TIMEOUT
                        .minus(FailoverCall.MAX_BACKOFF).minus(FailoverCall.MIN_ATTEMPT).toNanos())
                .isLessThanOrEqualTo(TenureClient.DEFAULT_REQUEST_TIMEOUT.toNanos());
        assertThat(handle.isValid()).isFalse();

        int tries = server.unlocks.size();
        server.unlockFailure = null;
        handle.release();
        handle.release();
        assertThat(server.unlocks).hasSize(tries + 1);
    }

    @Test
    void tryLockReturnsEmptyWhenAnotherLeaseHoldsTheLock() {
        server.tryLockAnswer = request -> TryLockResponse.newBuilder()
                .setKey(request.getName()).setAcquired(false).setHolder("worker-2").build();

        assertThat(client.tryAcquire("invoices", lease, null)).isEmpty();

        server.tryLockAnswer = request -> TryLockResponse.newBuilder()
                .setKey(request.getName()).setAcquired(true).setFencingToken(TOKEN).build();
        assertThat(client.tryAcquire("invoices", lease, null)).get()
                .satisfies(handle -> assertThat(handle.fencingToken()).isEqualTo(TOKEN));
    }

    @Test
    void serverRefusalsBecomeTypedExceptionsWithTheServersText() {
        server.lockAnswer = request -> {
            throw Status.INVALID_ARGUMENT.withDescription("name is not valid Unicode").asRuntimeException();
        };
        assertThatThrownBy(() -> client.acquire("a", lease, null, null))
                .isInstanceOf(InvalidArgumentException.class).hasMessage("name is not valid Unicode");

        server.lockAnswer = request -> {
            throw Status.NOT_FOUND.withDescription("lease 7 not found").asRuntimeException();
        };
        assertThatThrownBy(() -> client.acquire("a", lease, null, null))
                .isInstanceOf(LeaseNotFoundException.class).hasMessage("lease 7 not found");

        server.lockAnswer = request -> {
            throw Status.PERMISSION_DENIED.withDescription("user 'x' may not").asRuntimeException();
        };
        assertThatThrownBy(() -> client.acquire("a", lease, null, null))
                .isExactlyInstanceOf(PermissionDeniedException.class).hasMessage("user 'x' may not");

        server.lockAnswer = request -> {
            throw Status.UNAUTHENTICATED.withDescription("show a token").asRuntimeException();
        };
        assertThatThrownBy(() -> client.acquire("a", lease, null, null))
                .isExactlyInstanceOf(UnauthenticatedException.class).hasMessage("show a token");

        server.lockAnswer = request -> {
            throw Status.DATA_LOSS.withDescription("no").asRuntimeException();
        };
        assertThatThrownBy(() -> client.acquire("a", lease, null, null))
                .isExactlyInstanceOf(TenureException.class).hasMessageContaining("DATA_LOSS").hasMessageContaining("no");
    }

    @Test
    void aLeaseThatIsNoLongerValidIsRefusedWithoutAskingTheServer() {
        lease.revoke();

        assertThatThrownBy(() -> client.acquire("a", lease, null, null))
                .isInstanceOfSatisfying(LeaseLostException.class,
                        e -> assertThat(e.loss().reason()).isEqualTo(LeaseLoss.Reason.REVOKED));
        assertThatThrownBy(() -> client.tryAcquire("a", lease, null)).isInstanceOf(LeaseLostException.class);
        assertThat(server.locks).isEmpty();
    }

    @Test
    void aHandleIsInvalidOnceItsLeaseIsLost() {
        LockHandle handle = client.acquire("invoices", lease, null, null);
        server.keepAlives = ScriptedLockService.KeepAlives.SILENT;

        members.time.advance(lease.safeWindow());

        assertThat(handle.isValid()).isFalse();
    }

    @Test
    void cancellingAnAsyncLockWithdrawsTheWaitOnTheServer() throws Exception {
        server.lockAnswer = request -> null;

        CompletableFuture<LockHandle> waiting = client.acquireAsync("invoices", lease, null, null);
        LockRequest acquire = server.locks.poll(5, TimeUnit.SECONDS);
        waiting.cancel(false);

        server.parkedLockCancelled.get(5, TimeUnit.SECONDS);
        LockCancelRequest withdrawal = server.cancels.poll(5, TimeUnit.SECONDS);
        assertThat(withdrawal).as("the member does not withdraw a cancelled call's wait; the client must").isNotNull();
        assertThat(withdrawal.getName()).isEqualTo("invoices");
        assertThat(withdrawal.getLeaseId()).isEqualTo(lease.id());
        assertThat(withdrawal.getRequestId()).as("names the acquire it gives up, so a late copy of it is refused")
                .isNotZero().isEqualTo(acquire.getRequestId());
        client.acquireAsync("invoices", lease, null, null).cancel(false);
        assertThat(server.locks.poll(5, TimeUnit.SECONDS).getRequestId()).as("a new acquire is a new request")
                .isNotEqualTo(acquire.getRequestId());
        assertThat(server.unlocks).as("nothing was granted, so nothing is released").isEmpty();
        assertThat(lease.isValid()).isTrue();
    }

    @Test
    void aGrantThatWonTheRaceWithACancelledAcquireIsGivenBack() throws Exception {
        server.lockAnswer = request -> null;
        server.cancelAnswer = request -> LockCancelResponse.newBuilder().setKey(request.getName())
                .setAcquired(true).setFencingToken(7L << 16).build();

        client.acquireAsync("invoices", lease, null, null).cancel(false);

        UnlockRequest release = server.unlocks.poll(5, TimeUnit.SECONDS);
        assertThat(release).isNotNull();
        assertThat(release.getKey()).isEqualTo("invoices");
        assertThat(release.getLeaseId()).isEqualTo(lease.id());
        assertThat(release.getFencingToken()).isEqualTo(7L << 16);
    }

    @Test
    void aNewAcquireWithTheSameLeaseWaitsUntilAGrantThatWonTheRaceIsGivenBack() throws Exception {
        server.lockAnswer = request -> null;
        server.cancelAnswer = request -> LockCancelResponse.newBuilder().setKey(request.getName())
                .setAcquired(true).setFencingToken(7L << 16).build();
        server.holdUnlocks = true;
        client.acquireAsync("invoices", lease, null, null).cancel(false);
        assertThat(server.unlocks.poll(5, TimeUnit.SECONDS)).as("the give-back of token 7").isNotNull();
        server.locks.clear();

        // Sent now, a member still holding token 7 for this lease would answer it, and the
        // give-back would then release the lock under the caller.
        server.lockAnswer = request -> LockResponse.newBuilder().setKey(request.getName())
                .setAcquired(true).setFencingToken(9L << 16).build();
        CompletableFuture<LockHandle> again = client.acquireAsync("invoices", lease, null, null);
        CompletableFuture<java.util.Optional<LockHandle>> tried = client.tryAcquireAsync("invoices", lease, null);
        assertThat(server.locks.poll(200, TimeUnit.MILLISECONDS)).as("no acquire before the give-back is answered").isNull();
        assertThat(again).isNotDone();
        assertThat(tried).isNotDone();

        server.releaseHeldUnlocks();

        assertThat(again.get(5, TimeUnit.SECONDS).fencingToken()).isEqualTo(9L << 16);
        assertThat(server.locks).hasSize(1);
        assertThat(tried.get(5, TimeUnit.SECONDS)).isPresent();
    }

    @Test
    void anAcquireThatNoMemberAnsweredWithdrawsItsWaitBeforeItFailsSoThatARetryWaitsForTheWithdrawal() throws Exception {
        server.lockAnswer = request -> {
            throw Status.UNAVAILABLE.withDescription("not serving").asRuntimeException();
        };
        server.cancelAnswer = request -> LockCancelResponse.newBuilder().setKey(request.getName())
                .setAcquired(true).setFencingToken(7L << 16).build();
        server.holdUnlocks = true;
        CompletableFuture<LockHandle> first = client.acquireAsync("invoices", lease, Duration.ofSeconds(1), null);
        for (long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10); !first.isDone() && System.nanoTime() < deadline; ) {
            members.time.advance(Duration.ofMillis(100));
        }
        assertThat(first).failsWithin(Duration.ZERO).withThrowableOfType(java.util.concurrent.ExecutionException.class)
                .withCauseInstanceOf(UnavailableException.class);

        // Retried the moment the failure is seen: it must wait for the withdrawal and its give-back.
        server.lockAnswer = request -> LockResponse.newBuilder().setKey(request.getName())
                .setAcquired(true).setFencingToken(9L << 16).build();
        server.locks.clear();
        CompletableFuture<LockHandle> again = client.acquireAsync("invoices", lease, null, null);
        assertThat(server.unlocks.poll(5, TimeUnit.SECONDS)).as("the give-back of token 7").isNotNull();
        assertThat(server.locks.poll(200, TimeUnit.MILLISECONDS)).as("no acquire before the give-back is answered").isNull();

        server.releaseHeldUnlocks();
        assertThat(again.get(5, TimeUnit.SECONDS).fencingToken()).isEqualTo(9L << 16);
    }

    @Test
    void aGiveBackThatNoMemberAnsweredIsRetriedWhileTheLeaseLives() throws Exception {
        server.lockAnswer = request -> null;
        server.cancelAnswer = request -> LockCancelResponse.newBuilder().setKey(request.getName())
                .setAcquired(true).setFencingToken(7L << 16).build();
        server.unlockFailure = Status.UNAVAILABLE.withDescription("not serving");

        client.acquireAsync("invoices", lease, null, null).cancel(false);
        assertThat(server.unlocks.poll(5, TimeUnit.SECONDS)).isNotNull();
        // Longer than a request timeout: the first release gives up.
        Duration failing = TenureClient.DEFAULT_REQUEST_TIMEOUT.multipliedBy(2);
        for (Duration passed = Duration.ZERO; passed.compareTo(failing) < 0; passed = passed.plusMillis(100)) {
            members.time.advance(Duration.ofMillis(100));
            server.unlocks.poll(2, TimeUnit.MILLISECONDS);
        }
        server.unlocks.clear();
        server.unlockFailure = null;

        UnlockRequest retried = null;
        for (long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10); retried == null && System.nanoTime() < deadline; ) {
            members.time.advance(Duration.ofMillis(100));
            retried = server.unlocks.poll(20, TimeUnit.MILLISECONDS);
        }
        assertThat(retried).as("the give-back is sent again after the first release gave up").isNotNull();
        assertThat(retried.getFencingToken()).isEqualTo(7L << 16);
    }

    @Test
    void aLeaseBelongsToTheClientThatGrantedIt() {
        TenureClient other = members.client();

        assertThatThrownBy(() -> other.acquire("a", lease, null, null)).isInstanceOf(IllegalArgumentException.class);
    }
}
