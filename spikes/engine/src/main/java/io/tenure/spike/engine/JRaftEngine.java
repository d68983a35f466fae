package io.tenure.spike.engine;

import com.alipay.sofa.jraft.Closure;
import com.alipay.sofa.jraft.Iterator;
import com.alipay.sofa.jraft.Node;
import com.alipay.sofa.jraft.RaftGroupService;
import com.alipay.sofa.jraft.Status;
import com.alipay.sofa.jraft.conf.Configuration;
import com.alipay.sofa.jraft.core.StateMachineAdapter;
import com.alipay.sofa.jraft.entity.PeerId;
import com.alipay.sofa.jraft.entity.Task;
import com.alipay.sofa.jraft.option.NodeOptions;
import com.alipay.sofa.jraft.option.RaftOptions;
import com.alipay.sofa.jraft.rpc.RaftRpcServerFactory;
import com.alipay.sofa.jraft.rpc.RpcServer;
import com.alipay.sofa.jraft.rpc.impl.BoltRpcServer;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Engine B: SOFAJRaft 1.3.14 with its default RocksDB log storage, every log write synced
 * ({@link RaftOptions#setSync}: RocksDB {@code WriteOptions.sync}, a WAL fsync per write batch,
 * and with it the Raft meta file of term and vote), the same election timeouts as Ratis, and bolt
 * peer transport bound to 127.0.0.1. Entries go to the leader's {@link Node#apply}; its closure
 * runs after the leader applied the entry. No snapshot storage: the spike leaves snapshots out.
 */
final class JRaftEngine implements Engine {
    private static final String GROUP = "tenure-spike";
    private static final long SHUTDOWN_WAIT_MS = 10_000;

    private final List<RaftGroupService> services;
    private final List<Member> members;
    private final int leader;

    private JRaftEngine(List<RaftGroupService> services, List<Member> members, int leader) {
        this.services = services;
        this.members = members;
        this.leader = leader;
    }

    static JRaftEngine start(List<Replica> replicas, Path dataDir) throws Exception {
        int[] ports = Engine.freePorts(replicas.size());
        List<PeerId> peers = new ArrayList<>();
        for (int port : ports) {
            peers.add(new PeerId(HOST, port));
        }
        List<RaftGroupService> services = new ArrayList<>();
        List<Member> members = new ArrayList<>();
        for (int i = 0; i < replicas.size(); i++) {
            Member member = new Member(replicas.get(i));
            Path dir = Files.createDirectories(dataDir.resolve("m" + i));
            NodeOptions options = new NodeOptions();
            options.setElectionTimeoutMs(ELECTION_TIMEOUT_MIN_MS);
            options.setInitialConf(new Configuration(peers));
            options.setFsm(member);
            options.setLogUri(dir.resolve("log").toString());
            options.setRaftMetaUri(dir.resolve("meta").toString());
            RaftOptions raft = new RaftOptions();
            // Every log write synced; the Raft meta file (term, vote) and snapshot meta follow (isSyncMeta is sync || syncMeta).
            raft.setSync(true);
            // JRaft waits electionTimeoutMs plus a random delay below this: 500 ms to 1 s, as Ratis.
            raft.setMaxElectionDelayMs(ELECTION_TIMEOUT_MAX_MS - ELECTION_TIMEOUT_MIN_MS);
            options.setRaftOptions(raft);
            // JRaft's factory binds the wildcard address; this binds the peer address only.
            RpcServer rpc = new BoltRpcServer(new com.alipay.remoting.rpc.RpcServer(HOST, ports[i], true));
            RaftRpcServerFactory.addRaftRequestProcessors(rpc);
            RaftGroupService service = new RaftGroupService(GROUP, peers.get(i), options, rpc);
            services.add(service);
            members.add(member);
            member.node = service.start();
        }
        Engine.await("JRaft leader", 20, () -> members.stream().anyMatch(m -> m.leaderTerm > 0));
        int leader = 0;
        while (members.get(leader).leaderTerm == 0) {
            leader++;
        }
        return new JRaftEngine(services, members, leader);
    }

    @Override
    public int leader() {
        return leader;
    }

    @Override
    public long term() {
        return members.get(leader).leaderTerm;
    }

    @Override
    public CompletableFuture<Void> submit(byte[] entry) {
        CompletableFuture<Void> committed = new CompletableFuture<>();
        Closure done = status -> {
            if (status.isOk()) {
                committed.complete(null);
            } else {
                committed.completeExceptionally(new IllegalStateException("JRaft did not commit the entry: " + status));
            }
        };
        members.get(leader).node.apply(new Task(ByteBuffer.wrap(entry), done));
        return committed;
    }

    /** Shuts the members down and waits a while for them to finish (a node whose apply failed never finishes). */
    @Override
    public void close() {
        services.forEach(RaftGroupService::shutdown);
        Thread joiner = new Thread(() -> {
            try {
                for (RaftGroupService service : services) {
                    service.join();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "jraft-shutdown");
        joiner.setDaemon(true);
        joiner.start();
        try {
            joiner.join(SHUTDOWN_WAIT_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** One member's state machine: each committed entry to its replica, then the leader's closure. */
    private static final class Member extends StateMachineAdapter {
        private final Replica replica;
        volatile Node node;
        /** The term in which this member leads, 0 while it does not. */
        volatile long leaderTerm;

        Member(Replica replica) {
            this.replica = replica;
        }

        @Override
        public void onApply(Iterator entries) {
            while (entries.hasNext()) {
                // A view, never the buffer itself: on the leader it is the one its replicators
                // send later to a lagging follower, which got an empty entry once it was read here.
                ByteBuffer data = entries.getData().duplicate();
                byte[] bytes = new byte[data.remaining()];
                data.get(bytes);
                replica.apply(entries.getIndex(), bytes);
                Closure done = entries.done();
                if (done != null) {
                    done.run(Status.OK());
                }
                entries.next();
            }
        }

        @Override
        public void onLeaderStart(long term) {
            leaderTerm = term;
        }

        @Override
        public void onLeaderStop(Status status) {
            leaderTerm = 0;
        }
    }
}
