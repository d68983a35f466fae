package io.tenure.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.tenure.proto.v1.LeaseGrantRequest;
import io.tenure.proto.v1.LockRequest;
import io.tenure.proto.v1.LockResponse;
import io.tenure.proto.v1.LockServiceGrpc;
import io.tenure.proto.v1.StatusRequest;
import io.tenure.proto.v1.UnlockRequest;
import io.tenure.testing.Await;
import io.tenure.testing.TenureCluster;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Each limit refuses with RESOURCE_EXHAUSTED naming it, and the member goes on serving others. */
class LimitsTest {
    @TempDir
    Path dir;

    private static TenureCluster start(Path dir, ServerLimits limits) {
        return TenureCluster.builder().dataDir(dir).config(c -> c.withLimits(limits)).start();
    }

    private static long grantLease(TenureCluster m, String clientId, long ttlMillis) {
        return m.blocking(0).leaseGrant(LeaseGrantRequest.newBuilder().setClientId(clientId).setTtlMs(ttlMillis).build()).getId();
    }

    @Test
    void leasesPerClientLocksPerClientAndWaitersPerLock() throws Exception {
        ServerLimits limits = ServerLimits.defaults().withMaxLeasesPerClient(2).withMaxLocksPerClient(2).withMaxWaitersPerLock(1);
        try (TenureCluster m = start(dir, limits)) {
            long a1 = grantLease(m, "a", 30_000);
            long a2 = grantLease(m, "a", 30_000);
            assertRefused(() -> grantLease(m, "a", 30_000), "max-leases-per-client", "client id 'a'");
            long b = grantLease(m, "b", 30_000); // another client is not affected

            lock(m, "k1", a1, 0);
            lock(m, "k2", a1, 0);
            assertRefused(() -> lock(m, "k3", a2, 0), "max-locks-per-client", "client id 'a'");
            assertThat(lock(m, "k1", a1, 0).getAcquired()).as("a retry of a held lock is never refused").isTrue();

            long c = grantLease(m, "c", 30_000);
            var waiting = m.async(0);
            waiting.lock(LockRequest.newBuilder().setName("k1").setLeaseId(b).setTimeoutMs(-1).build(), new io.grpc.stub.StreamObserver<>() {
                public void onNext(LockResponse r) { }
                public void onError(Throwable t) { }
                public void onCompleted() { }
            });
            Await.until("b waits for k1", java.time.Duration.ofSeconds(10), () -> m.server(0).member().locks().describe("k1").waiters().size() == 1);
            assertRefused(() -> lock(m, "k1", c, 5_000), "max-waiters-per-lock", "lock 'k1'");
            assertThat(lock(m, "k1", c, 0).getAcquired()).as("a try without waiting is not a waiter").isFalse();

            // Freed capacity is usable again, and the member serves everyone throughout.
            m.blocking(0).unlock(UnlockRequest.newBuilder().setKey("k2").setLeaseId(a1)
                    .setFencingToken(m.server(0).member().locks().describe("k2").fencingToken()).build());
            assertThat(lock(m, "k3", a2, 0).getAcquired()).isTrue();
            assertThat(m.blocking(0).status(StatusRequest.getDefaultInstance()).getLeader()).isEqualTo("n1");
        }
    }

    @Test
    void locksPerLeaseCountEveryKindAndSpareTheLeasesOfTheSameClient() throws Exception {
        try (TenureCluster m = start(dir, ServerLimits.defaults().withMaxLocksPerLease(2))) {
            long a1 = grantLease(m, "a", 30_000);
            long a2 = grantLease(m, "a", 30_000);
            lock(m, "k1", a1, 0);
            io.tenure.proto.v1.SemaphoreServiceGrpc.newBlockingStub(m.blocking(0).getChannel()).acquire(
                    io.tenure.proto.v1.SemaphoreAcquireRequest.newBuilder().setName("pool").setLeaseId(a1).setLimit(3).setPermits(1).build());

            assertRefused(() -> lock(m, "k2", a1, 0), "max-locks-per-lease", "lease " + a1 + " already holds or waits for 2");
            assertThat(lock(m, "k1", a1, 0).getAcquired()).as("a retry of a held lock is never refused").isTrue();
            assertThat(lock(m, "k2", a2, 0).getAcquired()).as("another lease of the same client").isTrue();
        }
    }

    @Test
    void connectionsBeyondTheLimitAreToldWhy() throws Exception {
        try (TenureCluster m = start(dir, ServerLimits.defaults().withMaxConnections(1))) {
            assertThat(m.blocking(0).status(StatusRequest.getDefaultInstance()).getLeader()).isEqualTo("n1");
            ManagedChannel second = NettyChannelBuilder.forAddress("127.0.0.1", m.server(0).clientPort()).usePlaintext().build();
            try {
                assertThatThrownBy(() -> LockServiceGrpc.newBlockingStub(second).withDeadlineAfter(10, TimeUnit.SECONDS)
                        .status(StatusRequest.getDefaultInstance()))
                        .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
                            assertThat(e.getStatus().getDescription()).contains("--max-connections").contains("1 client connections");
                        });
                assertThat(m.blocking(0).status(StatusRequest.getDefaultInstance()).getLeader()).as("the first connection is still served").isEqualTo("n1");
            } finally {
                second.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void overTheRateAMemberRefusesCallsWithTheLimitsName() throws Exception {
        try (TenureCluster m = start(dir, ServerLimits.defaults().withMaxRequestsPerSecond(5))) {
            StatusRuntimeException refused = null;
            for (int i = 0; i < 50 && refused == null; i++) {
                try {
                    m.blocking(0).status(StatusRequest.getDefaultInstance());
                } catch (StatusRuntimeException e) {
                    refused = e;
                }
            }
            assertThat(refused).isNotNull();
            assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
            assertThat(refused.getStatus().getDescription()).contains("--max-requests-per-second");
        }
    }

    private static LockResponse lock(TenureCluster m, String name, long lease, long timeoutMs) {
        return m.blocking(0).lock(LockRequest.newBuilder().setName(name).setLeaseId(lease).setTimeoutMs(timeoutMs).build());
    }

    private static void assertRefused(org.assertj.core.api.ThrowableAssert.ThrowingCallable call, String limit, String names) {
        assertThatThrownBy(call).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
            assertThat(e.getStatus().getDescription()).contains("--" + limit).contains(names);
        });
    }
}
