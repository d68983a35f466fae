package io.tenure.it;

import io.tenure.testing.ChildJava;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The {@link PeerProxy} processes of a cluster's members, one per member, started where the
 * member runs, and the commands that delay its peer links and heal them (F11).
 */
public final class PeerProxies implements AutoCloseable {
    private static final Duration ANSWER_LIMIT = Duration.ofSeconds(30);

    private record Running(Process process, OutputStream commands, BlockingQueue<String> answers) {}

    private final Map<String, Running> proxies = new ConcurrentHashMap<>();

    /**
     * Starts {@code member}'s proxy: listening on {@code host:listenPort} (where the others reach
     * the member), forwarding to {@code host:targetPort} (what the member binds); returns once it
     * accepts. Its output goes to {@code logFile}'s sibling {@code NAME.proxy.log}.
     */
    public void start(String member, Placement placement, String host, int listenPort, int targetPort, Path logFile)
            throws IOException {
        List<String> java = new ArrayList<>(ChildJava.command(PeerProxy.class.getName()));
        java.addAll(List.of(host, Integer.toString(listenPort), Integer.toString(targetPort)));
        Path log = logFile.resolveSibling(member + ".proxy.log");
        Files.createDirectories(log.getParent());
        Process process = new ProcessBuilder(placement.wrap(member, java))
                .redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .start();
        BlockingQueue<String> answers = new LinkedBlockingQueue<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = out.readLine()) != null) {
                    answers.add(line);
                }
            } catch (IOException ended) {
                // the proxy exited
            }
        }, "peer-proxy-" + member + "-output");
        reader.setDaemon(true);
        reader.start();
        Running running = new Running(process, process.getOutputStream(), answers);
        proxies.put(member, running);
        expect(member, running, "listening");
    }

    /** Delays {@code member}'s peer links by {@code delay} (both ways) and holds {@code lossRatio} of the chunks 200 ms more. */
    public void delay(String member, Duration delay, double lossRatio) throws IOException {
        command(member, String.format(Locale.ROOT, "delay %d %.4f", delay.toMillis(), lossRatio), "ok delay");
    }

    public void heal(String member) throws IOException {
        command(member, "heal", "ok heal");
    }

    public boolean has(String member) {
        return proxies.containsKey(member);
    }

    private void command(String member, String line, String expected) throws IOException {
        Running running = proxies.get(member);
        if (running == null) {
            throw new IllegalArgumentException("no peer proxy for " + member);
        }
        running.commands.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        running.commands.flush();
        expect(member, running, expected);
    }

    private static void expect(String member, Running running, String prefix) throws IOException {
        long deadline = System.nanoTime() + ANSWER_LIMIT.toNanos();
        while (true) {
            String answer;
            try {
                answer = running.answers.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted waiting for the peer proxy of " + member);
            }
            if (answer == null) {
                throw new IOException("the peer proxy of " + member + " did not answer '" + prefix + "' within " + ANSWER_LIMIT
                        + (running.process.isAlive() ? "" : " (it exited with " + running.process.exitValue() + ")"));
            }
            if (answer.startsWith(prefix)) {
                return;
            }
        }
    }

    /** Ends every proxy (closing its stdin ends it; a kill if it does not). */
    @Override
    public void close() {
        for (Running running : proxies.values()) {
            try {
                running.commands.close();
            } catch (IOException ignored) {
                // it is being ended anyway
            }
        }
        for (Running running : proxies.values()) {
            try {
                if (!running.process.waitFor(5, TimeUnit.SECONDS)) {
                    running.process.destroyForcibly();
                }
            } catch (InterruptedException e) {
                running.process.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
        proxies.clear();
    }

    /** For a shutdown hook: ends every proxy at once. */
    void killAll() {
        proxies.values().forEach(r -> r.process.destroyForcibly());
    }
}
