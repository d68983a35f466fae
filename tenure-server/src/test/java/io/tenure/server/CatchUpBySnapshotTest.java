package io.tenure.server;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.tenure.proto.v1.LeaseGrantRequest;
import io.tenure.proto.v1.LockServiceGrpc;
import io.tenure.proto.v1.StatusRequest;
import io.tenure.proto.v1.StatusResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A stopped leader comes back after the new leader purged its log up to exactly where the old
 * leader's log ends: the new leader must send it a snapshot. (Ratis 3.2.2 alone looped on
 * "Previous TermIndex not found" and the member never caught up; see PeerTransport.)
 */
class CatchUpBySnapshotTest {
    static final long SNAPSHOT_EVERY = 100;

    @TempDir
    Path dir;
    final Map<String, ServerConfig> configs = new LinkedHashMap<>();
    final Map<String, TenureServer> members = new LinkedHashMap<>();

    @AfterEach
    void stop() {
        members.values().forEach(TenureServer::close);
    }

    @Test
    void aLeaderRestartedAtTheNewLeadersLogStartCatchesUpBySnapshot() throws Exception {
        Map<String, String> peers = new LinkedHashMap<>();
        int[] ports = FreePorts.take(3);
        List<String> names = List.of("n1", "n2", "n3");
        for (int i = 0; i < names.size(); i++) {
            peers.put(names.get(i), "127.0.0.1:" + ports[i]);
        }
        List<CompletableFuture<TenureServer>> starting = new ArrayList<>();
        for (String name : names) {
            ServerConfig config = ServerConfig.defaults().withHttpPort(0).withMemberName(name).withDataDir(dir.resolve(name))
                    .withClientPort(0).withPeers(peers).withSnapshotEvery(SNAPSHOT_EVERY);
            configs.put(name, config);
            starting.add(CompletableFuture.supplyAsync(() -> start(config)));
        }
        for (CompletableFuture<TenureServer> s : starting) {
            TenureServer server = s.get(60, TimeUnit.SECONDS);
            members.put(server.member().memberName(), server);
        }
        String first = awaitLeader(names);
        grantLeases(first, 5);
        long firstLast = members.get(first).member().commitIndex();

        members.remove(first).close();
        List<String> rest = names.stream().filter(n -> !n.equals(first)).toList();
        String next = awaitLeader(rest);
        Member leader = members.get(next).member();
        // Write until the new leader has taken a snapshot and purged every entry the old leader
        // had: its log then starts right after them, where the old leader's next index points.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (leader.logStartIndex() <= firstLast) {
            assertThat(System.nanoTime()).as("the new leader purges past index " + firstLast).isLessThan(deadline);
            grantLeases(next, 10);
        }
        long logStart = leader.logStartIndex();
        long commit = leader.commitIndex();
        assertThat(logStart).as("the stopped leader's next index is the new log start, not below it")
                .isLessThanOrEqualTo(firstLast + 2);

        TenureServer back = start(configs.get(first));
        members.put(first, back);
        // Watched in-process: a Status call is a read, and each read commits a barrier entry.
        Await.until(Duration.ofSeconds(30), first + " applies index " + commit + " (log start " + logStart + ")",
                () -> appliedIndex(back) >= commit);
        // One of the survivors: under load, leadership may have moved between them meanwhile.
        String named = statusOf(back).getLeader();
        assertThat(named).as("the restarted member names a leader").isIn(rest);
        assertThat(back.member().logStartIndex()).as("its log now starts after the installed snapshot").isGreaterThan(firstLast);
    }

    private static TenureServer start(ServerConfig config) {
        try {
            return TenureServer.start(config);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private String awaitLeader(List<String> among) {
        String[] leader = new String[1];
        Await.until(Duration.ofSeconds(30), "a leader among " + among, () -> {
            for (String name : among) {
                TenureServer s = members.get(name);
                if (s != null && s.member().leaderReady()) {
                    leader[0] = name;
                    return true;
                }
            }
            return false;
        });
        return leader[0];
    }

    private void grantLeases(String member, int count) {
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", members.get(member).clientPort()).usePlaintext().build();
        try {
            LockServiceGrpc.LockServiceBlockingStub stub = LockServiceGrpc.newBlockingStub(channel);
            for (int i = 0; i < count; i++) {
                stub.withDeadlineAfter(10, TimeUnit.SECONDS)
                        .leaseGrant(LeaseGrantRequest.newBuilder().setClientId("w").setTtlMs(60_000).build());
            }
        } finally {
            channel.shutdownNow();
        }
    }

    private static long appliedIndex(TenureServer server) {
        org.apache.ratis.server.protocol.TermIndex applied = server.member().stateMachine().getLastAppliedTermIndex();
        return applied == null ? -1 : applied.getIndex();
    }

    private static StatusResponse statusOf(TenureServer server) {
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", server.clientPort()).usePlaintext().build();
        try {
            return LockServiceGrpc.newBlockingStub(channel).withDeadlineAfter(5, TimeUnit.SECONDS)
                    .status(StatusRequest.getDefaultInstance());
        } catch (io.grpc.StatusRuntimeException e) {
            return StatusResponse.getDefaultInstance();
        } finally {
            channel.shutdownNow();
        }
    }
}
