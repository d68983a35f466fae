package io.tenure.server.text;

import io.grpc.netty.shaded.io.netty.bootstrap.ServerBootstrap;
import io.grpc.netty.shaded.io.netty.channel.Channel;
import io.grpc.netty.shaded.io.netty.channel.ChannelInitializer;
import io.grpc.netty.shaded.io.netty.channel.ChannelOption;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.WriteBufferWaterMark;
import io.grpc.netty.shaded.io.netty.channel.nio.NioEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.SocketChannel;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioServerSocketChannel;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import io.grpc.netty.shaded.io.netty.handler.timeout.WriteTimeoutHandler;
import io.tenure.server.Member;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The text front end of a member: dflockd's line protocol on {@code --text-port}, every
 * connection a session ({@link TextSession}) over the member's services, on Netty's event loops
 * (no thread per connection, none per blocked request). TLS 1.2 or later when given a
 * certificate; {@code --max-connections} counts text connections too.
 */
public final class TextFront implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(TextFront.class);

    private final Member member;
    private final TextSettings settings;
    private final EventLoopGroup boss;
    private final EventLoopGroup workers;
    private final ScheduledExecutorService timer;
    private final Channel server;
    private final AtomicInteger open = new AtomicInteger();
    private final AtomicLong ids = new AtomicLong();

    private TextFront(Member member, TextSettings settings, String host, int maxConnections,
            io.tenure.server.security.TlsKeys keys, io.tenure.server.security.Gate gate) throws IOException {
        this.member = member;
        this.settings = settings;
        SslContext tls = tls(keys);
        ScheduledThreadPoolExecutor t = new ScheduledThreadPoolExecutor(1, daemon("tenure-text-timer"));
        t.setRemoveOnCancelPolicy(true);
        this.timer = t;
        this.boss = new NioEventLoopGroup(1, daemon("tenure-text-accept"));
        this.workers = new NioEventLoopGroup(Math.max(2, Runtime.getRuntime().availableProcessors()), daemon("tenure-text"));
        TextCommands commands = new TextCommands(settings, this, gate);
        ServerBootstrap bootstrap = new ServerBootstrap()
                .group(boss, workers)
                .channel(NioServerSocketChannel.class)
                .option(ChannelOption.SO_BACKLOG, 1024)
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.ALLOW_HALF_CLOSURE, true)
                .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(32 * 1024, 64 * 1024))
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        if (maxConnections > 0 && open.get() >= maxConnections) {
                            LOG.warn("event=text_connection_refused reason=\"max connections\" limit={}", maxConnections);
                            ch.close();
                            return;
                        }
                        open.incrementAndGet();
                        if (tls != null) {
                            ch.pipeline().addLast(tls.newHandler(ch.alloc()));
                        }
                        ch.pipeline().addLast(new WriteTimeoutHandler(settings.writeTimeout().toMillis(), TimeUnit.MILLISECONDS));
                        ch.pipeline().addLast(new TextConnection(ids.incrementAndGet(), member, settings, commands, timer, open::decrementAndGet));
                    }
                });
        try {
            this.server = bootstrap.bind(new InetSocketAddress(host, settings.port())).sync().channel();
        } catch (Exception e) {
            closeLoops();
            throw new IOException("cannot listen for text connections on " + host + ":" + settings.port() + ": " + e.getMessage(), e);
        }
        member.metrics().textGauges(open::get);
    }

    /** Starts the text front end of {@code member} on {@code host}; {@code settings} must be enabled. */
    public static TextFront start(Member member, TextSettings settings, String host, int maxConnections) throws IOException {
        return start(member, settings, host, maxConnections, null, null);
    }

    /**
     * Starts the text front on {@code host:settings.port()}; with {@code tls}, TLS 1.2 or later
     * with the member's (reloading) certificate, and client certificates where it asks for them;
     * with {@code gate}, a connection must {@code auth} with a user's token while authentication is on.
     */
    public static TextFront start(Member member, TextSettings settings, String host, int maxConnections,
            io.tenure.server.security.TlsKeys tls, io.tenure.server.security.Gate gate) throws IOException {
        return new TextFront(member, settings, host, maxConnections, tls, gate);
    }

    /** The port it listens on (the one picked when the setting was 0). */
    public int port() {
        return ((InetSocketAddress) server.localAddress()).getPort();
    }

    /** Text connections open now. */
    public int connections() {
        return open.get();
    }

    Member member() {
        return member;
    }

    TextSettings settings() {
        return settings;
    }

    @Override
    public void close() {
        server.close().awaitUninterruptibly(2, TimeUnit.SECONDS);
        closeLoops();
    }

    private void closeLoops() {
        boss.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        workers.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        timer.shutdownNow();
    }

    private static SslContext tls(io.tenure.server.security.TlsKeys keys) throws IOException {
        return keys == null ? null : keys.textContext();
    }

    private static ThreadFactory daemon(String name) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, name + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }
}
