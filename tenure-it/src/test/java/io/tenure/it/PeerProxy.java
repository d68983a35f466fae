package io.tenure.it;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A member's peer-port proxy, for F11 (delay and loss on peer links): a process of its own,
 * started where the member runs (in its network namespace, if any), listening on the port the
 * other members know the member by and forwarding to the port the member binds
 * ({@code tenure server --peer-listen-port}). Every peer connection into the member, and so every
 * Raft message to it and every answer from it, passes through here.
 *
 * <pre>java io.tenure.it.PeerProxy LISTEN_HOST LISTEN_PORT TARGET_PORT</pre>
 *
 * Prints {@code listening} once it accepts. Reads commands on stdin, one per line:
 * <ul>
 *   <li>{@code delay MS LOSS} holds every chunk of bytes, both ways, for MS milliseconds; with
 *       probability LOSS (0..1) a chunk is held 200 ms longer, as TCP holds a segment that was
 *       lost until its retransmission, and every later chunk of the connection waits behind it
 *       (TCP delivers in order);</li>
 *   <li>{@code heal} forwards at once again.</li>
 * </ul>
 * It exits when stdin closes (its parent, the harness, went away).
 */
public final class PeerProxy {
    /** How long a "lost" chunk is held on top of the delay: TCP's minimum retransmission timeout. */
    static final long RETRANSMIT_MILLIS = 200;

    private static volatile long delayNanos;
    private static volatile double loss;

    private PeerProxy() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: PeerProxy LISTEN_HOST LISTEN_PORT TARGET_PORT");
            System.exit(64);
        }
        String host = args[0];
        int listenPort = Integer.parseInt(args[1]);
        int targetPort = Integer.parseInt(args[2]);
        ServerSocket listener = new ServerSocket();
        listener.setReuseAddress(true);
        listener.bind(new InetSocketAddress(InetAddress.getByName(host), listenPort), 50);
        Thread acceptor = new Thread(() -> accept(listener, new InetSocketAddress(host, targetPort)), "peer-proxy-accept");
        acceptor.setDaemon(true);
        acceptor.start();
        System.out.println("listening");
        System.out.flush();
        try (BufferedReader commands = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = commands.readLine()) != null) {
                String[] words = line.trim().split("\\s+");
                switch (words[0]) {
                    case "delay" -> {
                        delayNanos = TimeUnit.MILLISECONDS.toNanos(Long.parseLong(words[1]));
                        loss = Double.parseDouble(words[2]);
                        System.out.println("ok " + line.trim());
                    }
                    case "heal" -> {
                        delayNanos = 0;
                        loss = 0;
                        System.out.println("ok heal");
                    }
                    default -> System.out.println("unknown command: " + line);
                }
                System.out.flush();
            }
        }
        System.exit(0);
    }

    private static void accept(ServerSocket listener, InetSocketAddress target) {
        while (true) {
            Socket in;
            try {
                in = listener.accept();
            } catch (IOException e) {
                return;
            }
            Socket out = new Socket();
            try {
                out.connect(target, 2_000);
                in.setTcpNoDelay(true);
                out.setTcpNoDelay(true);
            } catch (IOException refused) {
                // The member is down: refuse, as the member itself would.
                closeQuietly(in);
                closeQuietly(out);
                continue;
            }
            pump(in, out);
            pump(out, in);
        }
    }

    /** One direction: a reader that stamps each chunk with its delivery time, a writer that waits for it. */
    private static void pump(Socket from, Socket to) {
        LinkedBlockingQueue<Object[]> chunks = new LinkedBlockingQueue<>();
        Thread reader = new Thread(() -> {
            byte[] buffer = new byte[64 * 1024];
            long lastDue = 0;
            try (InputStream input = from.getInputStream()) {
                int n;
                while ((n = input.read(buffer)) >= 0) {
                    long now = System.nanoTime();
                    long due = now + delayNanos;
                    if (loss > 0 && ThreadLocalRandom.current().nextDouble() < loss) {
                        due += TimeUnit.MILLISECONDS.toNanos(RETRANSMIT_MILLIS);
                    }
                    due = Math.max(due, lastDue); // in order, as TCP delivers
                    lastDue = due;
                    chunks.add(new Object[] {Arrays.copyOf(buffer, n), due});
                }
            } catch (IOException closed) {
                // the other side went away
            }
            chunks.add(new Object[] {null, 0L});
        }, "peer-proxy-read");
        Thread writer = new Thread(() -> {
            try (OutputStream output = to.getOutputStream()) {
                while (true) {
                    Object[] chunk = chunks.take();
                    if (chunk[0] == null) {
                        break;
                    }
                    long wait = (long) chunk[1] - System.nanoTime();
                    if (wait > 0) {
                        TimeUnit.NANOSECONDS.sleep(wait); // the delay being injected, not a wait for a condition
                    }
                    output.write((byte[]) chunk[0]);
                    output.flush();
                }
            } catch (IOException | InterruptedException closed) {
                // the other side went away
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "peer-proxy-write");
        reader.setDaemon(true);
        writer.setDaemon(true);
        reader.start();
        writer.start();
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing
        }
    }
}
