package io.tenure.it;

import io.tenure.testing.Await;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code tenure watch PATTERN --pattern} end to end, against a real server process: every kind's changes on the names it matches. */
class PatternWatchCommandTest extends CommandProcessTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @Test
    void aPatternWatchPrintsTheChangesOfEveryKindUnderIt() throws Exception {
        Process watch = start("watch", "watch", "jobs.>", "--pattern");
        Path err = work.resolve("watch.err");
        Await.until(() -> "the watch started: " + readQuietly(err), WAIT,
                () -> readQuietly(err).contains("watching names matching 'jobs.>'") || !watch.isAlive());

        client.counter("jobs.done").incrementAndGet();
        client.kv().put("jobs.config.mode", "fast");
        client.counter("other.done").incrementAndGet();
        client.kv().put("jobs", "not under jobs.>");
        client.queue("jobs.queue").offer("j1".getBytes(java.nio.charset.StandardCharsets.UTF_8));

        Path out = work.resolve("watch.out");
        Await.until(() -> "three lines: " + readQuietly(out), WAIT, () -> readQuietly(out).lines().count() >= 3);
        List<String> lines = readQuietly(out).lines().toList();
        assertThat(lines).hasSize(3);
        assertThat(lines.get(0)).startsWith("PUT jobs.done revision=").endsWith("kind=counter");
        assertThat(lines.get(1)).startsWith("PUT jobs.config.mode revision=").endsWith("kind=kv");
        assertThat(lines.get(2)).startsWith("PUT jobs.queue revision=").endsWith("kind=list");
    }

    @Test
    void aMalformedPatternOrOneWithPrefixIsRefused() throws Exception {
        Run bad = tenure("bad", "watch", "jobs.>.x", "--pattern");
        assertThat(bad.exit()).isEqualTo(1);
        assertThat(bad.err()).contains("pattern").contains("last");
        Run both = tenure("both", "watch", "jobs.>", "--pattern", "--prefix");
        assertThat(both.exit()).isEqualTo(2);
        assertThat(both.err()).contains("--prefix and --pattern");
    }
}
