package io.tenure.client;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * In-process members serving {@link ScriptedWatchService}s, and clients on fake time connected to
 * them in member order. Direct executors: what a member sends reaches the client's listener
 * before the sending call returns, and only advancing {@link #time} runs a backoff.
 */
final class WatchMembers implements AutoCloseable {
    final FakeTime time = new FakeTime();
    private final List<ScriptedWatchService> services = new ArrayList<>();
    private final List<Server> servers = new ArrayList<>();
    private final List<String> endpoints = new ArrayList<>();
    private final List<TenureClient> clients = new ArrayList<>();

    WatchMembers(int count) {
        for (int i = 0; i < count; i++) {
            String endpoint = "watch-member-" + i + "-" + UUID.randomUUID();
            ScriptedWatchService service = new ScriptedWatchService("n" + (i + 1));
            try {
                servers.add(InProcessServerBuilder.forName(endpoint).directExecutor().addService(service).build().start());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            services.add(service);
            endpoints.add(endpoint);
        }
    }

    ScriptedWatchService service(int index) {
        return services.get(index);
    }

    /** Stops member {@code index} at once, as {@code kill -9} would: its streams break. */
    void kill(int index) {
        servers.get(index).shutdownNow();
    }

    TenureClient client() {
        TenureClient client = TenureClient.builder()
                .endpoints(endpoints)
                .clock(time)
                .scheduler(time)
                .channelFactory(endpoint -> (ManagedChannel) InProcessChannelBuilder.forName(endpoint).directExecutor().build())
                .build();
        clients.add(client);
        return client;
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
