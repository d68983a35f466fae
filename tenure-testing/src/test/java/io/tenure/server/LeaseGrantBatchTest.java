package io.tenure.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.tenure.client.Lease;
import io.tenure.client.TenureClient;
import io.tenure.proto.v1.LeaseGrantBatchRequest;
import io.tenure.proto.v1.LeaseGrantBatchResponse;
import io.tenure.proto.v1.LeaseGrantRequest;
import io.tenure.proto.v1.LeaseTimeToLiveRequest;
import io.tenure.testing.TenureCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Grants asked for together: one call, each grant answered on its own, as a LeaseGrant of it alone would be. */
class LeaseGrantBatchTest {
    @TempDir
    Path dataDir;
    TenureCluster member;

    @BeforeEach
    void start() {
        member = TenureCluster.builder().dataDir(dataDir)
                .config(config -> config.withLimits(ServerLimits.defaults().withMaxLeasesPerClient(3))).start();
    }

    @AfterEach
    void stop() {
        member.close();
    }

    @Test
    void eachGrantOfABatchIsAnsweredOnItsOwnInOrder() {
        long taken = member.blocking(0).leaseGrant(LeaseGrantRequest.newBuilder().setId(77).setClientId("a").setTtlMs(5_000).build()).getId();
        LeaseGrantBatchResponse answer = member.blocking(0).leaseGrantBatch(LeaseGrantBatchRequest.newBuilder()
                .addGrants(LeaseGrantRequest.newBuilder().setId(101).setClientId("b").setTtlMs(5_000))
                .addGrants(LeaseGrantRequest.newBuilder().setId(102).setClientId("b").setTtlMs(0))
                .addGrants(LeaseGrantRequest.newBuilder().setId(taken).setClientId("someone-else").setTtlMs(5_000))
                .addGrants(LeaseGrantRequest.newBuilder().setId(103).setClientId("b").setTtl(6))
                .addGrants(LeaseGrantRequest.newBuilder().setId(104).setClientId("b").setTtlMs(5_000))
                .addGrants(LeaseGrantRequest.newBuilder().setId(105).setClientId("b").setTtlMs(5_000))
                .addGrants(LeaseGrantRequest.newBuilder().setId(101).setClientId("b").setTtlMs(5_000))
                .build());

        assertThat(answer.getResultsCount()).isEqualTo(7);
        assertThat(answer.getResults(0).getGranted().getId()).isEqualTo(101);
        assertThat(answer.getResults(0).getGranted().getTtlMs()).isEqualTo(5_000);
        assertThat(answer.getResults(1).getErrorCode()).isEqualTo("INVALID_ARGUMENT");
        assertThat(answer.getResults(1).getErrorMessage()).contains("ttl");
        assertThat(answer.getResults(2).getErrorCode()).isEqualTo("ALREADY_EXISTS");
        assertThat(answer.getResults(3).getGranted().getTtlMs()).isEqualTo(6_000);
        assertThat(answer.getResults(4).getGranted().getId()).isEqualTo(104);
        assertThat(answer.getResults(5).getErrorCode()).as("a fourth lease of client b is over its limit of 3")
                .isEqualTo("RESOURCE_EXHAUSTED");
        assertThat(answer.getResults(5).getErrorMessage()).contains("max-leases-per-client");
        assertThat(answer.getResults(6).getGranted().getId()).as("a retried grant in the same batch is the same lease").isEqualTo(101);
        for (long id : new long[] {101, 103, 104}) {
            assertThat(member.blocking(0).leaseTimeToLive(LeaseTimeToLiveRequest.newBuilder().setId(id).build()).getTtlMs()).isPositive();
        }
        assertThat(member.blocking(0).leaseTimeToLive(LeaseTimeToLiveRequest.newBuilder().setId(105).build()).getTtl()).isEqualTo(-1);
    }

    @Test
    void aBatchOverTheLimitIsRefusedWhole() {
        LeaseGrantBatchRequest.Builder tooMany = LeaseGrantBatchRequest.newBuilder();
        for (int i = 0; i < io.tenure.core.Limits.MAX_BATCH + 1; i++) {
            tooMany.addGrants(LeaseGrantRequest.newBuilder().setTtlMs(5_000));
        }

        assertThatThrownBy(() -> member.blocking(0).leaseGrantBatch(tooMany.build()))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                    assertThat(e.getStatus().getDescription()).contains("grants: at most 10000");
                });
    }

    @Test
    void manyGrantsAskedForAtOnceThroughTheSdkAreEachAGrantedLease() throws Exception {
        try (TenureClient client = member.newClient()) {
            List<CompletableFuture<Lease>> grants = new ArrayList<>();
            for (int i = 0; i < 600; i++) {
                grants.add(client.grantLeaseAsync(Duration.ofSeconds(10), "many-" + (i % 200)));
            }
            Set<Long> ids = new HashSet<>();
            for (CompletableFuture<Lease> grant : grants) {
                Lease lease = grant.get(30, TimeUnit.SECONDS);
                assertThat(lease.isValid()).isTrue();
                ids.add(lease.id());
            }
            assertThat(ids).hasSize(600);
            assertThat(client.leases()).hasSizeGreaterThanOrEqualTo(600);
        }
    }
}
