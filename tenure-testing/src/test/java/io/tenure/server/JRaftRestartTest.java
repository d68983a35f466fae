package io.tenure.server;

import io.tenure.core.lock.LockView;
import io.tenure.proto.v1.LeaseGrantRequest;
import io.tenure.proto.v1.LeaseTimeToLiveRequest;
import io.tenure.proto.v1.LockRequest;
import io.tenure.proto.v1.LockResponse;
import io.tenure.testing.Await;
import io.tenure.testing.TenureCluster;
import io.tenure.testing.Waiters;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A member on SOFAJRaft restarted on its data directory: from snapshot plus log, refusing a damaged one or another engine's. */
class JRaftRestartTest {
    @TempDir
    Path dataDir;

    /** One member on JRaft whose data directory is {@code dataDir} itself, taking a snapshot every 100 entries. */
    private UnaryOperator<ServerConfig> config() {
        return c -> c.withDataDir(dataDir).withSnapshotEvery(100).withRaftEngine(RaftEngine.JRAFT);
    }

    private static TenureCluster start(UnaryOperator<ServerConfig> config) {
        return TenureCluster.builder().config(config).start();
    }

    private static long grantLease(TenureCluster m, String clientId, long ttlMillis) {
        return m.blocking(0).leaseGrant(LeaseGrantRequest.newBuilder().setClientId(clientId).setTtlMs(ttlMillis).build()).getId();
    }

    /** Fills the member with 150 held locks and one queued waiter, and waits for a snapshot past 100 entries. */
    private long fill(TenureCluster m, long holder, long waiter) {
        long maxToken = 0;
        for (int i = 0; i < 150; i++) {
            LockResponse r = m.blocking(0).lock(LockRequest.newBuilder().setName("key-" + i).setLeaseId(holder).build());
            maxToken = Math.max(maxToken, r.getFencingToken());
        }
        Waiters.queue(m.channel(0), "key-0", waiter, Duration.ofSeconds(10));
        Await.until("a snapshot past the threshold", Duration.ofSeconds(20), () -> !snapshots().isEmpty());
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
            // After the snapshot: these come back from the log.
            m.blocking(0).lock(LockRequest.newBuilder().setName("after-snapshot").setLeaseId(holder).build());
            before = m.server(0).member().locks().describe("key-77");
        }

        try (TenureCluster m = start(config())) {
            LockView after = m.server(0).member().locks().describe("key-77");
            assertThat(after.leaseId()).isEqualTo(holder);
            assertThat(after.fencingToken()).isEqualTo(before.fencingToken());
            assertThat(m.server(0).member().locks().describe("after-snapshot").leaseId()).isEqualTo(holder);
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
    void aCorruptSnapshotStopsStartUp() throws Exception {
        try (TenureCluster m = start(config())) {
            fill(m, grantLease(m, "holder", 120_000), grantLease(m, "waiter", 120_000));
        }
        Path snapshot = snapshots().get(snapshots().size() - 1);
        try (RandomAccessFile f = new RandomAccessFile(snapshot.toFile(), "rw")) {
            f.seek(f.length() / 2);
            int b = f.read();
            f.seek(f.length() / 2);
            f.write(b ^ 0xff);
        }
        assertThatThrownBy(() -> start(config())).isInstanceOf(UncheckedIOException.class)
                .cause().isInstanceOf(IOException.class)
                .hasMessageContaining("cannot start member n1");
    }

    @Test
    void aDataDirectoryOfTheOtherEngineIsRefusedUntouched() throws Exception {
        try (TenureCluster m = start(c -> c.withDataDir(dataDir))) {
            grantLease(m, "someone", 60_000);
        }
        String identity = Files.readString(dataDir.resolve("member.properties"));
        assertThatThrownBy(() -> start(config())).isInstanceOf(UncheckedIOException.class)
                .cause().isInstanceOf(IOException.class)
                .hasMessageContaining("was made with the ratis Raft engine")
                .hasMessageContaining("--raft-engine ratis");
        assertThat(Files.readString(dataDir.resolve("member.properties"))).isEqualTo(identity);
        assertThat(dataDir.resolve("jraft")).doesNotExist();
    }

    private List<Path> snapshots() {
        try (Stream<Path> files = Files.walk(dataDir)) {
            return files.filter(p -> p.getFileName().toString().equals("tenure.snapshot")).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
