package io.tenure.cli;

import static io.tenure.cli.ClientCommandsTest.field;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.tenure.client.LockDescription;
import io.tenure.client.TenureClient;
import io.tenure.proto.v1.LeaseGrantRequest;
import io.tenure.proto.v1.LeaseSummary;
import io.tenure.proto.v1.LockRequest;
import io.tenure.proto.v1.LockResponse;
import io.tenure.proto.v1.LockServiceGrpc;
import io.tenure.server.RaftEngine;
import io.tenure.server.ServerConfig;
import io.tenure.server.TenureServer;
import io.tenure.testing.FreePorts;
import io.tenure.testing.Waiters;
import io.tenure.testing.TenureCluster;
import io.tenure.testing.TenureExtension;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

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

    /** {@code --raft-engine ENGINE} for restore, or none (the default engine) when {@code engine} is empty. */
    static List<String> engineArgs(String engine) {
        return engine.isEmpty() ? List.of() : List.of("--raft-engine", engine);
    }

    /** The engine that {@code engineArgs(engine)} names. */
    static RaftEngine engineOf(String engine) {
        return engine.isEmpty() ? io.tenure.server.SnapshotRestore.DEFAULT_ENGINE : RaftEngine.valueOf(engine.toUpperCase(Locale.ROOT));
    }

    @ParameterizedTest(name = "--raft-engine ''{0}''")
    @ValueSource(strings = {"", "jraft", "ratis"})
    void aSavedBackupRestoresIntoADirectoryAMemberStartsFromWithTheLocksWaitersLeasesAndLargerTokens(String engineName) throws Exception {
        RaftEngine engine = engineOf(engineName);
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
        long appliedIndex = Long.parseLong(field(out.toString(), "applied_index"));
        assertThat(appliedIndex).isBetween(revision >> 16, server.member().commitIndex());
        assertThat(field(out.toString(), "size")).isEqualTo(Long.toString(Files.size(backup)));
        assertThat(field(out.toString(), "sha256")).isEqualTo(sha256(backup));
        assertThat(field(out.toString(), "member")).isEqualTo("n1");
        assertThat(field(out.toString(), "file")).isEqualTo(backup.toAbsolutePath().normalize().toString());
        try (Stream<Path> files = Files.list(backup.getParent())) {
            assertThat(files).as("no temporary file left").containsExactly(backup);
        }

        Path restored = dir.resolve("restored");
        List<String> restore = new java.util.ArrayList<>(List.of("snapshot", "restore", backup.toString(), "--data-dir",
                restored.toString(), "--id", "r1", "--cluster", "recovered"));
        restore.addAll(engineArgs(engineName));
        assertThat(run(restore.toArray(String[]::new))).as(err.toString()).isZero();
        assertThat(field(out.toString(), "revision")).isEqualTo(Long.toString(revision));
        assertThat(field(out.toString(), "leases")).isEqualTo("4");
        assertThat(field(out.toString(), "locks")).isEqualTo("2");
        assertThat(field(out.toString(), "waiters")).isEqualTo("2");
        String flag = engine.name().toLowerCase(Locale.ROOT);
        assertThat(field(out.toString(), "raft_engine")).isEqualTo(flag);
        long index = Long.parseLong(field(out.toString(), "log_continues_after_index"));
        // The backup's own last applied position: its last command, at or before the index it was saved at.
        assertThat(index).as("the log continues after the backup's last command").isBetween(revision >>> 16, appliedIndex);
        assertThat(err.toString()).contains("tenure server --data-dir " + restored + " --id r1 --cluster recovered --raft-engine " + flag);
        assertThat(identity(restored)).containsEntry("engine", flag).containsEntry("initialized", "true")
                .containsEntry("member", "r1").containsEntry("cluster", "recovered");
        if (engine == RaftEngine.JRAFT) {
            assertJRaftLayout(restored, backup, index);
        } else {
            assertThat(restored.resolve("jraft")).doesNotExist();
            assertThat(restored.resolve("raft")).isDirectory();
        }

        try (TenureCluster second = TenureCluster.builder()
                .config(c -> c.withDataDir(restored).withMemberName("r1").withClusterName("recovered").withRaftEngine(engine)).start();
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

        assertThat(run("snapshot", "restore", backup.toString(), "--data-dir", occupied.toString(), "--raft-engine", "jraft"))
                .isEqualTo(1);
        assertThat(err.toString()).contains("is not empty");
        try (Stream<Path> files = Files.list(occupied)) {
            assertThat(files).containsExactly(occupied.resolve("keep.txt"));
        }

        assertThat(run("snapshot", "restore", backup.toString(), "--data-dir", dir.resolve("r-bad-engine").toString(),
                "--raft-engine", "etcd")).isEqualTo(2);
        assertThat(err.toString()).contains("Invalid value for option '--raft-engine'").contains("'etcd'")
                .contains("jraft, ratis or auto");
        assertThat(dir.resolve("r-bad-engine")).doesNotExist();
        Path corruptJRaft = dir.resolve("r-corrupt-jraft");
        assertThat(run("snapshot", "restore", corrupt.toString(), "--data-dir", corruptJRaft.toString(), "--raft-engine", "jraft"))
                .isEqualTo(1);
        assertThat(err.toString()).contains("is not a usable Tenure snapshot");
        assertThat(corruptJRaft).doesNotExist();

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

    /** The data directory's {@code member.properties}. */
    static Map<String, String> identity(Path dataDir) throws IOException {
        Properties p = new Properties();
        try (var in = Files.newInputStream(dataDir.resolve("member.properties"))) {
            p.load(in);
        }
        Map<String, String> m = new java.util.HashMap<>();
        p.forEach((k, v) -> m.put((String) k, (String) v));
        return m;
    }

    /**
     * A restored JRaft directory: {@code jraft/} alone, its term and vote, and one snapshot at
     * {@code index} holding the backup byte for byte, its SHA-256 and JRaft's own metadata.
     */
    static void assertJRaftLayout(Path restored, Path backup, long index) throws Exception {
        try (Stream<Path> files = Files.list(restored)) {
            assertThat(files.map(p -> p.getFileName().toString())).containsExactlyInAnyOrder("member.properties", "jraft");
        }
        assertThat(restored.resolve("jraft/meta/raft_meta")).isRegularFile();
        Path snapshots = restored.resolve("jraft/snapshot");
        try (Stream<Path> files = Files.list(snapshots)) {
            assertThat(files.map(p -> p.getFileName().toString())).containsExactly("snapshot_" + index);
        }
        Path snapshot = snapshots.resolve("snapshot_" + index);
        try (Stream<Path> files = Files.list(snapshot)) {
            assertThat(files.map(p -> p.getFileName().toString()))
                    .containsExactlyInAnyOrder("tenure.snapshot", "tenure.snapshot.sha256", "__raft_snapshot_meta");
        }
        assertThat(Files.readAllBytes(snapshot.resolve("tenure.snapshot"))).isEqualTo(Files.readAllBytes(backup));
        assertThat(Files.readString(snapshot.resolve("tenure.snapshot.sha256")).trim()).isEqualTo(sha256(backup));
    }

    @Test
    void aJRaftRestoreStartsWithPeersNamingOnlyItselfAndRefusesPeersNamingOthersUntouched() throws Exception {
        long holder = lease("holder");
        long token = lock("jobs/x", holder).getFencingToken();
        Path backup = dir.resolve("b.snap");
        assertThat(run("snapshot", "save", backup.toString())).as(err.toString()).isZero();

        // --peers naming another member: refused, and the directory stays as restore left it.
        Path refused = dir.resolve("refused");
        assertThat(run("snapshot", "restore", backup.toString(), "--data-dir", refused.toString(), "--id", "r1",
                "--cluster", "recovered", "--raft-engine", "jraft")).as(err.toString()).isZero();
        long index = Long.parseLong(field(out.toString(), "log_continues_after_index"));
        int[] ports = FreePorts.take(2);
        Map<String, String> others = new java.util.LinkedHashMap<>();
        others.put("r1", "127.0.0.1:" + ports[0]);
        others.put("r2", "127.0.0.1:" + ports[1]);
        assertThatThrownBy(() -> TenureCluster.builder().config(c -> c.withDataDir(refused).withMemberName("r1")
                .withClusterName("recovered").withRaftEngine(RaftEngine.JRAFT).withPeers(others)).start())
                .isInstanceOf(UncheckedIOException.class).cause().isInstanceOf(IOException.class)
                .hasMessageContaining("holds a restored backup").hasMessageContaining("--peers naming only itself");
        assertJRaftSnapshot(refused, backup, index);

        // --peers naming only itself: it becomes the only member, with the backup's state.
        Map<String, String> itself = Map.of("r1", "127.0.0.1:" + ports[0]);
        try (TenureCluster alone = TenureCluster.builder().config(c -> c.withDataDir(refused).withMemberName("r1")
                .withClusterName("recovered").withRaftEngine(RaftEngine.JRAFT).withPeers(itself)).start();
             TenureClient client = TenureClient.connect(alone.endpoints())) {
            assertThat(client.describe("jobs/x").leaseId()).isEqualTo(holder);
            assertThat(alone.server(0).member().members()).extracting(io.tenure.proto.v1.Member::getName).containsExactly("r1");
            long fresh = client.grantDetachedLease(Duration.ofSeconds(60), "after-restore");
            LockResponse next = alone.blocking(0).lock(LockRequest.newBuilder().setName("jobs/y").setLeaseId(fresh).build());
            assertThat(next.getFencingToken()).isGreaterThan(token).isGreaterThan(index << 16);
        }
        // Restarted, it takes its configuration from its log: itself.
        try (TenureCluster again = TenureCluster.builder().config(c -> c.withDataDir(refused).withMemberName("r1")
                .withClusterName("recovered").withRaftEngine(RaftEngine.JRAFT).withPeers(itself)).start();
             TenureClient client = TenureClient.connect(again.endpoints())) {
            assertThat(client.describe("jobs/y").held()).isTrue();
        }
    }

    @Test
    void aJRaftRestoreOfAStateThatAppliedNothingPlacesItAtIndexOne() throws Exception {
        // JRaft has no snapshot at index 0.
        Path empty = dir.resolve("empty.snap");
        try (var out = Files.newOutputStream(empty)) {
            new io.tenure.core.TenureState().writeSnapshot(out);
        }
        Path restored = dir.resolve("from-empty");
        assertThat(run("snapshot", "restore", empty.toString(), "--data-dir", restored.toString(), "--id", "r1",
                "--cluster", "recovered", "--raft-engine", "jraft")).as(err.toString()).isZero();
        assertThat(field(out.toString(), "log_continues_after_index")).isEqualTo("1");
        assertJRaftLayout(restored, empty, 1);
        try (TenureCluster member = TenureCluster.builder().config(c -> c.withDataDir(restored).withMemberName("r1")
                .withClusterName("recovered").withRaftEngine(RaftEngine.JRAFT)).start();
             TenureClient client = TenureClient.connect(member.endpoints())) {
            long lease = client.grantDetachedLease(Duration.ofSeconds(60), "first");
            assertThat(member.blocking(0).lock(LockRequest.newBuilder().setName("a").setLeaseId(lease).build()).getFencingToken())
                    .isGreaterThan(1L << 16);
        }
    }

    /** The restored snapshot at {@code index} is there, unchanged. */
    private static void assertJRaftSnapshot(Path restored, Path backup, long index) throws Exception {
        Path snapshot = restored.resolve("jraft/snapshot/snapshot_" + index);
        assertThat(Files.readAllBytes(snapshot.resolve("tenure.snapshot"))).isEqualTo(Files.readAllBytes(backup));
        assertThat(Files.readString(snapshot.resolve("tenure.snapshot.sha256")).trim()).isEqualTo(sha256(backup));
    }

    private static String sha256(Path file) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
    }
}
