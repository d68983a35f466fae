package io.tenure.it;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP proxy on 127.0.0.1 in front of a member's client port (on 127.0.0.1 or in a test's own
 * network namespace), to cut a client off without
 * touching the member. The upstream can be set later (a member that joins) or be none (the
 * connection is refused, as by a dead member). {@link #blackhole()} keeps connections open but
 * drops every byte both ways, which is a partition as the client sees it; {@link #heal()}
 * forwards again and closes the connections that lost bytes, so the client reconnects cleanly.
 */
public final class FaultProxy implements AutoCloseable {
    private final ServerSocket listener;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    /** Where connections go; null: nowhere. */
    private volatile InetSocketAddress upstream;
    private volatile boolean blackholed;
    private volatile boolean closed;

    /** A proxy to {@code upstreamPort} on 127.0.0.1. */
    public FaultProxy(int upstreamPort) throws IOException {
        this("member-" + upstreamPort);
        upstream(upstreamPort);
    }

    /** A proxy with nothing behind it yet (see {@link #upstream(int)}); {@code name} names its threads. */
    public FaultProxy(String name) throws IOException {
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::accept, "fault-proxy-" + name);
        acceptor.setDaemon(true);
        acceptor.start();
    }

    public String endpoint() {
        return "127.0.0.1:" + listener.getLocalPort();
    }

    /** Points the link at a member's client port on 127.0.0.1 (0: nothing behind it); open connections are closed. */
    public void upstream(int port) {
        upstream("127.0.0.1", port);
    }

    /** Points the link at {@code host:port} (port 0: nothing behind it); open connections are closed. */
    public void upstream(String host, int port) {
        upstream = port == 0 ? null : new InetSocketAddress(host, port);
        dropConnections();
    }

    public void blackhole() {
        blackholed = true;
    }

    public void heal() {
        if (blackholed) {
            blackholed = false;
            dropConnections();
        }
    }

    private void accept() {
        while (!closed) {
            Socket client;
            try {
                client = listener.accept();
            } catch (IOException e) {
                continue; // closed, or a failed accept: the loop condition decides
            }
            InetSocketAddress target = this.upstream;
            Socket upstream = new Socket();
            try {
                if (target == null) {
                    throw new IOException("no member behind this link");
                }
                upstream.connect(target, 2_000);
            } catch (IOException refused) {
                closeQuietly(client);
                closeQuietly(upstream);
                continue;
            }
            sockets.add(client);
            sockets.add(upstream);
            pump(client, upstream);
            pump(upstream, client);
        }
    }

    private void pump(Socket from, Socket to) {
        Thread pump = new Thread(() -> {
            byte[] buffer = new byte[16 * 1024];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buffer)) >= 0) {
                    if (!blackholed) {
                        out.write(buffer, 0, n);
                        out.flush();
                    }
                }
            } catch (IOException endOfConnection) {
                // one side closed: close the other below
            } finally {
                closeQuietly(from);
                closeQuietly(to);
                sockets.remove(from);
                sockets.remove(to);
            }
        }, "fault-proxy-pump");
        pump.setDaemon(true);
        pump.start();
    }

    private void dropConnections() {
        sockets.forEach(FaultProxy::closeQuietly);
    }

    @Override
    public void close() {
        closed = true;
        closeQuietly(listener);
        dropConnections();
    }

    private static void closeQuietly(Closeable c) {
        try {
            c.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }
}
