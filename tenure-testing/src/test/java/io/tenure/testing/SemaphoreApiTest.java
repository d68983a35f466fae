package io.tenure.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenure.client.FailedPreconditionException;
import io.tenure.client.InvalidArgumentException;
import io.tenure.client.Lease;
import io.tenure.client.NotHolderException;
import io.tenure.client.SemaphoreDescription;
import io.tenure.client.SemaphoreNotAcquiredException;
import io.tenure.client.SemaphorePermit;
import io.tenure.client.TenureClient;
import io.tenure.client.TenureSemaphore;
import io.tenure.proto.v1.SemaphoreAcquireRequest;
import io.tenure.proto.v1.SemaphoreServiceGrpc;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Semaphores through the Java client and the gRPC service, against one real member. */
class SemaphoreApiTest {
    private static final Duration TTL = Duration.ofSeconds(5);

    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.members(1);

    /** The client the tests use: the extension's, whose calls travel in the session stream. */
    TenureClient client() {
        return tenure.client();
    }

    @Test
    void permitsAreGrantedInStrictFifoOrderEachWithItsOwnToken() throws Exception {
        TenureClient client = client();
        Lease a = client.grantLease(TTL, "a");
        Lease b = client.grantLease(TTL, "b");
        Lease c = client.grantLease(TTL, "c");
        SemaphorePermit first = client.semaphore("pool/fifo", 4, a).acquire(3);
        CompletableFuture<SemaphorePermit> big = client.semaphore("pool/fifo", 4, b).acquireAsync(2);
        awaitWaiters(client, "pool/fifo", 1);
        CompletableFuture<SemaphorePermit> small = client.semaphore("pool/fifo", 4, c).acquireAsync(1);
        awaitWaiters(client, "pool/fifo", 2);

        SemaphoreDescription d = client.semaphore("pool/fifo", 4).describe();
        assertThat(d.exists()).isTrue();
        assertThat(d.available()).as("one permit is free, and the request for one still waits behind the request for two").isEqualTo(1);
        assertThat(d.holders()).extracting(SemaphoreDescription.Holder::clientId).containsExactly("a");
        assertThat(d.holders().get(0).fencingToken()).isEqualTo(first.fencingToken());
        assertThat(d.waiters()).extracting(SemaphoreDescription.Waiter::clientId).containsExactly("b", "c");
        assertThat(small).isNotDone();

        first.release();
        SemaphorePermit second = big.get(10, TimeUnit.SECONDS);
        SemaphorePermit third = small.get(10, TimeUnit.SECONDS);
        assertThat(second.permits()).isEqualTo(2);
        assertThat(third.fencingToken()).isGreaterThan(second.fencingToken()).isGreaterThan(first.fencingToken());
        second.release();
        third.release();
        SemaphoreDescription idle = client.semaphore("pool/fifo", 4).describe();
        assertThat(idle.isIdle()).as("nobody holds or waits: idle, keeping its limit").isTrue();
        assertThat(idle.limit()).isEqualTo(4);
        assertThat(idle.available()).isEqualTo(4);
        assertThat(idle.idleSinceRevision()).isGreaterThan(third.fencingToken());
        List.of(a, b, c).forEach(Lease::revoke);
    }

    @Test
    void aTimeoutWithdrawsTheWaitAndATryNeverQueues() {
        TenureClient client = client();
        Lease holder = client.grantLease(TTL, "holder");
        Lease other = client.grantLease(TTL, "other");
        TenureSemaphore pool = client.semaphore("pool/timeout", 1, other);
        try (SemaphorePermit held = client.semaphore("pool/timeout", 1, holder).acquire(1)) {
            assertThat(pool.tryAcquire(1)).isEmpty();
            assertThatThrownBy(() -> pool.acquire(1, Duration.ofMillis(200)))
                    .isInstanceOf(SemaphoreNotAcquiredException.class)
                    .hasMessageContaining("semaphore 'pool/timeout': 1 permits not acquired (0 free");
            assertThat(pool.describe().waiters()).as("withdrawn on the server").isEmpty();
            assertThat(held.isValid()).isTrue();
        }
        Optional<SemaphorePermit> free = pool.tryAcquire(1);
        assertThat(free).isPresent();
        free.get().release();
        holder.revoke();
        other.revoke();
    }

    @Test
    void aLeaseThatEndsReturnsItsPermitsToTheNextWaiter() throws Exception {
        TenureClient client = client();
        Lease mortal = client.grantLease(TTL, "mortal");
        Lease next = client.grantLease(TTL, "next");
        SemaphorePermit held = client.semaphore("pool/expiry", 2, mortal).acquire(2);
        CompletableFuture<SemaphorePermit> waiting = client.semaphore("pool/expiry", 2, next).acquireAsync(1);
        awaitWaiters(client, "pool/expiry", 1);

        mortal.revoke();

        SemaphorePermit granted = waiting.get(10, TimeUnit.SECONDS);
        assertThat(granted.fencingToken()).isGreaterThan(held.fencingToken());
        assertThat(held.isValid()).isFalse();
        granted.release();
        next.revoke();
    }

    @Test
    void badRequestsAreRefusedNamingTheFieldAndChangeNothing() {
        TenureClient client = client();
        Lease a = client.grantLease(TTL, "a");
        Lease b = client.grantLease(TTL, "b");
        SemaphorePermit held = client.semaphore("pool/bad", 3, a).acquire(1);

        assertThatThrownBy(() -> client.semaphore("pool/bad", 5, b).acquire(1))
                .isInstanceOf(FailedPreconditionException.class).isNotInstanceOf(NotHolderException.class)
                .hasMessageContaining("semaphore 'pool/bad' has limit 3, not 5");
        assertThatThrownBy(() -> client.semaphore("pool/bad", 3, a).acquire(2))
                .isInstanceOf(FailedPreconditionException.class).hasMessageContaining("holds 1 permits");
        assertThatThrownBy(() -> client.semaphore("pool/bad", 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("limit must be between 1 and 1000000");
        assertThatThrownBy(() -> client.semaphore("pool/bad", 3).acquire(4)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("permits must be between 1 and the limit 3");
        client.lock("jobs/locked", b).acquire();
        assertThatThrownBy(() -> client.semaphore("jobs/locked", 2, a).acquire(1))
                .isInstanceOf(FailedPreconditionException.class).hasMessageContaining("'jobs/locked' is a lock, not a semaphore");
        assertThatThrownBy(() -> client.lock("pool/bad", b).acquire(Duration.ZERO))
                .hasMessageContaining("'pool/bad' is a semaphore, not a lock");
        // Checked by the member as well, for clients other than this one.
        SemaphoreServiceGrpc.SemaphoreServiceBlockingStub raw = SemaphoreServiceGrpc.newBlockingStub(tenure.cluster().channel(0));
        assertThatThrownBy(() -> raw.acquire(SemaphoreAcquireRequest.newBuilder().setName("pool/raw").setLeaseId(a.id()).setLimit(2)
                .setPermits(3).build()))
                .isInstanceOf(StatusRuntimeException.class)
                .hasMessageContaining("INVALID_ARGUMENT").hasMessageContaining("permits must not exceed the limit");
        assertThatThrownBy(() -> raw.acquire(SemaphoreAcquireRequest.newBuilder().setName("pool/raw").setLeaseId(a.id()).setLimit(0)
                .setPermits(1).build()))
                .hasMessageContaining("limit must be between 1 and 1000000");

        SemaphoreDescription d = client.semaphore("pool/bad", 3).describe();
        assertThat(d.limit()).isEqualTo(3);
        assertThat(d.holders()).extracting(SemaphoreDescription.Holder::permits).containsExactly(1);
        assertThat(d.waiters()).isEmpty();
        held.release();
        a.revoke();
        b.revoke();
    }

    @Test
    void theSessionLeaseHoldsPermitsWhenNoLeaseIsGiven() {
        TenureClient client = client();
        List<SemaphorePermit> held = new ArrayList<>();
        try (SemaphorePermit permit = client.semaphore("pool/session", 2).acquire(2, Duration.ofSeconds(5))) {
            held.add(permit);
            assertThat(permit.lease()).isSameAs(client.session());
            assertThat(client.semaphore("pool/session", 2).describe().available()).isZero();
        }
        assertThat(held.get(0).isValid()).isFalse();
        assertThat(client.semaphore("pool/session", 2).describe().isIdle()).isTrue();
    }

    @Test
    void theMetricsCountSemaphoreGrantsHoldersAndWaiters() throws Exception {
        TenureClient client = client();
        Lease a = client.grantLease(TTL, "a");
        Lease b = client.grantLease(TTL, "b");
        double acquiredBefore = metric("semaphore_acquire_total{result=\"acquired\"}");
        double immediateBefore = metricOrZero(IMMEDIATE);
        double handOffsBefore = metricOrZero(HAND_OFFS);
        SemaphorePermit held = client.semaphore("pool/metrics", 3, a).acquire(3);
        CompletableFuture<SemaphorePermit> waiting = client.semaphore("pool/metrics", 3, b).acquireAsync(1);
        awaitWaiters(client, "pool/metrics", 1);

        assertThat(metric("semaphore_acquire_total{result=\"acquired\"}")).isEqualTo(acquiredBefore + 1);
        assertThat(metric("semaphore_permits_held")).isGreaterThanOrEqualTo(3);
        assertThat(metric("semaphore_waiters")).isGreaterThanOrEqualTo(1);
        held.release();
        waiting.get(10, TimeUnit.SECONDS).release();
        assertThat(metric("semaphore_release_total{result=\"released\"}")).isGreaterThanOrEqualTo(2);
        assertThat(metric(IMMEDIATE)).as("grants by kind, immediate").isEqualTo(immediateBefore + 1);
        assertThat(metric(HAND_OFFS)).as("grants by kind, handed off").isEqualTo(handOffsBefore + 1);
        a.revoke();
        b.revoke();
    }

    private static final String IMMEDIATE = "grants_total{kind=\"semaphore\",via=\"immediate\"}";
    private static final String HAND_OFFS = "grants_total{kind=\"semaphore\",via=\"hand_off\"}";

    private static double metricOrZero(String sample) throws Exception {
        try {
            return metric(sample);
        } catch (AssertionError notYet) {
            return 0;
        }
    }

    private static double metric(String sample) throws Exception {
        return MemberMetrics.sample(tenure.cluster(), 0, sample);
    }

    private static void awaitWaiters(TenureClient client, String name, int count) {
        Await.until("semaphore " + name + " to have " + count + " waiters", Duration.ofSeconds(10),
                () -> client.semaphore(name, 1_000_000).describe().waiters().size() >= count);
    }
}
