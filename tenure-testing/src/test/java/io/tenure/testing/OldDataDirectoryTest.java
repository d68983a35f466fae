package io.tenure.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenure.proto.v1.DescribeRequest;
import io.tenure.proto.v1.LeaseGrantRequest;
import io.tenure.proto.v1.LeaseTimeToLiveRequest;
import io.tenure.proto.v1.LeaseTimeToLiveResponse;
import io.tenure.proto.v1.LockRequest;
import io.tenure.proto.v1.LockResponse;
import io.tenure.proto.v1.LockServiceGrpc.LockServiceBlockingStub;
import io.tenure.proto.v1.LockState;
import io.tenure.proto.v1.StatusRequest;
import io.tenure.proto.v1.StatusResponse;
import io.tenure.proto.v1.UnlockRequest;
import io.tenure.proto.v1.UnlockResponse;
import io.tenure.proto.v1.Waiter;
import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Today's member starts on a data directory written by an earlier release and finds everything in
 * it: leases, held locks with their tokens and metadata, queued waiters, the memory of a recent
 * release, and tokens that keep growing. The directory (resources {@code old-data/2026-11-26/}, see
 * its README) was left by kill -9 with snapshots at indexes 99 and 199 and entries up to 274 only in
 * the log, so both the snapshot and the log replay after it are read.
 */
class OldDataDirectoryTest {
    private static final String RELEASE = "/old-data/2026-11-26/";
    private static final long ALICE = 1001;
    private static final long BOB = 1002;
    private static final long CAROL = 1003;

    @TempDir
    Path work;

    @Test
    void aDataDirectoryOfTheReleaseOf20261126StartsWithEveryLeaseLockWaiterAndRelease() throws Exception {
        Properties expected = expected();
        long tokenA = Long.parseLong(expected.getProperty("jobs/a.token"));
        long releasedB = Long.parseLong(expected.getProperty("jobs/b.released.token"));
        long tokenC = Long.parseLong(expected.getProperty("jobs/c.token"));
        long revision = Long.parseLong(expected.getProperty("revision"));
        long appliedIndex = Long.parseLong(expected.getProperty("applied_index"));
        // A member writes to its data directory: it starts on a copy, never on the resource.
        Path data = copyOfTheDataDirectory();

        // Member n1 of cluster "tenure" (the defaults, as the release wrote them), on free ports.
        try (TenureCluster member = TenureCluster.builder().config(c -> c.withDataDir(data)).start()) {
            LockServiceBlockingStub stub = member.blocking(0);
            StatusResponse status = stub.status(StatusRequest.getDefaultInstance());
            assertThat(status.getMemberName()).isEqualTo("n1");
            assertThat(status.getAppliedIndex()).as("the log after the last snapshot is replayed").isGreaterThanOrEqualTo(appliedIndex);
            assertThat(status.getRevision()).as("the revision").isGreaterThanOrEqualTo(revision);

            assertAlive(stub, ALICE, "alice");
            assertAlive(stub, BOB, "bob");
            assertAlive(stub, CAROL, "carol");

            LockState a = describe(stub, "jobs/a");
            assertThat(a.getHeld()).isTrue();
            assertThat(a.getLeaseId()).isEqualTo(ALICE);
            assertThat(a.getHolder()).isEqualTo("alice");
            assertThat(a.getFencingToken()).isEqualTo(tokenA);
            assertThat(a.getMetadata().toStringUtf8()).isEqualTo("batch 7");
            assertThat(a.getWaitersList()).extracting(Waiter::getLeaseId).as("jobs/a's queue, from the snapshot").containsExactly(BOB);

            LockState c = describe(stub, "jobs/c");
            assertThat(c.getHeld()).isTrue();
            assertThat(c.getLeaseId()).isEqualTo(CAROL);
            assertThat(c.getHolder()).isEqualTo("carol");
            assertThat(c.getFencingToken()).isEqualTo(tokenC);
            assertThat(c.getMetadata().toStringUtf8()).isEqualTo("after the snapshot");
            assertThat(c.getWaitersList()).extracting(Waiter::getLeaseId).as("jobs/c's queue, only in the log").containsExactly(ALICE);

            assertThat(describe(stub, "churn").getHeld()).as("churn was released each time").isFalse();

            // A retried release of jobs/b finds the replicated memory of that release: it succeeds again, handing nothing on.
            UnlockResponse again = stub.unlock(UnlockRequest.newBuilder().setKey("jobs/b").setLeaseId(ALICE)
                    .setFencingToken(releasedB).build());
            assertThat(again.getNextFencingToken()).isZero();

            long fresh = stub.leaseGrant(LeaseGrantRequest.newBuilder().setClientId("after-the-upgrade").setTtlMs(60_000).build()).getId();
            LockResponse grant = stub.lock(LockRequest.newBuilder().setName("jobs/new").setLeaseId(fresh).build());
            assertThat(grant.getAcquired()).isTrue();
            assertThat(grant.getFencingToken()).as("a new grant's token is above every token written before")
                    .isGreaterThan(tokenA).isGreaterThan(releasedB).isGreaterThan(tokenC).isGreaterThan(revision);

            // The queue goes on: alice's release hands jobs/a to bob, with a larger token still.
            UnlockResponse released = stub.unlock(UnlockRequest.newBuilder().setKey("jobs/a").setLeaseId(ALICE)
                    .setFencingToken(tokenA).build());
            assertThat(released.getNextFencingToken()).isGreaterThan(tokenA).isGreaterThan(grant.getFencingToken());
            LockState handedOver = describe(stub, "jobs/a");
            assertThat(handedOver.getLeaseId()).isEqualTo(BOB);
            assertThat(handedOver.getHolder()).isEqualTo("bob");
            assertThat(handedOver.getFencingToken()).isEqualTo(released.getNextFencingToken());
        }
    }

    private static void assertAlive(LockServiceBlockingStub stub, long lease, String clientId) {
        LeaseTimeToLiveResponse ttl = stub.leaseTimeToLive(LeaseTimeToLiveRequest.newBuilder().setId(lease).setKeys(true).build());
        assertThat(ttl.getTtlMs()).as("lease " + lease + " is alive").isPositive();
        assertThat(ttl.getClientId()).as("lease " + lease + "'s client").isEqualTo(clientId);
    }

    private static LockState describe(LockServiceBlockingStub stub, String name) {
        return stub.describe(DescribeRequest.newBuilder().setName(name).build()).getLock();
    }

    private static Properties expected() throws IOException {
        Properties expected = new Properties();
        try (InputStream in = OldDataDirectoryTest.class.getResourceAsStream(RELEASE + "expected.properties")) {
            assertThat(in).as("expected.properties of the release").isNotNull();
            expected.load(in);
        }
        return expected;
    }

    /** Every file of the release's data directory, copied into this test's temporary directory. */
    private Path copyOfTheDataDirectory() throws IOException, URISyntaxException {
        Path source = Path.of(OldDataDirectoryTest.class.getResource(RELEASE + "data").toURI());
        Path copy = work.resolve("data");
        try (Stream<Path> files = Files.walk(source)) {
            for (Path file : files.toList()) {
                Files.copy(file, copy.resolve(source.relativize(file).toString()));
            }
        }
        assertThat(Files.size(copy.resolve("raft/940f7e7b-fc72-3274-9e10-5952badeb063/current/log_inprogress_0")))
                .as("the whole log segment").isEqualTo(65_536);
        return copy;
    }
}
