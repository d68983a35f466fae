package io.tenure.it;

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
 * A TCP proxy on 127.0.0.1 in front of one member, to cut a client off without touching the
 * member: {@link #blackhole()} keeps every connection open but drops the bytes both ways (a
 * partition as a client sees it: no error, no answer), {@link #heal()} forwards again.
 */
final class FaultProxy implements AutoCloseable {
    private final ServerSocket listener;
    private final int upstreamPort;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile boolean blackholed;
    private volatile boolean closed;

    FaultProxy(int upstreamPort) throws IOException {
        this.upstreamPort = upstreamPort;
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::accept, "fault-proxy-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** The endpoint clients should use instead of the member's. */
    String endpoint() {
        return "127.0.0.1:" + listener.getLocalPort();
    }

    void blackhole() {
        blackholed = true;
    }

    void heal() {
        blackholed = false;
    }

    private void accept() {
        while (!closed) {
            try {
                Socket client = listener.accept();
                Socket upstream = new Socket();
                upstream.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), upstreamPort), 5_000);
                sockets.add(client);
                sockets.add(upstream);
                pump(client, upstream);
                pump(upstream, client);
            } catch (IOException e) {
                if (!closed) {
                    System.err.println("fault proxy: " + e);
                }
            }
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
                // One side closed: close the other below.
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "fault-proxy-pump");
        pump.setDaemon(true);
        pump.start();
    }

    @Override
    public void close() {
        closed = true;
        closeQuietly(listener);
        sockets.forEach(FaultProxy::closeQuietly);
    }

    private static void closeQuietly(java.io.Closeable c) {
        try {
            c.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }
}
