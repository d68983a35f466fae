package io.tenure.bench;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.HdrHistogram.Histogram;

/**
 * T1 and T2: W1 and W2 through the text (dflockd) protocol, one TCP connection per client to the
 * leader, as a dflockd client holds one. T1: each connection locks and unlocks its own key
 * ({@code l} then {@code r}), one op a cycle. T2: every connection on one key, one op a hand-off,
 * with the per-connection counts (FIFO) and the waits.
 */
final class TextLocks {
    private static final int WAIT_S = 30;

    private TextLocks() {
    }

    static BenchResult uncontended(Members members, BenchSettings s) throws Exception {
        return run(members, s, client -> "bench/t1/" + client, false);
    }

    static BenchResult contended(Members members, BenchSettings s) throws Exception {
        return run(members, s, client -> "bench/t2", true);
    }

    private static BenchResult run(Members members, BenchSettings s, java.util.function.IntFunction<String> keyOf, boolean shared)
            throws Exception {
        int leader = members.leader(Duration.ofSeconds(30));
        int port = members.textPorts().get(leader);
        List<Line> lines = new ArrayList<>();
        try {
            for (int i = 0; i < s.clients(); i++) {
                lines.add(Line.open(port));
            }
            Exclusion exclusion = new Exclusion();
            Window window = new Window(s.warmup(), s.duration());
            CpuMeter cpu = CpuMeter.during(members, window);
            Histogram[] latencies = new Histogram[s.clients()];
            long[] ops = new long[s.clients()];
            AtomicReference<Throwable> failure = new AtomicReference<>();
            List<Thread> threads = new ArrayList<>();
            long ttlSeconds = Math.max(1, s.ttl().toSeconds());
            for (int i = 0; i < s.clients(); i++) {
                int client = i;
                latencies[i] = Latencies.histogram();
                Thread thread = new Thread(() -> {
                    Line line = lines.get(client);
                    String key = keyOf.apply(client);
                    String lockArg = WAIT_S + " " + ttlSeconds;
                    try {
                        while (!window.over(System.nanoTime()) && failure.get() == null) {
                            long began = System.nanoTime();
                            String grant = line.call("l", key, lockArg);
                            long granted = System.nanoTime();
                            if (!grant.startsWith("ok ")) {
                                throw new IllegalStateException("l " + key + " answered '" + grant + "'");
                            }
                            exclusion.enter(key);
                            exclusion.exit(key);
                            String token = grant.substring(3, grant.indexOf(' ', 3));
                            String released = line.call("r", key, token);
                            if (!released.equals("ok")) {
                                throw new IllegalStateException("r " + key + " answered '" + released + "'");
                            }
                            long ended = System.nanoTime();
                            long end = shared ? granted : ended;
                            if (window.counts(began, end)) {
                                Latencies.recordNanos(latencies[client], end - began);
                                ops[client]++;
                            }
                        }
                    } catch (Throwable t) {
                        failure.compareAndSet(null, t);
                    }
                }, "bench-text-" + i);
                thread.start();
                threads.add(thread);
            }
            for (Thread t : threads) {
                t.join();
            }
            if (failure.get() != null) {
                throw new IllegalStateException(s.workload() + " connection failed: " + failure.get(), failure.get());
            }
            Histogram all = Latencies.histogram();
            long total = 0;
            long min = Long.MAX_VALUE;
            long max = 0;
            List<Long> counts = new ArrayList<>();
            for (int i = 0; i < s.clients(); i++) {
                all.add(latencies[i]);
                total += ops[i];
                min = Math.min(min, ops[i]);
                max = Math.max(max, ops[i]);
                counts.add(ops[i]);
            }
            Map<String, Object> x = new LinkedHashMap<>();
            x.put("protocol", "text");
            x.put("connections", s.clients());
            x.put("to_member", "leader");
            if (shared) {
                x.put("acquisitions", counts);
                x.put("wait_p50_ms", BenchResult.round(Latencies.ms(all, 50)));
                x.put("wait_p99_ms", BenchResult.round(Latencies.ms(all, 99)));
                x.put("fairness_min_over_max", max == 0 ? 0 : BenchResult.round((double) min / max));
            }
            cpu.report(total, window.seconds(), x);
            return new BenchResult(s.label(), s.workload(), s.clients(), window.seconds(), total, total / window.seconds(),
                    Latencies.ms(all, 50), Latencies.ms(all, 99), Latencies.maxMs(all), exclusion.overlaps(), x);
        } finally {
            for (Line line : lines) {
                line.close();
            }
        }
    }

    /** One text connection: a request is three lines, its answer one line. */
    private static final class Line implements AutoCloseable {
        private final Socket socket;
        private final OutputStream out;
        private final InputStream in;
        private final byte[] buffer = new byte[512];

        private Line(Socket socket) throws IOException {
            this.socket = socket;
            this.out = socket.getOutputStream();
            this.in = new BufferedInputStream(socket.getInputStream(), 4096);
        }

        static Line open(int port) throws IOException {
            Socket socket = new Socket();
            socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
            socket.setTcpNoDelay(true);
            socket.setSoTimeout(120_000);
            return new Line(socket);
        }

        String call(String command, String key, String arg) throws IOException {
            out.write((command + "\n" + key + "\n" + arg + "\n").getBytes(StandardCharsets.UTF_8));
            out.flush();
            int n = 0;
            while (true) {
                int b = in.read();
                if (b < 0) {
                    throw new IOException("the member closed the connection");
                }
                if (b == '\n') {
                    return new String(buffer, 0, n, StandardCharsets.UTF_8);
                }
                if (n < buffer.length) {
                    buffer[n++] = (byte) b;
                }
            }
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }
}
