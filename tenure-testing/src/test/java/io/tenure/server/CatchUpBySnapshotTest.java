package io.tenure.server;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.tenure.proto.v1.LeaseGrantRequest;
import io.tenure.proto.v1.LockServiceGrpc;
import io.tenure.proto.v1.StatusRequest;
import io.tenure.proto.v1.StatusResponse;
import io.tenure.testing.Await;
import io.tenure.testing.TenureCluster;
import io.tenure.testing.TenureExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A stopped leader comes back after the new leader purged its log up to exactly where the old
 * leader's log ends: the new leader must send it a snapshot. (Ratis 3.2.2 alone looped on
 * "Previous TermIndex not found" and the member never caught up; see PeerTransport.)
 */
class CatchUpBySnapshotTest {
    static final long SNAPSHOT_EVERY = 100;

    /**
     * Three members on Ratis (the defect is Ratis's; JRaft's catch-up by snapshot is tenure-it's
     * SnapshotCatchUpTest), the server's election timeout, a snapshot every {@value #SNAPSHOT_EVERY} entries.
     */
    @RegisterExtension
    final TenureExtension tenure = TenureExtension.of(TenureCluster.builder().members(3)
            .electionTimeout(ServerConfig.DEFAULT_ELECTION_TIMEOUT).snapshotEvery(SNAPSHOT_EVERY)
            .config(c -> c.withRaftEngine(RaftEngine.RATIS)));

    @Test
    void aLeaderRestartedAtTheNewLeadersLogStartCatchesUpBySnapshot() throws Exception {
        List<String> names = List.of("n1", "n2", "n3");
        TenureCluster cluster = tenure.cluster();
        String first = awaitLeader(names);
        // Every member announces its client endpoint through the log once it knows a leader: let
        // those entries commit first, so that nothing but this test's writes lands after firstLast.
        Await.until("every member's endpoint in the replicated state", Duration.ofSeconds(30), () -> names.stream()
                .allMatch(n -> server(first).member().stateMachine().read(s -> s.primitive(io.tenure.core.member.MemberEndpoints.class)
                        .endpoints().containsKey(n))));
        grantLeases(first, 5);
        long firstLast = server(first).member().commitIndex();

        cluster.stop(cluster.indexOf(first));
        List<String> rest = names.stream().filter(n -> !n.equals(first)).toList();
        String next = awaitLeader(rest);
        Member leader = server(next).member();
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

        cluster.startMember(cluster.indexOf(first));
        TenureServer back = server(first);
        // Watched in-process: a Status call is a read, and each read commits a barrier entry.
        Await.until(first + " applies index " + commit + " (log start " + logStart + ")", Duration.ofSeconds(30),
                () -> appliedIndex(back) >= commit);
        // One of the survivors: under load, leadership may have moved between them meanwhile.
        String named = statusOf(back).getLeader();
        assertThat(named).as("the restarted member names a leader").isIn(rest);
        assertThat(back.member().logStartIndex()).as("its log now starts after the installed snapshot").isGreaterThan(firstLast);
    }

    private TenureServer server(String name) {
        return tenure.cluster().server(tenure.cluster().indexOf(name));
    }

    private String awaitLeader(List<String> among) {
        String[] leader = new String[1];
        Await.until("a leader among " + among, Duration.ofSeconds(30), () -> {
            for (String name : among) {
                TenureServer s = server(name);
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
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", server(member).clientPort()).usePlaintext().build();
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
        return server.member().stateMachine().appliedIndex();
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
