package io.tenure.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenure.client.Lease;
import io.tenure.client.LockDescription;
import io.tenure.client.LockHandle;
import io.tenure.client.LockNotAcquiredException;
import io.tenure.client.QueuePlace;
import io.tenure.client.SemaphoreNotAcquiredException;
import io.tenure.client.SemaphorePermit;
import io.tenure.client.TenureClient;
import io.tenure.client.TenureException;
import io.tenure.proto.v1.LockRequest;
import io.tenure.proto.v1.LockResponse;
import io.tenure.proto.v1.LockServiceGrpc;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Seed 004's enqueue, then wait: a lease's place in a queue, taken at once and waited for later. */
class TwoPhaseAcquireTest {
    private static final Duration TTL = Duration.ofSeconds(5);

    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.members(1);

    @Test
    void anEnqueuedLeaseKeepsItsPlaceUntilItWaitsAndIsGrantedInTurn() {
        TenureClient client = tenure.client();
        Lease holder = client.grantLease(TTL, "holder");
        Lease first = client.grantLease(TTL, "first");
        Lease second = client.grantLease(TTL, "second");
        LockHandle held = client.lock("two-phase/a", holder).acquire();

        QueuePlace<LockHandle> firstPlace = client.lock("two-phase/a", first).enqueue();
        QueuePlace<LockHandle> secondPlace = client.lock("two-phase/a", second).enqueue();

        assertThat(firstPlace.granted()).isEmpty();
        assertThat(firstPlace.ahead()).isZero();
        assertThat(secondPlace.ahead()).isEqualTo(1);
        LockDescription queued = client.describe("two-phase/a");
        assertThat(queued.waiters()).extracting(LockDescription.Waiter::clientId).as("queued with no call waiting")
                .containsExactly("first", "second");

        held.release();
        LockHandle granted = firstPlace.await(Duration.ofSeconds(10));
        assertThat(granted.fencingToken()).isGreaterThan(held.fencingToken());
        assertThat(granted.lease()).isSameAs(first);

        // A wait that times out gives the place up; the same place cannot be waited for again.
        assertThatThrownBy(() -> secondPlace.await(Duration.ofMillis(200))).isInstanceOf(LockNotAcquiredException.class);
        assertThat(client.describe("two-phase/a").waiters()).isEmpty();
        assertThatThrownBy(() -> secondPlace.await(Duration.ofMillis(200))).isInstanceOf(TenureException.class)
                .hasMessageContaining("already ended");
        granted.release();
        List.of(holder, first, second).forEach(Lease::revoke);
    }

    @Test
    void aFreeLockIsGrantedAtEnqueueAndAWithdrawnPlaceLeavesTheQueue() {
        TenureClient client = tenure.client();
        Lease a = client.grantLease(TTL, "a");
        Lease b = client.grantLease(TTL, "b");
        QueuePlace<LockHandle> atOnce = client.lock("two-phase/b", a).enqueue();
        assertThat(atOnce.granted()).isPresent();
        assertThat(atOnce.await(Duration.ZERO)).isSameAs(atOnce.granted().get());

        QueuePlace<LockHandle> waiting = client.lock("two-phase/b", b).enqueue();
        assertThat(waiting.granted()).isEmpty();
        waiting.withdraw();

        assertThat(client.describe("two-phase/b").waiters()).isEmpty();
        atOnce.granted().get().release();
        assertThat(client.describe("two-phase/b").held()).as("nobody was queued to take it").isFalse();
        a.revoke();
        b.revoke();
    }

    @Test
    void theWireAnswersAnEnqueueAtOnceWithTheWaitersAhead() {
        TenureClient client = tenure.client();
        Lease holder = client.grantLease(TTL, "holder");
        Lease raw = client.grantLease(TTL, "raw");
        LockHandle held = client.lock("two-phase/c", holder).acquire();
        LockServiceGrpc.LockServiceBlockingStub stub = LockServiceGrpc.newBlockingStub(tenure.cluster().channel(0));

        LockResponse enqueued = stub.lock(LockRequest.newBuilder().setName("two-phase/c").setLeaseId(raw.id()).setEnqueue(true)
                .setRequestId(7).build());

        assertThat(enqueued.getAcquired()).isFalse();
        assertThat(enqueued.getWaiters()).isZero();
        assertThat(enqueued.getHolder()).isEqualTo("holder");
        assertThat(client.describe("two-phase/c").waiters()).extracting(LockDescription.Waiter::clientId).containsExactly("raw");
        held.release();
        LockResponse waited = stub.lock(LockRequest.newBuilder().setName("two-phase/c").setLeaseId(raw.id()).setTimeoutMs(5_000)
                .setRequestId(7).build());
        assertThat(waited.getAcquired()).isTrue();
        holder.revoke();
        raw.revoke();
    }

    @Test
    void aSemaphorePlaceIsTakenAtOnceAndWaitedForLater() {
        TenureClient client = tenure.client();
        Lease full = client.grantLease(TTL, "full");
        Lease later = client.grantLease(TTL, "later");
        Lease gives = client.grantLease(TTL, "gives-up");
        SemaphorePermit both = client.semaphore("two-phase/pool", 2, full).acquire(2);

        QueuePlace<SemaphorePermit> place = client.semaphore("two-phase/pool", 2, later).enqueue(1);
        QueuePlace<SemaphorePermit> other = client.semaphore("two-phase/pool", 2, gives).enqueue(1);
        assertThat(place.granted()).isEmpty();
        assertThat(other.ahead()).isEqualTo(1);
        assertThatThrownBy(() -> other.await(Duration.ofMillis(200))).isInstanceOf(SemaphoreNotAcquiredException.class);

        both.release();
        SemaphorePermit permit = place.await(Duration.ofSeconds(10));
        assertThat(permit.fencingToken()).isGreaterThan(both.fencingToken());
        assertThat(client.semaphore("two-phase/pool", 2).describe().waiters()).isEmpty();
        permit.release();
        List.of(full, later, gives).forEach(Lease::revoke);
    }
}
