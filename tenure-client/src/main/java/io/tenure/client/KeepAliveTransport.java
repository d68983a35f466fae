package io.tenure.client;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.nio.NioEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioSocketChannel;
import java.util.concurrent.TimeUnit;

/**
 * The transport of a client's keep-alive streams: a connection per member of its own, served by
 * one event-loop thread of its own ({@code tenure-keep-alive}), which also handles the answers
 * (keep-alive acknowledgements are quick and never block).
 *
 * <p>Why: gRPC's channels of one process share their event loops and the executor that runs
 * callbacks. A process busy with other calls (thousands of grants and acquires in flight, its
 * own or another client's) made acknowledgements wait behind their answers, on a busy two-core
 * machine for more than a lease can spare (its safe window less a keep-alive period), and kept-alive leases were declared lost
 * although the member had renewed them in time. Kept apart, a renewal is never behind bulk work
 * in this process, whatever else it does.
 */
final class KeepAliveTransport implements AutoCloseable {
    private final EventLoopGroup loop = new NioEventLoopGroup(1, runnable -> {
        Thread thread = new Thread(runnable, "tenure-keep-alive");
        thread.setDaemon(true);
        return thread;
    });

    private final io.grpc.ChannelCredentials credentials;
    private final String token;

    /** Channels made with {@code credentials} (plaintext or TLS) and showing {@code token} (null: none), as the client's other channels. */
    KeepAliveTransport(io.grpc.ChannelCredentials credentials, String token) {
        this.credentials = credentials;
        this.token = token;
    }

    /** A channel to {@code endpoint} for keep-alive streams only. */
    ManagedChannel channel(String endpoint) {
        Endpoints.HostAndPort address = Endpoints.HostAndPort.parse(endpoint);
        NettyChannelBuilder builder = NettyChannelBuilder.forAddress(address.host(), address.port(), credentials);
        if (token != null) {
            builder.intercept(Endpoints.bearer(token));
        }
        return builder
                .eventLoopGroup(loop)
                .channelType(NioSocketChannel.class)
                .directExecutor()
                .keepAliveTime(Endpoints.KEEPALIVE_TIME.toNanos(), TimeUnit.NANOSECONDS)
                .keepAliveTimeout(Endpoints.KEEPALIVE_TIMEOUT.toNanos(), TimeUnit.NANOSECONDS)
                .keepAliveWithoutCalls(false)
                .disableRetry()
                .build();
    }

    /** Stops the event loop; call after the channels were shut down. */
    @Override
    public void close() {
        loop.shutdownGracefully(0, 2, TimeUnit.SECONDS);
    }
}
