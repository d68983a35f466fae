package io.tenure.it;

import io.tenure.testing.Await;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code tenure signal} and {@code tenure listen} end to end, against a real server process: lines, counts, groups, exit codes. */
class SignalCommandTest extends CommandProcessTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    /** Starts {@code tenure listen ARGS} in the background; its output goes to {@code ID.out} and {@code ID.err}. */
    private Process listen(String id, String... args) throws Exception {
        Process process = start(id, "listen", args);
        Path err = work.resolve(id + ".err");
        Await.until(() -> "tenure listen " + id + " registered: " + readQuietly(err), WAIT,
                () -> readQuietly(err).contains("listening to") || !process.isAlive());
        return process;
    }

    @Test
    void listenersPrintEachSignalAndSignalPrintsTheReceivers() throws Exception {
        listen("all", "builds.>");
        listen("w1", "builds.*", "--group", "workers");
        listen("w2", "builds.*", "--group", "workers");

        assertThat(tenure("s1", "signal", "builds.web", "commit 1f3a")).isEqualTo(new Run(0, "2\n", ""));
        assertThat(tenure("s2", "signal", "builds.api", "commit 2b4c")).isEqualTo(new Run(0, "2\n", ""));
        assertThat(tenure("s3", "signal", "builds.api.eu", "commit 3d5e")).isEqualTo(new Run(0, "1\n", ""));
        assertThat(tenure("s4", "signal", "tests.unit", "x")).isEqualTo(new Run(0, "0\n", ""));

        Await.until("the listener without a group printed three lines", WAIT, () -> readQuietly(work.resolve("all.out")).lines().count() == 3);
        assertThat(readQuietly(work.resolve("all.out")))
                .isEqualTo("builds.web commit 1f3a\nbuilds.api commit 2b4c\nbuilds.api.eu commit 3d5e\n");
        Await.until("each worker printed one", WAIT, () -> readQuietly(work.resolve("w1.out")).lines().count() == 1
                && readQuietly(work.resolve("w2.out")).lines().count() == 1);
        assertThat(readQuietly(work.resolve("w1.out")) + readQuietly(work.resolve("w2.out")))
                .contains("builds.web commit 1f3a\n").contains("builds.api commit 2b4c\n");
    }

    @Test
    void aBadChannelOrPatternExitsOneNamingIt() throws Exception {
        Run wildcard = tenure("bad", "signal", "builds.*", "x");
        assertThat(wildcard.exit()).isEqualTo(1);
        assertThat(wildcard.err()).contains("channel").contains("wildcard");

        Process badListen = listen("badListen", "builds.>.eu");
        Await.until("the refused listener exits", WAIT, () -> !badListen.isAlive());
        assertThat(badListen.exitValue()).isEqualTo(1);
        assertThat(readQuietly(work.resolve("badListen.err"))).contains("pattern").contains("last");

        Run usage = tenure("usage", "signal", "builds.web");
        assertThat(usage.exit()).isEqualTo(2);
        assertThat(usage.err()).contains("PAYLOAD");
    }
}
