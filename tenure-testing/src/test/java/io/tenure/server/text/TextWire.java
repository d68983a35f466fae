package io.tenure.server.text;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * A raw text-protocol connection for tests, written from the protocol alone: it sends a request's
 * three lines and reads lines back. {@link #call} returns the next line that is not a push
 * ({@code sig}, {@code watch}, {@code leader}); pushes read on the way are kept for {@link #push}.
 */
final class TextWire implements AutoCloseable {
    static final Duration ANSWER_LIMIT = Duration.ofSeconds(20);

    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;
    private final ArrayDeque<String> pushes = new ArrayDeque<>();

    TextWire(Socket socket) throws IOException {
        this.socket = socket;
        this.in = socket.getInputStream();
        this.out = socket.getOutputStream();
    }

    static TextWire open(int port) throws IOException {
        Socket socket = new Socket();
        socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
        socket.setTcpNoDelay(true);
        return new TextWire(socket);
    }

    /** Sends one request: command, key and argument lines. */
    void send(String command, String key, String arg) throws IOException {
        sendRaw(command + "\n" + key + "\n" + arg + "\n");
    }

    void sendRaw(String text) throws IOException {
        sendBytes(text.getBytes(StandardCharsets.UTF_8));
    }

    void sendBytes(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
    }

    /** Sends a request and returns its answer line (pushes before it are kept aside). */
    String call(String command, String key, String arg) throws IOException {
        send(command, key, arg);
        return answer();
    }

    /** The next line that is not a push, waiting up to {@link #ANSWER_LIMIT}. */
    String answer() throws IOException {
        while (true) {
            String line = line(ANSWER_LIMIT);
            if (line == null) {
                throw new IOException("the connection closed before an answer");
            }
            if (isPush(line)) {
                pushes.add(line);
            } else {
                return line;
            }
        }
    }

    /** The next push line, waiting up to {@code limit}; null when none came in time. */
    String push(Duration limit) throws IOException {
        if (!pushes.isEmpty()) {
            return pushes.poll();
        }
        long deadline = System.nanoTime() + limit.toNanos();
        while (System.nanoTime() < deadline) {
            String line;
            try {
                line = line(Duration.ofNanos(Math.max(1_000_000, deadline - System.nanoTime())));
            } catch (SocketTimeoutException e) {
                return null;
            }
            if (line == null) {
                return null;
            }
            if (isPush(line)) {
                return line;
            }
            throw new IOException("an answer came where a push was expected: " + line);
        }
        return null;
    }

    /** Push lines already read, in order. */
    List<String> pushesRead() {
        return new ArrayList<>(pushes);
    }

    /** Whether the member closed the connection within {@code limit} (reads and drops what comes before). */
    boolean closedWithin(Duration limit) throws IOException {
        long deadline = System.nanoTime() + limit.toNanos();
        try {
            while (System.nanoTime() < deadline) {
                socket.setSoTimeout((int) Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
                if (in.read() < 0) {
                    return true;
                }
            }
        } catch (SocketTimeoutException e) {
            return false;
        } catch (IOException reset) {
            return true;
        }
        return false;
    }

    /** One line without its LF, or null at the end of the stream. */
    private String line(Duration limit) throws IOException {
        socket.setSoTimeout((int) Math.max(1, limit.toMillis()));
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        while (true) {
            int b = in.read();
            if (b < 0) {
                return buffer.size() == 0 ? null : buffer.toString(StandardCharsets.UTF_8);
            }
            if (b == '\n') {
                return buffer.toString(StandardCharsets.UTF_8);
            }
            buffer.write(b);
        }
    }

    static boolean isPush(String line) {
        return line.startsWith("sig ") || line.startsWith("watch ") || line.startsWith("leader ");
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
