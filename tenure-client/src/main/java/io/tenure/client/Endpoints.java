package io.tenure.client;

import io.grpc.Channel;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * The members a client may talk to, one channel each, and which of them is preferred. Every call
 * goes to the preferred member; a member that answers {@code UNAVAILABLE} passes the preference
 * to the next one, so all callers move together instead of each rediscovering the failure. A
 * follower that answers names its leader ({@code ResponseHeader.leader_endpoint}); when the
 * leader is one of these endpoints the preference moves there, since a follower forwards every
 * write to the leader, a hop that costs both members CPU and the caller time.
 */
final class Endpoints implements AutoCloseable {
    private final List<String> targets;
    private final List<ManagedChannel> channels;
    /** The channels of the keep-alive streams, one per endpoint, made on first use. */
    private final ManagedChannel[] keepAliveChannels;
    private volatile SessionStreams sessions;
    private final Function<String, ManagedChannel> keepAliveChannelFactory;
    private final AtomicInteger preferred = new AtomicInteger();
    private volatile boolean closed;

    Endpoints(List<String> targets, Function<String, ManagedChannel> channelFactory) {
        this(targets, channelFactory, channelFactory);
    }

    /**
     * @param keepAliveChannelFactory makes the channel that carries an endpoint's keep-alive stream;
     *                                made on first use
     */
    Endpoints(List<String> targets, Function<String, ManagedChannel> channelFactory,
              Function<String, ManagedChannel> keepAliveChannelFactory) {
        this.keepAliveChannelFactory = keepAliveChannelFactory;
        this.keepAliveChannels = new ManagedChannel[targets.size()];
        if (targets.isEmpty()) {
            throw new IllegalArgumentException("at least one endpoint is required");
        }
        this.targets = List.copyOf(targets);
        List<ManagedChannel> opened = new ArrayList<>(targets.size());
        try {
            for (String target : this.targets) {
                opened.add(channelFactory.apply(target));
            }
        } catch (RuntimeException e) {
            opened.forEach(ManagedChannel::shutdownNow);
            throw e;
        }
        this.channels = List.copyOf(opened);
    }

    /**
     * How often a connection with calls in flight is pinged (gRPC's minimum), and how long a ping
     * may go unanswered before the connection counts as broken. A member that is paused or whose
     * host vanished breaks no connection by itself; the pings do, so a lock wait on it fails with
     * {@code UNAVAILABLE} and moves on to another member instead of hanging. Tenure servers permit
     * pings every 5 s.
     */
    static final Duration KEEPALIVE_TIME = Duration.ofSeconds(10);
    static final Duration KEEPALIVE_TIMEOUT = Duration.ofSeconds(5);

    /** A plaintext channel to {@code host:port} ({@code [v6addr]:port} for IPv6); connects lazily. */
    static ManagedChannel plaintext(String endpoint) {
        return channel(endpoint, InsecureChannelCredentials.create());
    }

    /** A channel to {@code host:port} with {@code credentials} (plaintext or TLS); connects lazily. */
    static ManagedChannel channel(String endpoint, io.grpc.ChannelCredentials credentials) {
        return channel(endpoint, credentials, null);
    }

    /** As {@link #channel(String, io.grpc.ChannelCredentials)}, every call showing {@code token} as a bearer token (null: none). */
    static ManagedChannel channel(String endpoint, io.grpc.ChannelCredentials credentials, String token) {
        HostAndPort address = HostAndPort.parse(endpoint);
        io.grpc.ManagedChannelBuilder<?> builder = Grpc.newChannelBuilderForAddress(address.host(), address.port(), credentials);
        if (token != null) {
            builder.intercept(bearer(token));
        }
        return builder
                .keepAliveTime(KEEPALIVE_TIME.toNanos(), TimeUnit.NANOSECONDS)
                .keepAliveTimeout(KEEPALIVE_TIMEOUT.toNanos(), TimeUnit.NANOSECONDS)
                .keepAliveWithoutCalls(false)
                // The SDK retries itself, across members (FailoverCall, the keep-alive and watch
                // streams); gRPC's own retry layer only buffered every call for a replay it never
                // made: 6 % of the single-client lock rate here.
                .disableRetry()
                .build();
    }

    static final io.grpc.Metadata.Key<String> AUTHORIZATION = io.grpc.Metadata.Key.of("authorization", io.grpc.Metadata.ASCII_STRING_MARSHALLER);

    /** Adds {@code authorization: Bearer <token>} to every call (unary and streams alike). */
    static io.grpc.ClientInterceptor bearer(String token) {
        io.grpc.Metadata headers = new io.grpc.Metadata();
        headers.put(AUTHORIZATION, "Bearer " + token);
        return io.grpc.stub.MetadataUtils.newAttachHeadersInterceptor(headers);
    }

    /** An endpoint's host and port, checked. */
    record HostAndPort(String host, int port) {
        static HostAndPort parse(String endpoint) {
            if (endpoint == null) {
                throw new IllegalArgumentException("an endpoint is null; each must be host:port");
            }
            int colon = endpoint.lastIndexOf(':');
            if (colon <= 0 || colon == endpoint.length() - 1) {
                throw new IllegalArgumentException("endpoint '" + endpoint + "' must be host:port");
            }
            String host = endpoint.substring(0, colon);
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            }
            if (host.isBlank() || host.contains("/") || host.chars().anyMatch(Character::isWhitespace)) {
                throw new IllegalArgumentException("endpoint '" + endpoint + "' must be host:port, without a scheme or path");
            }
            int port;
            try {
                port = Integer.parseInt(endpoint.substring(colon + 1));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("endpoint '" + endpoint + "' has a non-numeric port");
            }
            if (port < 1 || port > 65535) {
                throw new IllegalArgumentException("endpoint '" + endpoint + "' has a port outside 1-65535");
            }
            return new HostAndPort(host, port);
        }
    }

    int size() {
        return targets.size();
    }

    /** The session streams that carry every kind's calls, or null when every call goes unary. */
    SessionStreams sessions() {
        return sessions;
    }

    void carrySessions(SessionStreams sessions) {
        this.sessions = sessions;
    }

    int preferred() {
        return preferred.get();
    }

    Channel channel(int index) {
        return channels.get(index);
    }

    /**
     * The channel of the keep-alive stream to the endpoint: with the default channels a connection
     * of its own, whose answers a transport thread of its own handles, so that keep-alives never
     * queue behind this process's other calls ({@link KeepAliveTransport}).
     *
     * @throws IllegalStateException once closed
     */
    synchronized Channel keepAliveChannel(int index) {
        if (closed) {
            throw new IllegalStateException("the client is closed");
        }
        ManagedChannel channel = keepAliveChannels[index];
        if (channel == null) {
            channel = keepAliveChannelFactory.apply(targets.get(index));
            keepAliveChannels[index] = channel;
        }
        return channel;
    }

    String target(int index) {
        return targets.get(index);
    }

    int next(int index) {
        return (index + 1) % targets.size();
    }

    /**
     * Moves the preference from the member that answered to the leader it named, when that is one
     * of these endpoints (spelled the same) and no other caller moved the preference meanwhile.
     */
    void leaderNamed(int answeredBy, String leaderEndpoint) {
        if (leaderEndpoint.isEmpty() || preferred.get() != answeredBy || leaderEndpoint.equals(targets.get(answeredBy))) {
            return;
        }
        int leader = targets.indexOf(leaderEndpoint);
        if (leader >= 0) {
            preferred.compareAndSet(answeredBy, leader);
        }
    }

    /** Moves the preference past a member that failed, unless another caller already moved it. */
    void failedOver(int failed) {
        preferred.compareAndSet(failed, next(failed));
    }

    /**
     * Where to retry after {@code failed} failed: the preferred member, which another caller may
     * have found working meanwhile, unless that is the one that just failed; then the next one.
     */
    int retryAfter(int failed) {
        failedOver(failed);
        int candidate = preferred.get();
        return candidate != failed ? candidate : next(failed);
    }

    boolean isClosed() {
        return closed;
    }

    @Override
    public void close() {
        List<ManagedChannel> all = new ArrayList<>(channels);
        synchronized (this) {
            closed = true;
            for (ManagedChannel channel : keepAliveChannels) {
                if (channel != null && !all.contains(channel)) {
                    all.add(channel);
                }
            }
        }
        all.forEach(ManagedChannel::shutdown);
        try {
            for (ManagedChannel channel : all) {
                // Bounded: in-flight calls were cancelled by their owners; don't hang a closing JVM.
                if (!channel.awaitTermination(2, TimeUnit.SECONDS)) {
                    channel.shutdownNow();
                }
            }
        } catch (InterruptedException e) {
            all.forEach(ManagedChannel::shutdownNow);
            Thread.currentThread().interrupt();
        }
    }
}
