package io.tenure.spike.engine;

import io.tenure.server.raft.PeerTransport;
import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientAsynchronousProtocol;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;
import org.apache.ratis.util.SizeInBytes;
import org.apache.ratis.util.TimeDuration;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Engine A: Apache Ratis 3.2.2 with the settings of {@code TenureServer.raftProperties} (default
 * configuration: 500 ms election timeout, 50,000-entry snapshot threshold for the log segment
 * sizes), except that no snapshot is taken. Entries go in-process to the leader's division
 * through {@link RaftClientAsynchronousProtocol}, as the product's proposer sends them.
 */
final class RatisEngine implements Engine {
    /** {@code ServerConfig}'s default snapshot threshold, from which the product sizes log segments. */
    private static final long SNAPSHOT_EVERY = 50_000;

    private final List<RaftServer> servers;
    private final RaftGroupId groupId;
    private final ClientId clientId = ClientId.randomId();
    private final AtomicLong callIds = new AtomicLong();
    private final int leader;
    private final RaftServer.Division leaderDivision;

    private RatisEngine(List<RaftServer> servers, RaftGroupId groupId, int leader) throws IOException {
        this.servers = servers;
        this.groupId = groupId;
        this.leader = leader;
        this.leaderDivision = servers.get(leader).getDivision(groupId);
    }

    static RatisEngine start(List<Replica> replicas, Path dataDir) throws Exception {
        int[] ports = Engine.freePorts(replicas.size());
        List<RaftPeer> peers = new ArrayList<>();
        for (int i = 0; i < replicas.size(); i++) {
            peers.add(RaftPeer.newBuilder().setId("m" + i).setAddress(HOST + ":" + ports[i]).build());
        }
        RaftGroup group = RaftGroup.valueOf(RaftGroupId.randomId(), peers);
        List<RaftServer> servers = new ArrayList<>();
        for (int i = 0; i < replicas.size(); i++) {
            RaftServer server = RaftServer.newBuilder()
                    .setServerId(peers.get(i).getId())
                    .setGroup(group)
                    .setStateMachine(new ReplicaStateMachine(replicas.get(i)))
                    .setProperties(properties(dataDir.resolve("m" + i), ports[i], replicas.size() > 1))
                    .setOption(RaftStorage.StartupOption.FORMAT)
                    .build();
            servers.add(server);
            server.start();
        }
        int[] leader = {-1};
        Engine.await("Ratis leader", 20, () -> {
            for (int i = 0; i < servers.size(); i++) {
                try {
                    if (servers.get(i).getDivision(group.getGroupId()).getInfo().isLeaderReady()) {
                        leader[0] = i;
                        return true;
                    }
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
            return false;
        });
        return new RatisEngine(servers, group.getGroupId(), leader[0]);
    }

    /** {@code TenureServer.raftProperties} for a member with this data directory and peer port. */
    private static RaftProperties properties(Path dir, int port, boolean clustered) {
        RaftProperties p = new RaftProperties();
        RaftServerConfigKeys.setStorageDir(p, List.of(dir.toFile()));
        RaftConfigKeys.Rpc.setType(p, new PeerTransport());
        GrpcConfigKeys.Server.setHost(p, HOST);
        GrpcConfigKeys.Server.setPort(p, port);
        GrpcConfigKeys.setMessageSizeMax(p, SizeInBytes.valueOf("8MB"));
        RaftServerConfigKeys.Rpc.setTimeoutMin(p, TimeDuration.valueOf(ELECTION_TIMEOUT_MIN_MS, TimeUnit.MILLISECONDS));
        RaftServerConfigKeys.Rpc.setTimeoutMax(p, TimeDuration.valueOf(ELECTION_TIMEOUT_MAX_MS, TimeUnit.MILLISECONDS));
        RaftServerConfigKeys.Rpc.setFirstElectionTimeoutMin(p, TimeDuration.valueOf(clustered ? 200 : 1, TimeUnit.MILLISECONDS));
        RaftServerConfigKeys.Rpc.setFirstElectionTimeoutMax(p, TimeDuration.valueOf(clustered ? 400 : 10, TimeUnit.MILLISECONDS));
        RaftServerConfigKeys.Read.setOption(p, RaftServerConfigKeys.Read.Option.LINEARIZABLE);
        // Acknowledge only after fsync.
        RaftServerConfigKeys.Log.setUnsafeFlushEnabled(p, false);
        RaftServerConfigKeys.Log.setAsyncFlushEnabled(p, false);
        RaftServerConfigKeys.Log.setLogMetadataEnabled(p, clustered);
        RaftServerConfigKeys.Log.setCorruptionPolicy(p, RaftServerConfigKeys.Log.CorruptionPolicy.EXCEPTION);
        long segmentBytes = Math.max(64 << 10, Math.min(8 << 20, SNAPSHOT_EVERY * 256));
        RaftServerConfigKeys.Log.setSegmentSizeMax(p, SizeInBytes.valueOf(segmentBytes));
        RaftServerConfigKeys.Log.setPreallocatedSize(p, SizeInBytes.valueOf(Math.min(segmentBytes, 4 << 20)));
        return p;
    }

    @Override
    public int leader() {
        return leader;
    }

    @Override
    public long term() {
        return leaderDivision.getInfo().getCurrentTerm();
    }

    @Override
    public CompletableFuture<Void> submit(byte[] entry) {
        RaftClientRequest request = RaftClientRequest.newBuilder()
                .setClientId(clientId)
                .setServerId(leaderDivision.getId())
                .setGroupId(groupId)
                .setCallId(callIds.incrementAndGet())
                .setMessage(Message.valueOf(UnsafeByteOperations.unsafeWrap(entry)))
                .setType(RaftClientRequest.writeRequestType())
                .build();
        CompletableFuture<RaftClientReply> reply;
        try {
            reply = ((RaftClientAsynchronousProtocol) leaderDivision).submitClientRequestAsync(request);
        } catch (IOException e) {
            return CompletableFuture.failedFuture(e);
        }
        return reply.thenAccept(r -> {
            if (!r.isSuccess()) {
                throw new IllegalStateException("Ratis did not commit the entry: " + r.getException());
            }
        });
    }

    @Override
    public void close() {
        for (RaftServer server : servers) {
            try {
                server.close();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    /** Hands each committed entry to the member's replica. No snapshots: the spike leaves them out. */
    private static final class ReplicaStateMachine extends BaseStateMachine {
        private final Replica replica;

        ReplicaStateMachine(Replica replica) {
            this.replica = replica;
        }

        @Override
        public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
            LogEntryProto log = trx.getLogEntry();
            replica.apply(log.getIndex(), log.getStateMachineLogEntry().getLogData().toByteArray());
            updateLastAppliedTermIndex(log.getTerm(), log.getIndex());
            return CompletableFuture.completedFuture(Message.EMPTY);
        }
    }
}
