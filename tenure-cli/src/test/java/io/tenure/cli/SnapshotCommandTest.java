package io.tenure.cli;

import static io.tenure.cli.ClientCommandsTest.field;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.tenure.client.LockDescription;
import io.tenure.client.TenureClient;
import io.tenure.proto.v1.LeaseGrantRequest;
import io.tenure.proto.v1.LeaseSummary;
import io.tenure.proto.v1.LockRequest;
import io.tenure.proto.v1.LockResponse;
import io.tenure.proto.v1.LockServiceGrpc;
import io.tenure.server.TenureServer;
import io.tenure.testing.Waiters;
import io.tenure.testing.TenureCluster;
import io.tenure.testing.TenureExtension;
import java.io.IOException;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code tenure snapshot save} from a real member in this JVM, and {@code tenure snapshot restore}
 * into a directory a second member then starts from (as another member of another cluster, so the
 * two can share this JVM); the process-level test is tenure-it's SnapshotBackupTest.
 */
class SnapshotCommandTest {
    @TempDir
    Path dir;
    @RegisterExtension
    final TenureExtension tenure = TenureExtension.members(1);
    TenureServer server;
    ManagedChannel channel;
    String endpoint;
    final StringWriter out = new StringWriter();
    final StringWriter err = new StringWriter();

    /** Each test has a member of its own; the extension stops it and its channel. */
    @BeforeEach
    void connect() {
        server = tenure.cluster().server(0);
        endpoint = tenure.cluster().endpoint(0);
        channel = tenure.cluster().channel(0);
    }

    int run(String... args) {
        return ClientCommandsTest.runWith(Map.of("TENURE_ENDPOINTS", endpoint), out, err, args);
    }

    long lease(String clientId) {
        return LockServiceGrpc.newBlockingStub(channel).leaseGrant(LeaseGrantRequest.newBuilder().setClientId(clientId)
                .setTtlMs(120_000).build()).getId();
    }

    LockResponse lock(String name, long lease) {
        return LockServiceGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS)
                .lock(LockRequest.newBuilder().setName(name).setLeaseId(lease).setMetadata(ByteString.copyFromUtf8("m-" + name))
                        .setTimeoutMs(0).build());
    }

    void queue(TenureClient client, String name, long lease) {
        Waiters.queue(channel, name, lease, Duration.ofSeconds(30));
    }

    @Test
    void aSavedBackupRestoresIntoADirectoryAMemberStartsFromWithTheLocksWaitersLeasesAndLargerTokens() throws Exception {
        long alice = lease("alice");
        long bob = lease("bob");
        long carol = lease("carol");
        long idle = lease("idle");
        long tokenA = lock("jobs/a", alice).getFencingToken();
        long tokenB = lock("jobs/b", bob).getFencingToken();
        List<LockDescription> before;
        try (TenureClient client = TenureClient.connect(List.of(endpoint))) {
            queue(client, "jobs/a", bob);
            queue(client, "jobs/a", carol);
            before = client.locks("", 100);
        }
        Path backup = dir.resolve("backups/tenure.snap");

        assertThat(run("snapshot", "save", backup.toString())).as(err.toString()).isZero();

        long revision = Long.parseLong(field(out.toString(), "revision"));
        assertThat(revision).isGreaterThanOrEqualTo(Math.max(tokenA, tokenB));
        assertThat(Long.parseLong(field(out.toString(), "applied_index"))).isBetween(revision >> 16, server.member().commitIndex());
        assertThat(field(out.toString(), "size")).isEqualTo(Long.toString(Files.size(backup)));
        assertThat(field(out.toString(), "sha256")).isEqualTo(sha256(backup));
        assertThat(field(out.toString(), "member")).isEqualTo("n1");
        assertThat(field(out.toString(), "file")).isEqualTo(backup.toAbsolutePath().normalize().toString());
        try (Stream<Path> files = Files.list(backup.getParent())) {
            assertThat(files).as("no temporary file left").containsExactly(backup);
        }

        Path restored = dir.resolve("restored");
        assertThat(run("snapshot", "restore", backup.toString(), "--data-dir", restored.toString(),
                "--id", "r1", "--cluster", "recovered")).as(err.toString()).isZero();
        assertThat(field(out.toString(), "revision")).isEqualTo(Long.toString(revision));
        assertThat(field(out.toString(), "leases")).isEqualTo("4");
        assertThat(field(out.toString(), "locks")).isEqualTo("2");
        assertThat(field(out.toString(), "waiters")).isEqualTo("2");
        assertThat(err.toString()).contains("tenure server --data-dir " + restored + " --id r1 --cluster recovered");

        try (TenureCluster second = TenureCluster.builder()
                .config(c -> c.withDataDir(restored).withMemberName("r1").withClusterName("recovered")).start();
             TenureClient client = TenureClient.connect(second.endpoints())) {
            List<LockDescription> after = client.locks("", 100);
            assertThat(after).hasSize(2);
            for (int i = 0; i < 2; i++) {
                LockDescription was = before.get(i);
                LockDescription is = after.get(i);
                assertThat(is.key()).isEqualTo(was.key());
                assertThat(is.holder()).isEqualTo(was.holder());
                assertThat(is.leaseId()).isEqualTo(was.leaseId());
                assertThat(is.fencingToken()).isEqualTo(was.fencingToken());
                assertThat(is.metadata()).isEqualTo(was.metadata());
                assertThat(is.waiters()).isEqualTo(was.waiters());
            }
            assertThat(client.leases()).extracting(LeaseSummary::getId)
                    .containsExactlyInAnyOrder(alice, bob, carol, idle);

            long fresh = client.grantDetachedLease(Duration.ofSeconds(60), "after-restore");
            LockResponse next = second.blocking(0).lock(LockRequest.newBuilder().setName("jobs/new").setLeaseId(fresh).build());
            assertThat(next.getAcquired()).isTrue();
            assertThat(next.getFencingToken()).as("above every token and revision in the backup")
                    .isGreaterThan(revision).isGreaterThan(tokenA).isGreaterThan(tokenB);
            // The queue continues: revoking the holder hands jobs/a to the first waiter, with a larger token still.
            client.revokeLease(alice);
            LockDescription handedOver = client.describe("jobs/a");
            assertThat(handedOver.holder()).isEqualTo("bob");
            assertThat(handedOver.fencingToken()).isGreaterThan(next.getFencingToken());
        }
    }

    @Test
    void restoreRefusesADamagedBackupANonEmptyDirectoryAndBadNames() throws Exception {
        lock("x", lease("someone"));
        Path backup = dir.resolve("good.snap");
        assertThat(run("snapshot", "save", backup.toString())).as(err.toString()).isZero();
        byte[] good = Files.readAllBytes(backup);

        byte[] flipped = good.clone();
        flipped[good.length / 2] ^= 0x40;
        Path corrupt = Files.write(dir.resolve("corrupt.snap"), flipped);
        assertThat(run("snapshot", "restore", corrupt.toString(), "--data-dir", dir.resolve("r-corrupt").toString())).isEqualTo(1);
        assertThat(err.toString()).contains("is not a usable Tenure snapshot").contains("corrupt");
        assertThat(dir.resolve("r-corrupt")).doesNotExist();

        Path truncated = Files.write(dir.resolve("truncated.snap"), java.util.Arrays.copyOf(good, good.length - 3));
        assertThat(run("snapshot", "restore", truncated.toString(), "--data-dir", dir.resolve("r-truncated").toString())).isEqualTo(1);
        assertThat(err.toString()).contains("truncated");

        Path notASnapshot = Files.writeString(dir.resolve("text.snap"), "data-dir = /x\n");
        assertThat(run("snapshot", "restore", notASnapshot.toString(), "--data-dir", dir.resolve("r-text").toString())).isEqualTo(1);
        assertThat(err.toString()).contains("not a Tenure snapshot");

        assertThat(run("snapshot", "restore", dir.resolve("missing.snap").toString(), "--data-dir", dir.resolve("r-missing").toString()))
                .isEqualTo(1);
        assertThat(err.toString()).contains("does not exist");

        Path occupied = Files.createDirectories(dir.resolve("occupied"));
        Files.writeString(occupied.resolve("keep.txt"), "mine");
        assertThat(run("snapshot", "restore", backup.toString(), "--data-dir", occupied.toString())).isEqualTo(1);
        assertThat(err.toString()).contains("is not empty");
        try (Stream<Path> files = Files.list(occupied)) {
            assertThat(files).containsExactly(occupied.resolve("keep.txt"));
        }
        assertThat(Files.readString(occupied.resolve("keep.txt"))).isEqualTo("mine");

        Path empty = Files.createDirectories(dir.resolve("empty"));
        assertThat(run("snapshot", "restore", backup.toString(), "--data-dir", empty.toString())).as(err.toString()).isZero();
        assertThat(empty.resolve("member.properties")).exists();

        assertThat(run("snapshot", "restore", backup.toString())).isEqualTo(2);
        assertThat(err.toString()).contains("--data-dir");
        assertThat(run("snapshot", "restore", backup.toString(), "--data-dir", dir.resolve("r-bad-id").toString(), "--id", "bad id"))
                .isEqualTo(2);
        assertThat(err.toString()).contains("Invalid value for option '--id'");
        assertThat(dir.resolve("r-bad-id")).doesNotExist();
    }

    @Test
    void saveWithNoMemberReachableFailsAndLeavesNoFile() {
        Path backup = dir.resolve("never.snap");

        int exit = ClientCommandsTest.runWith(Map.of(), out, err, "snapshot", "save", backup.toString(),
                "--endpoints", "127.0.0.1:1", "--request-timeout", "300ms");

        assertThat(exit).isEqualTo(1);
        assertThat(err.toString()).contains("no member could send a backup").contains("127.0.0.1:1");
        assertThat(backup).doesNotExist();
        try (Stream<Path> files = Files.list(dir)) {
            assertThat(files.map(p -> p.getFileName().toString())).noneMatch(name -> name.contains("never.snap"));
        } catch (IOException e) {
            throw new AssertionError(e);
        }
        assertThat(ClientCommandsTest.runWith(Map.of(), out, err, "snapshot", "save", backup.toString(), "--endpoints", "nope"))
                .isEqualTo(2);
        assertThat(err.toString()).contains("--endpoints");
    }

    private static String sha256(Path file) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
    }
}
