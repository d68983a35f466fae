package io.tenure.it.net;

import io.tenure.testing.ChildJava;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.Writer;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A tiny process to run inside a member's namespace: a TCP echo listener on the member's address,
 * and a prober that connects from that namespace to any address on request. Together they tell
 * which links of a {@link NetLab} carry traffic.
 *
 * <p>Protocol (one line each): it prints {@code listening HOST:PORT} once bound; each stdin line
 * {@code probe HOST PORT TIMEOUT_MS} is answered with {@code probe OUTCOME DETAIL}; end of stdin
 * ends it (so it never outlives the test JVM that feeds it).
 */
public final class EchoAgent {
    /** What one connection attempt found. */
    public enum Outcome {
        /** Connected and the echo came back. */
        OK,
        /** No answer in time, or the local firewall refused to send (EPERM): the link is cut. */
        BLOCKED,
        /** The peer answered with a reset: packets flow, nothing listens. */
        REFUSED,
        /** Anything else (no route, the echo differed, ...). */
        ERROR
    }

    private EchoAgent() {
    }

    public static void main(String[] args) throws IOException {
        InetAddress host = InetAddress.getByName(args[0]);
        ServerSocket listener = new ServerSocket();
        listener.setReuseAddress(true);
        listener.bind(new InetSocketAddress(host, Integer.parseInt(args[1])), 50);
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        Thread acceptor = new Thread(() -> accept(listener), "echo-accept");
        acceptor.setDaemon(true);
        acceptor.start();
        out.println("listening " + args[0] + ":" + listener.getLocalPort());
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] words = line.trim().split("\\s+");
            if (words.length == 4 && words[0].equals("probe")) {
                Probe result = probe(words[1], Integer.parseInt(words[2]), Duration.ofMillis(Long.parseLong(words[3])));
                out.println("probe " + result.outcome() + " " + result.detail());
            } else {
                out.println("probe " + Outcome.ERROR + " unknown request: " + line);
            }
        }
        System.exit(0);
    }

    private static void accept(ServerSocket listener) {
        while (true) {
            try {
                Socket socket = listener.accept();
                Thread echo = new Thread(() -> echo(socket), "echo");
                echo.setDaemon(true);
                echo.start();
            } catch (IOException e) {
                return;
            }
        }
    }

    private static void echo(Socket socket) {
        try (socket) {
            BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
            OutputStream out = socket.getOutputStream();
            String line;
            while ((line = in.readLine()) != null) {
                out.write((line + "\n").getBytes(StandardCharsets.UTF_8));
                out.flush();
            }
        } catch (IOException ended) {
            // The prober hung up.
        }
    }

    /** One attempt's outcome, with what the socket said. */
    public record Probe(Outcome outcome, String detail) {
    }

    /**
     * Connects to {@code host:port} from this process's namespace, sends a line and waits for it
     * to come back, all within {@code timeout}.
     */
    public static Probe probe(String host, int port, Duration timeout) {
        String token = "ping-" + System.nanoTime();
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, port), (int) timeout.toMillis());
            socket.setSoTimeout((int) timeout.toMillis());
            socket.getOutputStream().write((token + "\n").getBytes(StandardCharsets.UTF_8));
            String back = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8)).readLine();
            return token.equals(back) ? new Probe(Outcome.OK, "echoed") : new Probe(Outcome.ERROR, "echo was " + back);
        } catch (SocketTimeoutException e) {
            return new Probe(Outcome.BLOCKED, "no answer within " + timeout.toMillis() + " ms");
        } catch (ConnectException e) {
            String text = String.valueOf(e.getMessage());
            if (text.contains("refused")) {
                return new Probe(Outcome.REFUSED, text);
            }
            if (text.contains("not permitted")) {
                return new Probe(Outcome.BLOCKED, text);
            }
            return new Probe(Outcome.ERROR, text);
        } catch (IOException e) {
            return new Probe(Outcome.ERROR, e.toString());
        }
    }

    /**
     * An echo agent running in a member's namespace: started with {@link NetLab#wrap}, probed
     * through its stdin. {@link #close()} ends it by closing its stdin, then by pid.
     */
    public static final class Handle implements AutoCloseable {
        private final String member;
        private final Process process;
        private final Writer stdin;
        private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();

        private Handle(String member, Process process) {
            this.member = member;
            this.process = process;
            this.stdin = new java.io.OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
            Thread reader = new Thread(this::read, "echo-agent-" + member);
            reader.setDaemon(true);
            reader.start();
        }

        /** Starts an agent in {@code member}'s namespace listening on its address and {@code port}; waits until it listens. */
        public static Handle start(NetLab lab, String member, int port, Duration limit) throws IOException {
            List<String> java = new java.util.ArrayList<>(ChildJava.command("-Xmx32m", EchoAgent.class.getName()));
            java.addAll(List.of(lab.address(member), Integer.toString(port)));
            Process process = new ProcessBuilder(lab.wrap(member, java)).redirectErrorStream(true).start();
            Handle handle = new Handle(member, process);
            try {
                String first = handle.next(limit);
                if (first == null || !first.startsWith("listening ")) {
                    throw new IOException("echo agent in " + member + " did not listen within " + limit + ": " + first);
                }
                return handle;
            } catch (IOException | RuntimeException e) {
                handle.close();
                throw e;
            }
        }

        private void read() {
            try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = out.readLine()) != null) {
                    lines.add(line);
                }
            } catch (IOException ended) {
                // The agent ended.
            }
        }

        private String next(Duration limit) throws IOException {
            long deadline = System.nanoTime() + limit.toNanos();
            while (true) {
                try {
                    String line = lines.poll(Math.min(50, Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()))),
                            TimeUnit.MILLISECONDS);
                    if (line != null) {
                        return line;
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted waiting for the echo agent in " + member);
                }
                if (!process.isAlive() && lines.isEmpty()) {
                    throw new IOException("echo agent in " + member + " exited with " + process.exitValue());
                }
                if (System.nanoTime() - deadline > 0) {
                    return null;
                }
            }
        }

        /** Connects from this agent's namespace to {@code host:port} (see {@link EchoAgent#probe}). */
        public synchronized Probe probe(String host, int port, Duration timeout) throws IOException {
            stdin.write("probe " + host + " " + port + " " + timeout.toMillis() + "\n");
            stdin.flush();
            Duration limit = timeout.multipliedBy(3).plusSeconds(10);
            String line = next(limit);
            if (line == null) {
                throw new IOException("echo agent in " + member + " did not answer a probe within " + limit);
            }
            String[] parts = line.split(" ", 3);
            if (parts.length < 2 || !parts[0].equals("probe")) {
                throw new IOException("echo agent in " + member + " said: " + line);
            }
            return new Probe(Outcome.valueOf(parts[1]), parts.length > 2 ? parts[2] : "");
        }

        public long pid() {
            return process.pid();
        }

        @Override
        public void close() {
            try {
                stdin.close();
            } catch (IOException ignored) {
                // Ending it by pid below.
            }
            try {
                if (!process.waitFor(10, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                    process.waitFor(10, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                process.destroyForcibly();
            }
        }
    }
}
