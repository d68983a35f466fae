package io.tenure.client;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import java.io.IOException;
import io.tenure.proto.v1.Member;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * In-process servers running {@link ScriptedLockService}s, and a client on fake time connected to
 * them. Everything runs on the calling thread (direct executors), so a test that advances fake
 * time sees every consequence before {@code advance} returns.
 */
final class InProcessMembers implements AutoCloseable {
    final FakeTime time = new FakeTime();
    final List<ScriptedLockService> services = new ArrayList<>();
    final List<ScriptedClusterService> clusterServices = new ArrayList<>();
    /** The membership the cluster services share; starts with one entry per member. */
    final List<Member> memberList = new ArrayList<>();
    private final List<Server> servers = new ArrayList<>();
    private final List<String> endpoints = new ArrayList<>();
    private final List<TenureClient> clients = new ArrayList<>();

    InProcessMembers(int count) {
        Map<Long, Long> leases = new ConcurrentHashMap<>();
        for (int i = 0; i < count; i++) {
            String endpoint = "member-" + i + "-" + UUID.randomUUID();
            ScriptedLockService service = new ScriptedLockService("n" + (i + 1), leases);
            ScriptedClusterService cluster = new ScriptedClusterService(memberList);
            memberList.add(Member.newBuilder().setName("n" + (i + 1)).setId(i + 1)
                    .setPeerAddress("127.0.0.1:" + (7071 + 100 * i)).setClientEndpoint(endpoint).setLeader(i == 0).build());
            try {
                servers.add(InProcessServerBuilder.forName(endpoint).directExecutor()
                        .addService(service).addService(cluster).build().start());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            services.add(service);
            clusterServices.add(cluster);
            endpoints.add(endpoint);
        }
    }

    ScriptedLockService service(int index) {
        return services.get(index);
    }

    ScriptedClusterService cluster(int index) {
        return clusterServices.get(index);
    }

    /** Stops member {@code index} at once, as {@code kill -9} would: its calls and streams break. */
    void kill(int index) {
        servers.get(index).shutdownNow();
    }

    TenureClient client() {
        return client(TenureClient.DEFAULT_REQUEST_TIMEOUT);
    }

    TenureClient client(Duration requestTimeout) {
        TenureClient client = TenureClient.builder()
                .endpoints(endpoints)
                .requestTimeout(requestTimeout)
                .clock(time)
                .scheduler(time)
                .channelFactory(InProcessMembers::channel)
                .callbacks(Runnable::run)
                .build();
        clients.add(client);
        return client;
    }

    String endpoint(int index) {
        return endpoints.get(index);
    }

    static ManagedChannel channel(String endpoint) {
        return InProcessChannelBuilder.forName(endpoint).directExecutor().build();
    }

    @Override
    public void close() {
        clients.forEach(TenureClient::close);
        try {
            for (Server server : servers) {
                server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
