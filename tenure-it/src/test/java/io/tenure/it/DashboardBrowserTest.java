package io.tenure.it;

import io.tenure.client.Lease;
import io.tenure.client.LockHandle;
import io.tenure.client.TenureClient;
import io.tenure.testing.Await;
import io.tenure.testing.MemberProcess;
import io.tenure.testing.TenureCluster;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The dashboard at {@code /ui} of a real member (in this JVM, serving on 127.0.0.1), in Debian's headless
 * Chromium driven by {@code ui-test/dashboard-test.js} (playwright-core): the page loads and shows
 * the member live; a lock this test acquires through the SDK appears with its holder and fencing
 * token within a second; a waiter queued behind it appears; after the release, the hand-off (the
 * waiter holding it with a higher token) appears within a second; a search narrows the page to a
 * prefix. The script takes a screenshot at each step: {@code target/dashboard-*.png}.
 *
 * <p>The script and this test talk in lines over the script's stdin and stdout (the script's
 * comment lists them): this test says what the member holds once the SDK has it, and the script
 * answers when the page shows it, or fails with the reason. Skipped, loudly, where Chromium,
 * Node or the installed playwright-core is missing ({@code ./run-tests} installs them).
 */
@ExtendWith(ItLogs.class)
class DashboardBrowserTest {
    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    private static final Duration TTL = Duration.ofSeconds(20);
    /** The script's whole answer to one line: its own deadline for the page is 1 s, the screenshot takes the rest. */
    private static final Duration ANSWER = Duration.ofSeconds(15);

    @TempDir
    Path work;

    @Test
    void thePageShowsALockItsWaiterAndItsHandOffLive() throws Exception {
        Path module = Path.of(System.getProperty("basedir", "")).toAbsolutePath();
        Path script = module.resolve("ui-test/dashboard-test.js");
        skipUnlessInstalled(module);
        Files.createDirectories(module.resolve("target"));
        try (var earlier = Files.newDirectoryStream(module.resolve("target"), "dashboard-*.png")) {
            for (Path screenshot : earlier) {
                Files.delete(screenshot); // the artifacts are this run's only
            }
        }

        try (TenureCluster member = TenureCluster.start(1);
             TenureClient client = member.newClient();
             Browser browser = Browser.start(script, member.httpEndpoint(0), module.resolve("target"), work.resolve("browser.log"))) {
            assertThat(browser.answer()).as("the page loaded and went live").isEqualTo("ready");

            Lease first = client.grantLease(TTL, "billing-worker-1");
            Lease second = client.grantLease(TTL, "billing-worker-2");
            LockHandle held = client.acquire("billing/invoices", first, Duration.ofSeconds(5), null);
            browser.say("acquired billing/invoices billing-worker-1 " + held.fencingToken());
            assertThat(browser.answer()).startsWith("seen acquired");

            CompletableFuture<LockHandle> waiting = client.acquireAsync("billing/invoices", second, Duration.ofSeconds(30), null);
            Await.until("billing-worker-2 waits", Duration.ofSeconds(10), () -> client.describe("billing/invoices").waiters().size() == 1);
            browser.say("waiting billing/invoices billing-worker-2");
            assertThat(browser.answer()).startsWith("seen waiting");

            held.release();
            LockHandle handedOver = waiting.get(10, TimeUnit.SECONDS);
            assertThat(handedOver.fencingToken()).isGreaterThan(held.fencingToken());
            browser.say("handed-off billing/invoices billing-worker-2 " + handedOver.fencingToken());
            assertThat(browser.answer()).startsWith("seen handed-off");

            LockHandle other = client.acquire("reports/daily", first, Duration.ofSeconds(5), null);
            browser.say("search billing/ reports/daily");
            assertThat(browser.answer()).startsWith("seen search");

            browser.say("done");
            assertThat(browser.exit()).as("the script's exit status; its log: " + browser.log()).isZero();
            handedOver.release();
            other.release();
        }
        assertThat(module.resolve("target/dashboard-hand-off.png")).as("the screenshot kept as an artifact").isNotEmptyFile();
    }

    /** Skips the test, saying why on stderr, when Chromium, Node or the script's playwright-core is not installed. */
    private static void skipUnlessInstalled(Path module) {
        String missing = null;
        if (!Files.isExecutable(CHROMIUM)) {
            missing = "Chromium (" + CHROMIUM + ", Debian's package chromium)";
        } else if (!onPath("node")) {
            missing = "Node (node on the PATH, Debian's package nodejs)";
        } else if (!Files.isDirectory(module.resolve("ui-test/node_modules/playwright-core"))) {
            missing = "playwright-core (npm ci --prefix tenure-it/ui-test)";
        }
        if (missing != null) {
            String reason = "DashboardBrowserTest SKIPPED: " + missing + " is not installed; ./run-tests installs it";
            System.err.println("*** " + reason);
            Assumptions.abort(reason);
        }
    }

    private static boolean onPath(String command) {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, command))) {
                return true;
            }
        }
        return false;
    }

    /** The Node script driving Chromium: lines to its stdin, its stdout's lines read as they come. */
    private static final class Browser implements AutoCloseable {
        private final Process process;
        private final Writer in;
        private final BlockingQueue<String> out = new LinkedBlockingQueue<>();
        private final Path log;

        private Browser(Process process, Path log) {
            this.process = process;
            this.log = log;
            this.in = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
            Thread reader = new Thread(() -> {
                try (BufferedReader lines = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                    for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                        out.add(line);
                    }
                } catch (IOException ended) {
                    // the script exited
                }
                out.add("<exited>");
            }, "dashboard-script-out");
            reader.setDaemon(true);
            reader.start();
        }

        static Browser start(Path script, String baseUrl, Path screenshots, Path log) throws IOException {
            ItLogs.register(log);
            Process process = new ProcessBuilder("node", script.toString(), baseUrl, screenshots.toString())
                    .directory(script.getParent().toFile())
                    .redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()))
                    .start();
            return new Browser(process, log);
        }

        void say(String line) throws IOException {
            in.write(line + "\n");
            in.flush();
        }

        /** The script's next line, within {@link #ANSWER}; a failure line fails the test with the script's reason. */
        String answer() throws InterruptedException {
            String line = out.poll(ANSWER.toMillis(), TimeUnit.MILLISECONDS);
            System.out.println("dashboard script: " + line);
            assertThat(line).as("the script answers within " + ANSWER + "; its log: " + log()).isNotNull();
            assertThat(line).as("the script's answer (screenshot: target/dashboard-failure.png); its log: " + log()).doesNotStartWith("fail");
            return line;
        }

        int exit() throws InterruptedException {
            assertThat(process.waitFor(ANSWER.toMillis(), TimeUnit.MILLISECONDS)).as("the script exits").isTrue();
            return process.exitValue();
        }

        String log() {
            return MemberProcess.tail(log, 40);
        }

        /**
         * Ends the script if it still runs: asked first (Playwright closes Chromium on SIGTERM),
         * then, with Chromium's processes it started, by force.
         */
        @Override
        public void close() throws InterruptedException {
            if (!process.isAlive()) {
                return;
            }
            List<ProcessHandle> started = process.descendants().toList();
            process.destroy();
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
            started.stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly);
        }
    }
}
