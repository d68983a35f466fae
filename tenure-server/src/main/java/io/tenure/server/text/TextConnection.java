package io.tenure.server.text;

import io.grpc.netty.shaded.io.netty.buffer.ByteBuf;
import io.grpc.netty.shaded.io.netty.channel.Channel;
import io.grpc.netty.shaded.io.netty.channel.ChannelFutureListener;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandlerContext;
import io.grpc.netty.shaded.io.netty.channel.ChannelInboundHandlerAdapter;
import io.grpc.netty.shaded.io.netty.channel.socket.ChannelInputShutdownEvent;
import io.grpc.netty.shaded.io.netty.util.concurrent.ScheduledFuture;
import io.tenure.server.Member;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One text connection's I/O, on its Netty event loop: lines (LF-terminated, every CR removed, at
 * most {@link #MAX_LINE_BYTES} bytes) grouped three to a request, requests served strictly one
 * after another in arrival order, one answer line each, and push lines written between answers.
 *
 * <ul>
 *   <li>An oversized line is read to its LF, answered {@code error}, and the connection closed (dflockd's code 12).</li>
 *   <li>{@code --read-timeout}: while the member waits for the client's next line (not while a request is
 *       served), a silence that long closes the connection (code 10).</li>
 *   <li>{@code --write-timeout}: an answer or push that has not left within it closes the connection; so does a
 *       client with more than {@link #MAX_UNREAD_PUSHES} pushes not yet taken by the socket.</li>
 *   <li>Requests sent ahead of their answers are queued; past {@link #MAX_QUEUED} the member stops reading the
 *       socket until the queue drains, so a flood of requests costs the flooder its own TCP window, not memory. No
 *       request is served while the answers already written wait for the client to read them.</li>
 * </ul>
 */
final class TextConnection extends ChannelInboundHandlerAdapter implements TextSession.Wire {
    private static final Logger LOG = LoggerFactory.getLogger(TextConnection.class);
    /** dflockd's MaxLineBytes. */
    static final int MAX_LINE_BYTES = 256;
    /** Requests received and not yet answered before the member stops reading the connection. */
    static final int MAX_QUEUED = 64;
    /** Push lines the client has not read, past which it is a slow consumer and is dropped (dflockd's 64-entry channel). */
    static final int MAX_UNREAD_PUSHES = 64;

    private final TextCommands commands;
    private final TextSettings settings;
    private final long id;
    private final Member member;
    private final ScheduledExecutorService timer;
    private final Runnable onClosed;

    private Channel channel;
    private TextSession session;
    private final byte[] line = new byte[MAX_LINE_BYTES];
    private int lineLength;
    private boolean oversized;
    private final List<String> lines = new ArrayList<>(3);
    private final ArrayDeque<TextRequest> queue = new ArrayDeque<>();
    private boolean serving;
    private boolean closing;
    /** The client shut down its sending side (nc -N, or -q): the requests already sent are served, then the connection closes. */
    private boolean inputEnded;
    private ScheduledFuture<?> readDeadline;
    private final AtomicInteger unreadPushes = new AtomicInteger();
    /** Pushes to write right after the answer being prepared. */
    private final java.util.concurrent.ConcurrentLinkedQueue<String> afterAnswer = new java.util.concurrent.ConcurrentLinkedQueue<>();

    TextConnection(long id, Member member, TextSettings settings, TextCommands commands, ScheduledExecutorService timer, Runnable onClosed) {
        this.id = id;
        this.member = member;
        this.settings = settings;
        this.commands = commands;
        this.timer = timer;
        this.onClosed = onClosed;
    }

    @Override
    public String remote() {
        Channel open = channel;
        return open != null && open.remoteAddress() instanceof java.net.InetSocketAddress address
                ? address.getAddress().getHostAddress() + ":" + address.getPort() : "";
    }

    @Override
    public java.security.cert.X509Certificate certificate() {
        Channel open = channel;
        io.grpc.netty.shaded.io.netty.handler.ssl.SslHandler tls = open == null ? null
                : open.pipeline().get(io.grpc.netty.shaded.io.netty.handler.ssl.SslHandler.class);
        if (tls == null) {
            return null;
        }
        try {
            java.security.cert.Certificate[] chain = tls.engine().getSession().getPeerCertificates();
            return chain.length > 0 && chain[0] instanceof java.security.cert.X509Certificate x509 ? x509 : null;
        } catch (javax.net.ssl.SSLPeerUnverifiedException none) {
            return null;
        }
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        channel = ctx.channel();
        session = new TextSession(id, member, settings, timer, this);
        armReadDeadline();
        ctx.fireChannelActive();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        closing = true;
        cancelReadDeadline();
        queue.clear();
        session.close();
        onClosed.run();
        ctx.fireChannelInactive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf in = (ByteBuf) msg;
        try {
            while (in.isReadable() && !closing) {
                byte b = in.readByte();
                if (b == '\n') {
                    endOfLine();
                } else if (b == '\r') {
                    // redis-feats strips every CR of a line
                } else if (oversized) {
                    // drained to the LF
                } else if (lineLength == MAX_LINE_BYTES) {
                    oversized = true;
                } else {
                    line[lineLength++] = b;
                }
            }
        } finally {
            in.release();
        }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (channel.isWritable()) {
            serveNext();
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object event) {
        if (event instanceof ChannelInputShutdownEvent) {
            inputEnded = true;
            cancelReadDeadline();
            session.clientGone();
            closeIfDone();
            return;
        }
        ctx.fireUserEventTriggered(event);
    }

    private void closeIfDone() {
        if (inputEnded && !serving && queue.isEmpty() && !closing) {
            closing = true;
            channel.writeAndFlush(io.grpc.netty.shaded.io.netty.buffer.Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        LOG.debug("event=text_connection_error connection={} error=\"{}\"", id, cause.toString());
        ctx.close();
    }

    private void endOfLine() {
        if (oversized) {
            LOG.info("event=text_line_too_long connection={} limit_bytes={} code=12", id, MAX_LINE_BYTES);
            closing = true;
            channel.writeAndFlush(wire("error")).addListener(ChannelFutureListener.CLOSE);
            return;
        }
        lines.add(new String(line, 0, lineLength, StandardCharsets.UTF_8));
        lineLength = 0;
        armReadDeadline();
        if (lines.size() == 3) {
            queue.add(new TextRequest(lines.get(0), lines.get(1), lines.get(2)));
            lines.clear();
            if (queue.size() >= MAX_QUEUED) {
                channel.config().setAutoRead(false);
            }
            serveNext();
        }
    }

    /** Serves the next queued request, if none is being served; on the event loop. */
    private void serveNext() {
        if (serving || closing || queue.isEmpty() || !channel.isWritable()) {
            // Not writable: the client is not reading its answers. The next request waits until it
            // does, so the queue fills, reading stops, and TCP holds the client back; the write
            // timeout ends a client that never reads.
            return;
        }
        TextRequest request = queue.poll();
        if (queue.size() < MAX_QUEUED / 4 && !channel.config().isAutoRead()) {
            channel.config().setAutoRead(true);
        }
        serving = true;
        cancelReadDeadline();
        CompletableFuture<String> answer;
        try {
            answer = commands.serve(session, request);
        } catch (RuntimeException e) {
            answer = CompletableFuture.failedFuture(e);
        }
        answer.whenComplete((reply, error) -> {
            String text = error == null ? reply : commands.refusal(session, request, io.tenure.server.Causes.unwrap(error));
            if (channel.eventLoop().inEventLoop()) {
                answered(text);
            } else {
                channel.eventLoop().execute(() -> answered(text));
            }
        });
    }

    private void answered(String reply) {
        serving = false;
        Runnable undelivered = session.takeUndelivered();
        if (closing) {
            if (undelivered != null) {
                undelivered.run();
            }
            return;
        }
        if (reply.startsWith(TextCommands.CLOSE_AFTER)) {
            closing = true;
            channel.writeAndFlush(wire(reply.substring(TextCommands.CLOSE_AFTER.length()))).addListener(ChannelFutureListener.CLOSE);
            return;
        }
        if (undelivered == null) {
            channel.writeAndFlush(wire(reply));
        } else {
            channel.writeAndFlush(wire(reply)).addListener(written -> {
                if (!written.isSuccess()) {
                    undelivered.run();
                }
            });
        }
        for (String line = afterAnswer.poll(); line != null; line = afterAnswer.poll()) {
            push(line);
        }
        armReadDeadline();
        serveNext();
        closeIfDone();
    }

    @Override
    public void push(String pushLine) {
        if (closing) {
            return;
        }
        if (unreadPushes.incrementAndGet() > MAX_UNREAD_PUSHES && !channel.isWritable()) {
            close("slow consumer: " + MAX_UNREAD_PUSHES + " pushes not read");
            return;
        }
        channel.writeAndFlush(wire(pushLine)).addListener(f -> unreadPushes.decrementAndGet());
    }

    @Override
    public void pushAfterAnswer(String line) {
        afterAnswer.add(line);
    }

    @Override
    public void close(String reason) {
        LOG.info("event=text_connection_dropped connection={} reason=\"{}\"", id, reason);
        channel.close();
    }

    private ByteBuf wire(String text) {
        byte[] bytes = (text + "\n").getBytes(StandardCharsets.UTF_8);
        return channel.alloc().buffer(bytes.length).writeBytes(bytes);
    }

    private void armReadDeadline() {
        cancelReadDeadline();
        if (serving || closing || inputEnded) {
            return;
        }
        readDeadline = channel.eventLoop().schedule(() -> {
            if (!serving && !closing) {
                LOG.info("event=text_read_timeout connection={} timeout_ms={} code=10", id, settings.readTimeout().toMillis());
                closing = true;
                channel.close();
            }
        }, settings.readTimeout().toMillis(), TimeUnit.MILLISECONDS);
    }

    private void cancelReadDeadline() {
        if (readDeadline != null) {
            readDeadline.cancel(false);
            readDeadline = null;
        }
    }
}
