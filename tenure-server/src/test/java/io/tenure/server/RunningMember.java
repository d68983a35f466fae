package io.tenure.server;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.tenure.proto.v1.LeaseGrantRequest;
import io.tenure.proto.v1.LockServiceGrpc;

import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/** A real member on 127.0.0.1 with ephemeral ports, and a channel to it. */
final class RunningMember implements AutoCloseable {
    final ServerConfig config;
    final TenureServer server;
    final ManagedChannel channel;

    private RunningMember(ServerConfig config, TenureServer server) {
        this.config = config;
        this.server = server;
        this.channel = NettyChannelBuilder.forAddress("127.0.0.1", server.clientPort()).usePlaintext().build();
    }

    static RunningMember start(Path dataDir) throws IOException {
        return start(ServerConfig.defaults().withHttpPort(0).withDataDir(dataDir).withClientPort(0).withPeerPort(0));
    }

    static RunningMember start(ServerConfig config) throws IOException {
        return new RunningMember(config, TenureServer.start(config));
    }

    LockServiceGrpc.LockServiceBlockingStub blocking() {
        return LockServiceGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS);
    }

    LockServiceGrpc.LockServiceStub async() {
        return LockServiceGrpc.newStub(channel);
    }

    long grantLease(String clientId, long ttlMillis) {
        return blocking().leaseGrant(LeaseGrantRequest.newBuilder().setClientId(clientId).setTtlMs(ttlMillis).build()).getId();
    }

    @Override
    public void close() throws InterruptedException {
        // The member first, as in a restart: clients' calls are cut by the member, not withdrawn by them.
        server.close();
        channel.shutdownNow();
        channel.awaitTermination(5, TimeUnit.SECONDS);
    }
}
