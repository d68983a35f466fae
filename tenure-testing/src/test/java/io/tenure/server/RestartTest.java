package io.tenure.server;

import io.tenure.core.lock.LockView;
import io.tenure.proto.v1.LeaseGrantRequest;
import io.tenure.proto.v1.LeaseTimeToLiveRequest;
import io.tenure.proto.v1.LockRequest;
import io.tenure.proto.v1.LockResponse;
import io.tenure.testing.TenureCluster;
import io.tenure.testing.Waiters;
import org.assertj.core.api.AbstractThrowableAssert;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A member restarted on its data directory: from snapshot plus log, and refusing a damaged one. */
class RestartTest {
    @TempDir
    Path dataDir;

    /** One member whose data directory is {@code dataDir} itself, taking a snapshot every 100 entries. */
    private UnaryOperator<ServerConfig> config() {
        return c -> c.withDataDir(dataDir).withSnapshotEvery(100);
    }

    /** As {@link #config()}, with the server's default snapshot threshold. */
    private UnaryOperator<ServerConfig> plain() {
        return c -> c.withDataDir(dataDir);
    }

    private static TenureCluster start(UnaryOperator<ServerConfig> config) {
        return TenureCluster.builder().config(config).start();
    }

    /** A start refused with an {@link IOException}, which the cluster hands on as the cause. */
    private static AbstractThrowableAssert<?, ? extends Throwable> assertStartRefused(UnaryOperator<ServerConfig> config) {
        return assertThatThrownBy(() -> start(config)).isInstanceOf(UncheckedIOException.class)
                .cause().isInstanceOf(IOException.class);
    }

    private static long grantLease(TenureCluster m, String clientId, long ttlMillis) {
        return m.blocking(0).leaseGrant(LeaseGrantRequest.newBuilder().setClientId(clientId).setTtlMs(ttlMillis).build()).getId();
    }

    /** Fills the member with 150 held locks (a snapshot at 100 entries) and one queued waiter. */
    private long fill(TenureCluster m, long holder, long waiter) {
        long maxToken = 0;
        for (int i = 0; i < 150; i++) {
            LockResponse r = m.blocking(0).lock(LockRequest.newBuilder().setName("key-" + i).setLeaseId(holder).build());
            maxToken = Math.max(maxToken, r.getFencingToken());
        }
        Waiters.queue(m.channel(0), "key-0", waiter, java.time.Duration.ofSeconds(10));
        return maxToken;
    }

    @Test
    void restartRestoresLocksLeasesAndQueuesFromSnapshotAndLog() throws Exception {
        long holder;
        long waiter;
        long maxToken;
        LockView before;
        try (TenureCluster m = start(config())) {
            holder = grantLease(m, "holder", 120_000);
            waiter = grantLease(m, "waiter", 120_000);
            maxToken = fill(m, holder, waiter);
            before = m.server(0).member().locks().describe("key-77");
        }
        assertThat(snapshots()).as("a snapshot was taken past the threshold").isNotEmpty();

        try (TenureCluster m = start(config())) {
            LockView after = m.server(0).member().locks().describe("key-77");
            assertThat(after.leaseId()).isEqualTo(holder);
            assertThat(after.fencingToken()).isEqualTo(before.fencingToken());
            assertThat(m.server(0).member().locks().describe("key-0").waiters())
                    .extracting(LockView.Waiter::leaseId).containsExactly(waiter);
            assertThat(m.blocking(0).leaseTimeToLive(LeaseTimeToLiveRequest.newBuilder().setId(holder).build()).getTtlMs())
                    .as("a restarted member counts the TTL from its restart").isGreaterThan(100_000);
            long fresh = grantLease(m, "fresh", 60_000);
            LockResponse next = m.blocking(0).lock(LockRequest.newBuilder().setName("brand-new").setLeaseId(fresh).build());
            assertThat(next.getFencingToken()).isGreaterThan(maxToken);
        }
    }

    @Test
    void aCorruptSnapshotStopsStartUpWithAClearMessage() throws Exception {
        try (TenureCluster m = start(config())) {
            long holder = grantLease(m, "holder", 120_000);
            long waiter = grantLease(m, "waiter", 120_000);
            fill(m, holder, waiter);
        }
        Path snapshot = snapshots().get(0);
        try (RandomAccessFile f = new RandomAccessFile(snapshot.toFile(), "rw")) {
            f.seek(f.length() / 2);
            int b = f.read();
            f.seek(f.length() / 2);
            f.write(b ^ 0xff);
        }
        assertStartRefused(config())
                .hasMessageContaining("snapshot")
                .hasMessageContaining("corrupt");
    }

    @Test
    void aTruncatedLogStopsStartUp() throws Exception {
        try (TenureCluster m = start(plain())) {
            long holder = grantLease(m, "holder", 120_000);
            for (int i = 0; i < 20; i++) {
                m.blocking(0).lock(LockRequest.newBuilder().setName("key-" + i).setLeaseId(holder).build());
            }
        }
        Path segment = logSegments().get(0);
        // Into the entries written, not the segment's preallocated zeros: a segment left open (its
        // member's close cut short on a loaded machine) keeps its padding, where a third of the
        // file's size fell past the last entry and the damage went unseen.
        byte[] bytes = Files.readAllBytes(segment);
        int written = bytes.length;
        while (written > 0 && bytes[written - 1] == 0) {
            written--;
        }
        try (RandomAccessFile f = new RandomAccessFile(segment.toFile(), "rw")) {
            f.seek(written / 3);
            f.write(new byte[] {(byte) 0xde, (byte) 0xad, (byte) 0xbe, (byte) 0xef, 1, 2, 3, 4});
        }
        assertStartRefused(plain())
                .hasMessageContaining("cannot start member n1");
    }

    @Test
    void aLogCutShortLosesNoAcknowledgedLockSilently() throws Exception {
        long holder;
        try (TenureCluster m = start(plain())) {
            holder = grantLease(m, "holder", 120_000);
            for (int i = 0; i < 20; i++) {
                m.blocking(0).lock(LockRequest.newBuilder().setName("key-" + i).setLeaseId(holder).build());
            }
        }
        Path segment = logSegments().get(logSegments().size() - 1);
        try (RandomAccessFile f = new RandomAccessFile(segment.toFile(), "rw")) {
            f.setLength(nonZeroLength(segment) / 2);
        }
        // Either start-up refuses the damaged log, or every acknowledged lock is still there.
        try (TenureCluster m = start(plain())) {
            for (int i = 0; i < 20; i++) {
                assertThat(m.server(0).member().locks().describe("key-" + i)).as("key-" + i).isNotNull();
            }
        } catch (UncheckedIOException refused) {
            assertThat(refused.getCause()).isInstanceOf(IOException.class).hasMessageContaining("cannot start member n1");
        }
    }

    private static long nonZeroLength(Path file) throws IOException {
        byte[] bytes = Files.readAllBytes(file);
        int end = bytes.length;
        while (end > 0 && bytes[end - 1] == 0) {
            end--;
        }
        return end;
    }

    @Test
    void aDataDirectoryOfAnotherMemberIsRefusedUntouched() throws Exception {
        try (TenureCluster m = start(config())) {
            grantLease(m, "someone", 60_000);
        }
        String identity = Files.readString(dataDir.resolve("member.properties"));
        assertStartRefused(c -> config().apply(c).withMemberName("n2"))
                .hasMessageContaining("belongs to member 'n1', not 'n2'");
        assertThat(Files.readString(dataDir.resolve("member.properties"))).isEqualTo(identity);
    }

    /**
     * A crash between writing an installed snapshot and resetting the log leaves a log that ends
     * before the snapshot. The member must start from the snapshot (Ratis alone failed every
     * append after it with "gap between entries").
     */
    @Test
    void aSnapshotAheadOfTheLogIsLoadedAndTheLogBehindItIsDropped(@TempDir Path older) throws Exception {
        long holder;
        try (TenureCluster m = start(config())) {
            holder = grantLease(m, "holder", 120_000);
            for (int i = 0; i < 20; i++) {
                m.blocking(0).lock(LockRequest.newBuilder().setName("early-" + i).setLeaseId(holder).build());
            }
        }
        copyTree(dataDir, older);
        long lateToken;
        try (TenureCluster m = start(config())) {
            for (int i = 0; i < 150; i++) {
                m.blocking(0).lock(LockRequest.newBuilder().setName("late-" + i).setLeaseId(holder).build());
            }
            lateToken = m.server(0).member().locks().describe("late-0").fencingToken();
        }
        List<Path> taken = snapshots();
        assertThat(taken).as("a snapshot past the threshold").isNotEmpty();
        // The older copy's log ends at about index 25; give it the newer snapshots (and their checksums).
        Path olderSnapshots;
        try (Stream<Path> dirs = Files.walk(older)) {
            olderSnapshots = dirs.filter(p -> p.getFileName().toString().equals("sm")).findFirst().orElseThrow();
        }
        try (Stream<Path> files = Files.list(taken.get(0).getParent())) {
            for (Path file : files.toList()) {
                if (!Files.exists(olderSnapshots.resolve(file.getFileName()))) {
                    Files.copy(file, olderSnapshots.resolve(file.getFileName()));
                }
            }
        }

        UnaryOperator<ServerConfig> olderConfig = c -> config().apply(c).withDataDir(older);
        try (TenureCluster m = start(olderConfig)) {
            assertThat(m.server(0).member().locks().describe("late-0").fencingToken()).as("state from the snapshot").isEqualTo(lateToken);
            assertThat(m.server(0).member().locks().describe("early-3").leaseId()).isEqualTo(holder);
            m.blocking(0).lock(LockRequest.newBuilder().setName("after-restart").setLeaseId(holder).build());
        }
        try (TenureCluster m = start(olderConfig)) {
            assertThat(m.server(0).member().locks().describe("after-restart").leaseId()).as("a write after the repair survives a restart")
                    .isEqualTo(holder);
        }
    }

    private static void copyTree(Path from, Path to) throws IOException {
        try (Stream<Path> files = Files.walk(from)) {
            for (Path source : files.toList()) {
                Path target = to.resolve(from.relativize(source).toString());
                if (Files.isDirectory(source)) {
                    Files.createDirectories(target);
                } else if (!source.getFileName().toString().equals("in_use.lock")) {
                    Files.copy(source, target);
                }
            }
        }
    }

    private List<Path> snapshots() throws IOException {
        try (Stream<Path> files = Files.walk(dataDir)) {
            return files.filter(p -> p.getFileName().toString().matches("snapshot\\.\\d+_\\d+")).sorted().toList();
        }
    }

    private List<Path> logSegments() throws IOException {
        try (Stream<Path> files = Files.walk(dataDir)) {
            return files.filter(p -> p.getFileName().toString().startsWith("log_")).sorted().toList();
        }
    }
}
