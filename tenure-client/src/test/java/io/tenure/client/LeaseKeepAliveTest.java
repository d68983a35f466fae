package io.tenure.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.Status;
import io.tenure.proto.v1.LeaseGrantRequest;
import io.tenure.proto.v1.LeaseKeepAliveRequest;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The lease-loss rule (ARCHITECTURE.md, I6) on fake time: keep-alive every TTL/3, loss when no
 * acknowledgement arrived within the safe window of the send of the last acknowledged one.
 */
class LeaseKeepAliveTest {
    static final Duration BATCH_WINDOW = Duration.ofNanos(TimeUnit.MICROSECONDS.toNanos(KeepAliveStreams.BATCH_WINDOW_MICROS));

    /** Divisible by 3 and by 2 in whole milliseconds, so every expected moment is exact. */
    private static final Duration TTL = Duration.ofSeconds(9);
    private static final Duration THIRD = TTL.dividedBy(3);
    /** The safe window of a 9 s lease: TTL/3 + 2.5 s = 5.5 s. */
    private static final Duration WINDOW = Duration.ofNanos(LeaseKeeper.safeWindowNanos(TTL.toNanos()));
    private static final Duration NANO = Duration.ofNanos(1);

    private final InProcessMembers members = new InProcessMembers(1);
    private final ScriptedLockService server = members.service(0);
    private final FakeTime time = members.time;
    private final TenureClient client = members.client();

    @AfterEach
    void tearDown() {
        members.close();
    }

    @Test
    void grantSendsTtlInMillisecondsAndWholeSecondsRoundedUp() throws InterruptedException {
        Lease lease = client.grantLease(Duration.ofMillis(1500), "worker-1");

        LeaseGrantRequest grant = server.grants.poll(5, TimeUnit.SECONDS);
        assertThat(grant).isNotNull();
        assertThat(grant.getTtlMs()).isEqualTo(1500);
        assertThat(grant.getTtl()).isEqualTo(2);
        assertThat(grant.getClientId()).isEqualTo("worker-1");
        assertThat(grant.getId()).isPositive();
        assertThat(lease.id()).isEqualTo(grant.getId());
        assertThat(lease.ttl()).isEqualTo(Duration.ofMillis(1500));
        assertThat(lease.isValid()).isTrue();
        assertThat(lease.safeUntil()).as("5/6 of 1.5 s").isEqualTo(FakeTime.EPOCH + Duration.ofMillis(1250).toNanos());
    }

    @Test
    void theSafeWindowIsAKeepAlivePeriodPlusAFailoverAllowanceBetweenHalfAndFiveSixthsOfTheTtl() {
        assertThat(Duration.ofNanos(LeaseKeeper.safeWindowNanos(Duration.ofSeconds(30).toNanos()))).isEqualTo(Duration.ofSeconds(15));
        assertThat(Duration.ofNanos(LeaseKeeper.safeWindowNanos(Duration.ofSeconds(15).toNanos()))).isEqualTo(Duration.ofMillis(7_500));
        assertThat(Duration.ofNanos(LeaseKeeper.safeWindowNanos(Duration.ofSeconds(9).toNanos()))).isEqualTo(Duration.ofMillis(5_500));
        assertThat(Duration.ofNanos(LeaseKeeper.safeWindowNanos(Duration.ofSeconds(6).toNanos()))).isEqualTo(Duration.ofMillis(4_500));
        assertThat(Duration.ofNanos(LeaseKeeper.safeWindowNanos(Duration.ofSeconds(5).toNanos())))
                .as("a cluster's shortest TTL: 2.5 s for the failover after a period of TTL/3, TTL/6 of margin")
                .isEqualTo(Duration.ofNanos(4_166_666_666L));
        assertThat(client.grantLease(TTL, "worker-1").safeWindow()).isEqualTo(WINDOW);
    }

    @Test
    void sendsAKeepAliveEveryThirdOfTheTtlAndEachAckExtendsTheSafeWindow() {
        Lease lease = client.grantLease(TTL, "worker-1");

        time.advanceTo(THIRD.minus(NANO));
        assertThat(server.keepAlivesReceived).isEmpty();

        time.advanceTo(THIRD);
        assertThat(server.keepAlivesReceived).hasSize(1);
        assertThat(server.keepAlivesReceived.peek().getId()).isEqualTo(lease.id());
        assertThat(lease.safeUntil()).isEqualTo(at(THIRD.plus(WINDOW)));

        time.advanceTo(THIRD.multipliedBy(5));
        assertThat(server.keepAlivesReceived).hasSize(5);
        assertThat(lease.safeUntil()).isEqualTo(at(THIRD.multipliedBy(5).plus(WINDOW)));
        assertThat(lease.isValid()).isTrue();
        assertThat(lease.lost()).isNotDone();
        assertThat(server.streamsOpened).hasValue(1);
    }

    @Test
    void anExpiringLeaseSendsNoKeepAliveAndIsLostAtFiveSixthsOfItsTtl() throws Exception {
        Lease lease = client.grantExpiringLease(TTL, "job-1");
        Duration fiveSixths = TTL.minus(TTL.dividedBy(6)); // 7.5 s: TTL/6 before the server's earliest expiry
        assertThat(lease.safeUntil()).isEqualTo(at(fiveSixths));

        time.advanceTo(fiveSixths.minus(NANO));
        assertThat(lease.isValid()).isTrue();
        assertThat(server.keepAlivesReceived).as("never renewed").isEmpty();
        assertThat(server.streamsOpened).hasValue(0);

        time.advanceTo(fiveSixths);
        assertThat(lease.isValid()).isFalse();
        LeaseLoss loss = lease.lost().get(5, TimeUnit.SECONDS);
        assertThat(loss.reason()).isEqualTo(LeaseLoss.Reason.EXPIRED);
        assertThat(loss.message()).contains(String.valueOf(lease.id())).contains("not renewed");
        assertThat(server.keepAlivesReceived).isEmpty();
    }

    @Test
    void lostAsUnreachableWhenNothingIsAcknowledgedWithinTheSafeWindow() throws Exception {
        Lease lease = client.grantLease(TTL, "worker-1");
        server.keepAlives = ScriptedLockService.KeepAlives.SILENT;

        // The keep-alive at TTL/3 (3 s) goes unanswered, and so do its re-sends after each TTL/10
        // of silence (3.9 and 4.8 s); the grant's own window (5.5 s) still holds.
        time.advanceTo(WINDOW.minus(NANO));
        assertThat(server.keepAlivesReceived).hasSize(3);
        assertThat(lease.isValid()).isTrue();
        assertThat(lease.lost()).isNotDone();

        time.advanceTo(WINDOW);
        assertThat(lease.isValid()).isFalse();
        LeaseLoss loss = lease.lost().get(5, TimeUnit.SECONDS);
        assertThat(loss.reason()).isEqualTo(LeaseLoss.Reason.UNREACHABLE);
        assertThat(loss.message()).contains(String.valueOf(lease.id()));
        // Declared before the server could expire the lease (grant + TTL at the earliest).
        assertThat(time.elapsedNanos()).isLessThan(TTL.toNanos());
    }

    @Test
    void theLossFallsOnTheExactEndOfTheWindowOffTheMillisecondGrid() throws Exception {
        // Granted between two of the lease timers' millisecond slots: the window ends there too
        // (renewals are sent on the grid, the grant is not), so a loss timer rounded the wrong
        // way would fire after it. Re-arming as acknowledgements move the window is covered by
        // safeWindowCountsFromTheSendOfTheKeepAliveNotFromItsAcknowledgement.
        time.jump(Duration.ofNanos(337_123));
        server.keepAlives = ScriptedLockService.KeepAlives.SILENT;
        Lease lease = client.grantLease(TTL, "worker-1");
        long end = lease.safeUntil();
        assertThat(Math.floorMod(end, LeaseTimers.SLOT_NANOS)).as("off the grid").isNotZero();

        time.advance(Duration.ofNanos(end - time.nanoTime() - 1));
        assertThat(lease.lost()).as("not declared lost before the window ends").isNotDone();
        assertThat(lease.isValid()).isTrue();
        time.advance(NANO);
        assertThat(lease.lost()).as("declared lost by the loss timer at the end of the window").isDone();
        assertThat(lease.lost().get(5, TimeUnit.SECONDS).reason()).isEqualTo(LeaseLoss.Reason.UNREACHABLE);
        assertThat(lease.isValid()).isFalse();
    }

    @Test
    void safeWindowCountsFromTheSendOfTheKeepAliveNotFromItsAcknowledgement() throws Exception {
        Lease lease = client.grantLease(TTL, "worker-1");
        server.keepAlives = ScriptedLockService.KeepAlives.HOLD;

        time.advanceTo(THIRD);                                 // keep-alive sent at TTL/3, answer held
        time.advanceTo(THIRD.plus(Duration.ofMillis(500)));    // ... and acknowledged 500 ms later
        server.keepAlives = ScriptedLockService.KeepAlives.SILENT;
        server.releaseHeldAcks();

        assertThat(lease.safeUntil()).isEqualTo(at(THIRD.plus(WINDOW)));
        time.advanceTo(THIRD.plus(WINDOW).minus(NANO));
        assertThat(lease.isValid()).isTrue();
        time.advanceTo(THIRD.plus(WINDOW));
        assertThat(lease.isValid()).isFalse();
        assertThat(lease.lost().get(5, TimeUnit.SECONDS).reason()).isEqualTo(LeaseLoss.Reason.UNREACHABLE);
    }

    @Test
    void anAcknowledgementArrivingAfterTheWindowClosedDoesNotReviveTheLease() throws Exception {
        Lease lease = client.grantLease(TTL, "worker-1");
        server.keepAlives = ScriptedLockService.KeepAlives.HOLD;

        time.advanceTo(THIRD);
        time.advanceTo(WINDOW);
        server.releaseHeldAcks();

        assertThat(lease.lost().get(5, TimeUnit.SECONDS).reason()).isEqualTo(LeaseLoss.Reason.UNREACHABLE);
        assertThat(lease.isValid()).isFalse();
        assertThat(lease.safeUntil()).isEqualTo(at(WINDOW));
    }

    @Test
    void afterAPauseTheLeaseReadsInvalidBeforeAnyTimerHasRun() throws Exception {
        Lease lease = client.grantLease(TTL, "worker-1");

        // A stop-the-world pause: the clock moves past the window, no timer has run yet.
        time.jump(WINDOW);

        assertThat(lease.isValid()).isFalse();
        assertThat(lease.lost()).isNotDone();
        time.runDueTasks();
        assertThat(lease.lost().get(5, TimeUnit.SECONDS).reason()).isEqualTo(LeaseLoss.Reason.UNREACHABLE);
        // The keep-alive tick that was due during the pause found the window closed and sent nothing.
        assertThat(server.keepAlivesReceived).isEmpty();
    }

    @Test
    void anAckWithTtlZeroMeansTheServerExpiredTheLease() throws Exception {
        Lease lease = client.grantLease(TTL, "worker-1");
        server.keepAlives = ScriptedLockService.KeepAlives.EXPIRED;

        time.advanceTo(THIRD);

        LeaseLoss loss = lease.lost().get(5, TimeUnit.SECONDS);
        assertThat(loss.reason()).isEqualTo(LeaseLoss.Reason.EXPIRED);
        assertThat(loss.message()).contains("ttl=0");
        assertThat(lease.isValid()).isFalse();
        // No keep-alive is sent for a lost lease.
        time.advanceTo(TTL);
        assertThat(server.keepAlivesReceived).hasSize(1);
    }

    @Test
    void aBrokenStreamIsReopenedAtOnceAndTheKeepAliveRetriedInsideTheWindow() {
        Lease lease = client.grantLease(TTL, "worker-1");
        time.advanceTo(Duration.ofSeconds(1));

        server.breakStreams(Status.UNAVAILABLE.withDescription("leader changed"));
        time.runDueTasks();

        assertThat(server.streamsOpened).hasValue(2);
        assertThat(server.keepAlivesReceived).hasSize(1);
        assertThat(lease.safeUntil()).isEqualTo(at(Duration.ofSeconds(1).plus(WINDOW)));
        // Past the grant's own window, alive thanks to the retry; the regular ticks continue.
        time.advanceTo(WINDOW.plus(Duration.ofSeconds(1)));
        assertThat(lease.isValid()).isTrue();
        assertThat(lease.lost()).isNotDone();
    }

    @Test
    void repeatedBreaksAreRetriedWithDoublingBackoffUntilTheWindowCloses() throws Exception {
        Lease lease = client.grantLease(TTL, "worker-1");
        server.keepAlives = ScriptedLockService.KeepAlives.BREAK;

        time.advanceTo(WINDOW);

        // Stream 1 breaks on the keep-alive at 3 s; reopened at once (3.000 s), then after 25, 50,
        // 100, 200, 400 and 800 ms (3.025, 3.075, 3.175, 3.375, 3.775, 4.575 s); the next, at
        // 6.075 s (the backoff is capped at TTL/6, 1.5 s), would fall after the window closes at
        // 5.5 s. Each stream carried exactly one keep-alive.
        assertThat(server.streamsOpened).hasValue(8);
        assertThat(server.keepAlivesReceived).hasSize(8);
        assertThat(lease.lost().get(5, TimeUnit.SECONDS).reason()).isEqualTo(LeaseLoss.Reason.UNREACHABLE);
        time.advanceTo(TTL);
        assertThat(server.streamsOpened).hasValue(8);
    }

    @Test
    void theClientsLeasesShareOneKeepAliveStreamPerMember() throws Exception {
        Lease a = client.grantLease(TTL, "worker-1");
        Lease b = client.grantLease(TTL, "worker-2");
        Lease c = client.grantLease(TTL, "worker-3");

        time.advanceTo(THIRD);
        assertThat(server.streamsOpened).as("one stream for three leases").hasValue(1);
        assertThat(server.keepAlivesReceived).as("the first due goes at once").hasSize(1);
        // The others due within the batch window share the next request.
        time.advanceTo(THIRD.plus(BATCH_WINDOW));
        assertThat(server.keepAlivesReceived).extracting(LeaseKeepAliveRequest::getId)
                .containsExactlyInAnyOrder(a.id(), b.id(), c.id());
        assertThat(server.batchedKeepAlives).as("two leases in one request").hasValue(1);
        assertThat(List.of(a, b, c)).as("counted from when each asked to send")
                .allSatisfy(l -> assertThat(l.safeUntil()).isEqualTo(at(THIRD.plus(WINDOW))));

        // A break moves every lease to one new stream, each retrying its keep-alive at once.
        server.breakStreams(Status.UNAVAILABLE.withDescription("leader changed"));
        time.runDueTasks();
        time.advance(BATCH_WINDOW);
        assertThat(server.streamsOpened).hasValue(2);
        assertThat(server.keepAlivesReceived).hasSize(6);

        // A lease that ends leaves the stream to the others; the last one closes it.
        a.revoke();
        b.revoke();
        time.advanceTo(THIRD.multipliedBy(2));
        assertThat(server.keepAlivesReceived).hasSize(7);
        assertThat(server.keepAlivesReceived).extracting(LeaseKeepAliveRequest::getId).last().isEqualTo(c.id());
        assertThat(server.openKeepAliveStreams()).isEqualTo(1);
        c.revoke();
        assertThat(server.openKeepAliveStreams()).as("the idle stream is closed").isZero();
        assertThat(server.streamsOpened).hasValue(2);
    }

    @Test
    void aStreamFailingWithNotFoundMeansTheLeaseIsGone() throws Exception {
        Lease lease = client.grantLease(TTL, "worker-1");

        server.breakStreams(Status.NOT_FOUND.withDescription("lease not found"));

        LeaseLoss loss = lease.lost().get(5, TimeUnit.SECONDS);
        assertThat(loss.reason()).isEqualTo(LeaseLoss.Reason.EXPIRED);
        assertThat(loss.message()).contains("lease not found");
    }

    @Test
    void revokeTellsTheServerStopsKeepAlivesAndCompletesLostAsRevoked() throws Exception {
        Lease lease = client.grantLease(TTL, "worker-1");

        lease.revoke();
        lease.revoke();
        lease.close();

        assertThat(server.revokes).containsExactly(lease.id());
        assertThat(lease.lost().get(5, TimeUnit.SECONDS).reason()).isEqualTo(LeaseLoss.Reason.REVOKED);
        assertThat(lease.isValid()).isFalse();
        time.advanceTo(TTL);
        assertThat(server.keepAlivesReceived).isEmpty();
    }

    @Test
    void revokeAfterALossKeepsTheFirstReasonButStillFreesTheLeaseOnTheServer() throws Exception {
        Lease lease = client.grantLease(TTL, "worker-1");
        server.keepAlives = ScriptedLockService.KeepAlives.SILENT;
        time.advanceTo(WINDOW);

        lease.revoke();

        assertThat(lease.lost().get(5, TimeUnit.SECONDS).reason()).isEqualTo(LeaseLoss.Reason.UNREACHABLE);
        assertThat(server.revokes).containsExactly(lease.id());
    }

    @Test
    void closingTheClientEndsItsLeasesAsClosed() throws Exception {
        Lease lease = client.grantLease(TTL, "worker-1");

        client.close();

        assertThat(lease.lost().get(5, TimeUnit.SECONDS).reason()).isEqualTo(LeaseLoss.Reason.CLOSED);
        assertThat(lease.isValid()).isFalse();
        assertThatThrownBy(() -> client.grantLease(TTL, "worker-1")).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void completingTheReturnedLostFutureDoesNotFoolTheLease() {
        Lease lease = client.grantLease(TTL, "worker-1");

        lease.lost().cancel(false);

        assertThat(lease.isValid()).isTrue();
        time.advanceTo(THIRD);
        assertThat(server.keepAlivesReceived).hasSize(1);
    }

    @Test
    void aLeaseLostWhileWaitingForALockWithdrawsTheWait() throws Exception {
        Lease lease = client.grantLease(TTL, "worker-1");
        server.lockAnswer = request -> null; // never granted
        server.keepAlives = ScriptedLockService.KeepAlives.SILENT;

        CompletableFuture<LockHandle> waiting = client.acquireAsync("jobs", lease, null, null);
        assertThat(server.locks.poll(5, TimeUnit.SECONDS).getTimeoutMs()).isEqualTo(-1);
        assertThat(waiting).isNotDone();

        time.advanceTo(WINDOW);

        assertThatThrownBy(() -> waiting.get(5, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .cause().isInstanceOf(LeaseLostException.class);
        server.parkedLockCancelled.get(5, TimeUnit.SECONDS);
    }

    private static long at(Duration offset) {
        return FakeTime.EPOCH + offset.toNanos();
    }
}
