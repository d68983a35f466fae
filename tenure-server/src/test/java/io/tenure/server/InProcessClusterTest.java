package io.tenure.server;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.tenure.proto.v1.ClusterServiceGrpc;
import io.tenure.proto.v1.DescribeRequest;
import io.tenure.proto.v1.LeaseGrantRequest;
import io.tenure.proto.v1.LeaseTimeToLiveRequest;
import io.tenure.proto.v1.LockRequest;
import io.tenure.proto.v1.LockResponse;
import io.tenure.proto.v1.LockServiceGrpc;
import io.tenure.proto.v1.MemberListRequest;
import io.tenure.proto.v1.MemberRemoveRequest;
import io.tenure.proto.v1.StatusRequest;
import io.tenure.proto.v1.StatusResponse;
import io.tenure.proto.v1.UnlockRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Three members in one JVM over real sockets: followers forward writes, serve linearizable
 * reads, name the leader's client endpoint, and a wait parked on a follower is woken by a grant.
 * (Process-level failover tests are in tenure-it.)
 */
class InProcessClusterTest {
    @TempDir
    Path dir;
    final Map<String, TenureServer> members = new LinkedHashMap<>();
    final Map<String, ManagedChannel> channels = new LinkedHashMap<>();
    final Map<String, ServerConfig> configs = new LinkedHashMap<>();

    @BeforeEach
    void start() throws Exception {
        Map<String, String> peers = new LinkedHashMap<>();
        int[] ports = FreePorts.take(3);
        List<String> names = List.of("n1", "n2", "n3");
        for (int i = 0; i < names.size(); i++) {
            peers.put(names.get(i), "127.0.0.1:" + ports[i]);
        }
        List<CompletableFuture<TenureServer>> starting = new ArrayList<>();
        for (String name : peers.keySet()) {
            ServerConfig config = ServerConfig.defaults().withHttpPort(0).withMemberName(name).withDataDir(dir.resolve(name))
                    .withClientPort(0).withPeers(peers);
            configs.put(name, config);
            starting.add(CompletableFuture.supplyAsync(() -> {
                try {
                    return TenureServer.start(config);
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            }));
        }
        for (CompletableFuture<TenureServer> s : starting) {
            TenureServer server = s.get(60, TimeUnit.SECONDS);
            String name = server.member().status(io.tenure.proto.v1.ResponseHeader.getDefaultInstance()).getMemberName();
            members.put(name, server);
            channels.put(name, NettyChannelBuilder.forAddress("127.0.0.1", server.clientPort()).usePlaintext().build());
        }
        Await.until(Duration.ofSeconds(30), "a leader whose endpoint every member knows", () -> members.keySet().stream()
                .allMatch(n -> !statusOf(n).getLeaderEndpoint().isEmpty()));
    }

    @AfterEach
    void stop() {
        channels.values().forEach(ManagedChannel::shutdownNow);
        members.values().forEach(TenureServer::close);
    }

    private LockServiceGrpc.LockServiceBlockingStub stub(String member) {
        return LockServiceGrpc.newBlockingStub(channels.get(member)).withDeadlineAfter(30, TimeUnit.SECONDS);
    }

    private StatusResponse statusOf(String member) {
        try {
            return stub(member).status(StatusRequest.getDefaultInstance());
        } catch (StatusRuntimeException e) {
            return StatusResponse.getDefaultInstance();
        }
    }

    private String leader() {
        return statusOf("n1").getLeader();
    }

    private String follower() {
        String leader = leader();
        return members.keySet().stream().filter(n -> !n.equals(leader)).findFirst().orElseThrow();
    }

    @Test
    void everyMemberNamesTheLeaderAndItsClientEndpoint() {
        String leader = leader();
        int leaderPort = members.get(leader).clientPort();
        for (String name : members.keySet()) {
            StatusResponse status = statusOf(name);
            assertThat(status.getLeader()).isEqualTo(leader);
            assertThat(status.getLeaderEndpoint()).isEqualTo("127.0.0.1:" + leaderPort);
            assertThat(status.getMemberId()).isEqualTo(MemberInfo.idOf(name));
            assertThat(status.getMembersList()).hasSize(3);
        }
    }

    @Test
    void aFollowerForwardsWritesAndReadsItsOwnWrites() {
        String follower = follower();
        long lease = stub(follower).leaseGrant(LeaseGrantRequest.newBuilder().setClientId("f").setTtl(60).build()).getId();
        LockResponse granted = stub(follower).lock(LockRequest.newBuilder().setName("forwarded").setLeaseId(lease).build());
        assertThat(granted.getAcquired()).isTrue();
        // Linearizable on every member: each sees the lease the moment the grant was acknowledged.
        for (String name : members.keySet()) {
            assertThat(stub(name).leaseTimeToLive(LeaseTimeToLiveRequest.newBuilder().setId(lease).setKeys(true).build())
                    .getKeysList()).as(name).containsExactly("forwarded");
        }
    }

    @Test
    void aWaitParkedOnAFollowerIsWokenByAReleaseThroughAnotherMember() throws Exception {
        String leader = leader();
        String follower = follower();
        long holder = stub(leader).leaseGrant(LeaseGrantRequest.newBuilder().setClientId("h").setTtl(60).build()).getId();
        long waiter = stub(follower).leaseGrant(LeaseGrantRequest.newBuilder().setClientId("w").setTtl(60).build()).getId();
        long token = stub(leader).lock(LockRequest.newBuilder().setName("k").setLeaseId(holder).build()).getFencingToken();
        CompletableFuture<LockResponse> waiting = CompletableFuture.supplyAsync(() ->
                stub(follower).lock(LockRequest.newBuilder().setName("k").setLeaseId(waiter).setTimeoutMs(-1).build()));
        Await.until(Duration.ofSeconds(10), "the waiter queues",
                () -> members.get(leader).member().locks().describe("k").waiters().size() == 1);

        stub(leader).unlock(UnlockRequest.newBuilder().setKey("k").setLeaseId(holder).setFencingToken(token).build());

        LockResponse granted = waiting.get(10, TimeUnit.SECONDS);
        assertThat(granted.getAcquired()).isTrue();
        assertThat(granted.getFencingToken()).isGreaterThan(token);
    }

    @Test
    void aClusterRefusesLeasesTooShortToSurviveAFailover() {
        long minimum = ServerConfig.MIN_TTL_ELECTION_TIMEOUTS * ServerConfig.DEFAULT_ELECTION_TIMEOUT.toMillis();
        assertThat(minimum).isEqualTo(15_000);
        assertThatThrownBy(() -> stub("n1").leaseGrant(LeaseGrantRequest.newBuilder().setTtlMs(minimum - 1).build()))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                    assertThat(e.getStatus().getDescription()).contains("ttl must be at least " + minimum + " ms");
                });
        long atTheMinimum = stub("n1").leaseGrant(LeaseGrantRequest.newBuilder().setTtlMs(minimum).build()).getId();
        assertThat(atTheMinimum).isNotZero();
        stub("n1").leaseRevoke(io.tenure.proto.v1.LeaseRevokeRequest.newBuilder().setId(atTheMinimum).build());
    }

    @Test
    void membershipErrorsAreClearAndChangeNothing() {
        var cluster = ClusterServiceGrpc.newBlockingStub(channels.get("n1")).withDeadlineAfter(30, TimeUnit.SECONDS);
        assertThatThrownBy(() -> cluster.memberRemove(MemberRemoveRequest.newBuilder().setName("n9").build()))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND));
        assertThatThrownBy(() -> cluster.memberAdd(io.tenure.proto.v1.MemberAddRequest.newBuilder()
                .setName("n2").setPeerAddress("127.0.0.1:1").build()))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.ALREADY_EXISTS));
        assertThat(cluster.memberList(MemberListRequest.getDefaultInstance()).getMembersList())
                .extracting(io.tenure.proto.v1.Member::getName).containsExactly("n1", "n2", "n3");
    }

    @Test
    void aJoiningMemberIsAddedThenAnOriginalOneRemoved() throws Exception {
        Map<String, String> peers = new LinkedHashMap<>();
        for (io.tenure.proto.v1.Member m : members.get("n1").member().members()) {
            peers.put(m.getName(), m.getPeerAddress());
        }
        String n4Address = "127.0.0.1:" + FreePorts.take(1)[0];
        peers.put("n4", n4Address);
        TenureServer n4 = TenureServer.start(ServerConfig.defaults().withHttpPort(0).withMemberName("n4").withDataDir(dir.resolve("n4"))
                .withClientPort(0).withPeers(peers).withJoin(true));
        members.put("n4", n4);
        channels.put("n4", NettyChannelBuilder.forAddress("127.0.0.1", n4.clientPort()).usePlaintext().build());

        var cluster = ClusterServiceGrpc.newBlockingStub(channels.get("n2")).withDeadlineAfter(60, TimeUnit.SECONDS);
        assertThat(cluster.memberAdd(io.tenure.proto.v1.MemberAddRequest.newBuilder().setName("n4").setPeerAddress(n4Address).build())
                .getMembersList()).extracting(io.tenure.proto.v1.Member::getName).containsExactly("n1", "n2", "n3", "n4");
        long lease = stub("n4").leaseGrant(LeaseGrantRequest.newBuilder().setTtl(60).build()).getId();
        assertThat(stub("n4").lock(LockRequest.newBuilder().setName("via-n4").setLeaseId(lease).build()).getAcquired()).isTrue();

        String removed = leader();
        String asker = members.keySet().stream().filter(n -> !n.equals(removed)).findFirst().orElseThrow();
        var other = ClusterServiceGrpc.newBlockingStub(channels.get(asker)).withDeadlineAfter(60, TimeUnit.SECONDS);
        assertThat(other.memberRemove(MemberRemoveRequest.newBuilder().setName(removed).build()).getMembersList())
                .extracting(io.tenure.proto.v1.Member::getName).hasSize(3).doesNotContain(removed);
        // The remaining members commit, and one of them leads, while the removed one shuts down.
        TenureServer leaving = members.remove(removed);
        channels.remove(removed).shutdownNow();
        CompletableFuture<Boolean> stopping = CompletableFuture.supplyAsync(leaving::shutdownGracefully);
        Await.until(Duration.ofSeconds(3), "a write committed by the remaining members", () -> {
            try {
                LockServiceGrpc.newBlockingStub(channels.get(asker)).withDeadlineAfter(1, TimeUnit.SECONDS)
                        .leaseGrant(LeaseGrantRequest.newBuilder().setTtl(60).build());
                return true;
            } catch (StatusRuntimeException notYet) {
                return false;
            }
        });
        assertThat(statusOf(asker).getLeader()).isNotEmpty().isNotEqualTo(removed);
        // It was no longer the leader when removed, so its graceful shutdown had no leadership to
        // hand over and ended cleanly. (Before, a removed leader spent its whole shutdown timeout on
        // a transfer it could not make, and stopped as timed out: the safety suite's F9.)
        assertThat(stopping.get(30, TimeUnit.SECONDS)).as("the removed member's graceful shutdown ended cleanly").isTrue();
        leaving.close();
        long after = stub(asker).leaseGrant(LeaseGrantRequest.newBuilder().setTtl(60).build()).getId();
        assertThat(stub(asker).lock(LockRequest.newBuilder().setName("after-removal").setLeaseId(after).build()).getAcquired()).isTrue();
    }

    @Test
    void theLastVotingMemberCannotBeRemoved() {
        // Shrink to one member by removing the followers, through the leader.
        String leader = leader();
        var cluster = ClusterServiceGrpc.newBlockingStub(channels.get(leader)).withDeadlineAfter(60, TimeUnit.SECONDS);
        for (String name : List.copyOf(members.keySet())) {
            if (!name.equals(leader)) {
                cluster.memberRemove(MemberRemoveRequest.newBuilder().setName(name).build());
            }
        }
        assertThat(cluster.memberList(MemberListRequest.getDefaultInstance()).getMembersList())
                .extracting(io.tenure.proto.v1.Member::getName).containsExactly(leader);
        assertThatThrownBy(() -> cluster.memberRemove(MemberRemoveRequest.newBuilder().setName(leader).build()))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
                    assertThat(e.getStatus().getDescription()).contains("last voting member");
                });
        long lease = stub(leader).leaseGrant(LeaseGrantRequest.newBuilder().setTtl(60).build()).getId();
        assertThat(stub(leader).lock(LockRequest.newBuilder().setName("alone").setLeaseId(lease).build()).getAcquired()).isTrue();
    }

    @Test
    void theClusterServesOnAfterItsLeaderStops() {
        String old = leader();
        members.remove(old).close();
        channels.remove(old).shutdownNow();
        String survivor = members.keySet().iterator().next();
        Await.until(Duration.ofSeconds(30), "a new leader", () -> {
            String l = statusOf(survivor).getLeader();
            return !l.isEmpty() && !l.equals(old);
        });
        long lease = stub(survivor).leaseGrant(LeaseGrantRequest.newBuilder().setTtl(60).build()).getId();
        assertThat(stub(survivor).lock(LockRequest.newBuilder().setName("after").setLeaseId(lease).build()).getAcquired()).isTrue();
    }

    @Test
    void aLeaderCutOffFromItsMajorityServesNoLinearizableRead() {
        String leader = leader();
        long lease = stub(leader).leaseGrant(LeaseGrantRequest.newBuilder().setTtl(60).build()).getId();
        assertThat(stub(leader).lock(LockRequest.newBuilder().setName("seen").setLeaseId(lease).build()).getAcquired()).isTrue();
        Await.until(Duration.ofSeconds(30), "every member applied what the leader committed", () -> {
            long committed = statusOf(leader).getCommitIndex();
            return committed > 0 && members.keySet().stream().allMatch(n -> statusOf(n).getAppliedIndex() >= committed);
        });
        assertThat(stub(leader).describe(DescribeRequest.newBuilder().setName("seen").build()).getLock().getLeaseId()).isEqualTo(lease);
        // The majority confirmed all of that, then goes away: nothing this leader knows is stale
        // yet, but each read must still be confirmed by a majority after it arrives (a new leader
        // could have been elected on the other side of a partition and moved on). Ratis 3.2.2's
        // ReadIndex skips that when the commit index was confirmed before: this read came back.
        for (String follower : List.copyOf(members.keySet())) {
            if (!follower.equals(leader)) {
                members.remove(follower).close();
                channels.remove(follower).shutdownNow();
            }
        }
        assertThatThrownBy(() -> stub(leader).describe(DescribeRequest.newBuilder().setName("seen").build()))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
                    assertThat(e.getStatus().getDescription()).contains("no linearizable read");
                });
    }

    @Test
    void aFollowerForwardsAgainAfterTheLeaderWasUnreachableLongerThanItsRetries() throws Exception {
        String follower = follower();
        List<String> stopped = members.keySet().stream().filter(n -> !n.equals(follower)).toList();
        for (String name : stopped) {
            members.remove(name).close();
            channels.remove(name).shutdownNow();
        }
        // Ratis's forwarding client gives up on this write after its retries (about 4 s), and
        // then, left as it was, refused every later request with AlreadyClosedException.
        assertThatThrownBy(() -> stub(follower).leaseGrant(LeaseGrantRequest.newBuilder().setTtl(60).build()))
                .isInstanceOf(StatusRuntimeException.class);

        for (String name : stopped) {
            TenureServer restarted = TenureServer.start(configs.get(name));
            members.put(name, restarted);
            channels.put(name, NettyChannelBuilder.forAddress("127.0.0.1", restarted.clientPort()).usePlaintext().build());
        }
        long[] lease = new long[1];
        Await.until(Duration.ofSeconds(30), "a write forwarded by " + follower + " once a leader is back", () -> {
            try {
                lease[0] = LockServiceGrpc.newBlockingStub(channels.get(follower)).withDeadlineAfter(5, TimeUnit.SECONDS)
                        .leaseGrant(LeaseGrantRequest.newBuilder().setTtl(60).build()).getId();
                return true;
            } catch (StatusRuntimeException notYet) {
                return false;
            }
        });
        assertThat(lease[0]).isNotZero();
    }

}
