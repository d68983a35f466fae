package io.tenure.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.StatusRuntimeException;
import io.tenure.client.FailedPreconditionException;
import io.tenure.client.Lease;
import io.tenure.client.LockDescription;
import io.tenure.client.LockHandle;
import io.tenure.client.LockMode;
import io.tenure.client.LockNotAcquiredException;
import io.tenure.client.NotHolderException;
import io.tenure.client.QueuePlace;
import io.tenure.client.TenureClient;
import io.tenure.client.TenureReadWriteLock;
import io.tenure.proto.v1.DowngradeRequest;
import io.tenure.proto.v1.LockRequest;
import io.tenure.proto.v1.LockServiceGrpc;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Read/write locks through the Java client and the gRPC service, against one real member. */
class ReadWriteLockApiTest {
    private static final Duration TTL = Duration.ofSeconds(5);

    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.members(1);

    @Test
    void readersShareAWriterWaitsForThemAndGetsATokenAboveTheirs() throws Exception {
        TenureClient client = tenure.client();
        Lease a = client.grantLease(TTL, "a");
        Lease b = client.grantLease(TTL, "b");
        Lease w = client.grantLease(TTL, "w");
        LockHandle first = client.readWriteLock("rw/share", a).readLock().acquire(Duration.ofSeconds(5));
        LockHandle second = client.readWriteLock("rw/share", b).readLock().acquire(Duration.ZERO);
        CompletableFuture<LockHandle> writer = client.readWriteLock("rw/share", w).writeLock().acquireAsync(Duration.ofSeconds(10));
        awaitWaiters(client, "rw/share", 1);

        LockDescription d = client.readWriteLock("rw/share").describe();
        assertThat(first.mode()).isEqualTo(LockMode.READ);
        assertThat(second.isShared()).isTrue();
        assertThat(d.mode()).isEqualTo(LockMode.READ);
        assertThat(d.holders()).extracting(LockDescription.Holder::clientId).containsExactly("a", "b");
        assertThat(d.holders()).extracting(LockDescription.Holder::fencingToken).containsExactly(first.fencingToken(), second.fencingToken());
        assertThat(d.holders().get(0).ttlRemaining()).isPresent();
        assertThat(d.waiters()).extracting(LockDescription.Waiter::clientId, LockDescription.Waiter::mode)
                .containsExactly(org.assertj.core.api.Assertions.tuple("w", LockMode.WRITE));
        assertThat(MemberMetrics.sample(tenure.cluster(), 0, "lock_read_holders")).isGreaterThanOrEqualTo(2);
        assertThat(MemberMetrics.sample(tenure.cluster(), 0, "locks_held_read")).isGreaterThanOrEqualTo(1);

        first.release();
        assertThat(writer).isNotDone();
        second.release();
        LockHandle written = writer.get(10, TimeUnit.SECONDS);
        assertThat(written.mode()).isEqualTo(LockMode.WRITE);
        assertThat(written.fencingToken()).isGreaterThan(second.fencingToken()).isGreaterThan(first.fencingToken());
        written.release();
        List.of(a, b, w).forEach(Lease::revoke);
    }

    @Test
    void aQueuedWriterHoldsBackALaterReaderAndADowngradeLetsReadersIn() throws Exception {
        TenureClient client = tenure.client();
        Lease holder = client.grantLease(TTL, "holder");
        Lease writer = client.grantLease(TTL, "writer");
        Lease reader = client.grantLease(TTL, "reader");
        LockHandle written = client.readWriteLock("rw/fair", holder).writeLock().acquire();
        CompletableFuture<LockHandle> nextWriter = client.readWriteLock("rw/fair", writer).writeLock().acquireAsync();
        awaitWaiters(client, "rw/fair", 1);
        CompletableFuture<LockHandle> lateReader = client.readWriteLock("rw/fair", reader).readLock().acquireAsync();
        awaitWaiters(client, "rw/fair", 2);

        assertThat(written.downgrade()).isSameAs(written);
        assertThat(written.mode()).isEqualTo(LockMode.READ);
        LockDescription d = client.describe("rw/fair");
        assertThat(d.mode()).isEqualTo(LockMode.READ);
        assertThat(d.fencingToken()).as("the downgraded grant keeps its token").isEqualTo(written.fencingToken());
        assertThat(d.waiters()).as("the reader stays behind the writer").extracting(LockDescription.Waiter::clientId)
                .containsExactly("writer", "reader");
        assertThat(lateReader).isNotDone();

        written.release();
        LockHandle w = nextWriter.get(10, TimeUnit.SECONDS);
        assertThat(lateReader).isNotDone();
        w.downgrade();
        LockHandle r = lateReader.get(10, TimeUnit.SECONDS);
        assertThat(r.fencingToken()).isGreaterThan(w.fencingToken());
        assertThat(client.describe("rw/fair").holders()).extracting(LockDescription.Holder::clientId).containsExactly("writer", "reader");
        w.release();
        r.release();
        List.of(holder, writer, reader).forEach(Lease::revoke);
    }

    @Test
    void aReaderIsNeverUpgradedAndAStaleDowngradeIsRefused() {
        TenureClient client = tenure.client();
        Lease a = client.grantLease(TTL, "a");
        Lease b = client.grantLease(TTL, "b");
        TenureReadWriteLock rw = client.readWriteLock("rw/upgrade", a);
        LockHandle reading = rw.readLock().acquire();
        client.readWriteLock("rw/upgrade", b).readLock().acquire();

        assertThatThrownBy(() -> rw.writeLock().acquire(Duration.ofSeconds(1)))
                .isInstanceOf(FailedPreconditionException.class).isNotInstanceOf(NotHolderException.class)
                .hasMessageContaining("holds lock 'rw/upgrade' in read mode and cannot upgrade it to write");
        assertThatThrownBy(() -> client.lock("rw/upgrade", a).tryAcquire())
                .isInstanceOf(FailedPreconditionException.class).hasMessageContaining("cannot upgrade");
        assertThat(client.describe("rw/upgrade").holders()).hasSize(2);
        assertThat(client.describe("rw/upgrade").waiters()).isEmpty();

        LockServiceGrpc.LockServiceBlockingStub raw = LockServiceGrpc.newBlockingStub(tenure.cluster().channel(0));
        assertThatThrownBy(() -> raw.downgrade(DowngradeRequest.newBuilder().setName("rw/upgrade").setLeaseId(a.id())
                .setFencingToken(reading.fencingToken() + 1).build()))
                .isInstanceOf(StatusRuntimeException.class).hasMessageContaining("FAILED_PRECONDITION").hasMessageContaining("stale");
        assertThat(raw.downgrade(DowngradeRequest.newBuilder().setName("rw/upgrade").setLeaseId(a.id())
                .setFencingToken(reading.fencingToken()).build()).getFencingToken())
                .as("a read hold downgrades again to itself").isEqualTo(reading.fencingToken());
        assertThatThrownBy(() -> raw.lock(LockRequest.newBuilder().setName("rw/bad").setLeaseId(a.id()).setModeValue(7).build()))
                .isInstanceOf(StatusRuntimeException.class).hasMessageContaining("INVALID_ARGUMENT").hasMessageContaining("mode: 7");
        a.revoke();
        b.revoke();
    }

    @Test
    void aReaderCanTryEnqueueAndTimeOut() throws Exception {
        TenureClient client = tenure.client();
        Lease writer = client.grantLease(TTL, "writer");
        Lease reader = client.grantLease(TTL, "reader");
        TenureReadWriteLock rw = client.readWriteLock("rw/phases", reader);
        LockHandle written = client.readWriteLock("rw/phases", writer).writeLock().acquire();

        assertThat(rw.readLock().tryAcquire()).isEmpty();
        assertThatThrownBy(() -> rw.readLock().acquire(Duration.ofMillis(200))).isInstanceOf(LockNotAcquiredException.class);
        QueuePlace<LockHandle> place = rw.readLock().enqueue();
        assertThat(place.ahead()).isZero();
        assertThat(client.describe("rw/phases").waiters()).extracting(LockDescription.Waiter::mode).containsExactly(LockMode.READ);
        written.release();
        LockHandle read = place.await(Duration.ofSeconds(10));
        assertThat(read.mode()).isEqualTo(LockMode.READ);
        assertThat(read.fencingToken()).isGreaterThan(written.fencingToken());
        read.release();
        writer.revoke();
        reader.revoke();
    }

    private static void awaitWaiters(TenureClient client, String name, int count) {
        Await.until("lock " + name + " to have " + count + " waiters", Duration.ofSeconds(10),
                () -> client.describe(name).waiters().size() >= count);
    }
}
