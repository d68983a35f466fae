package io.tenure.it;

import io.tenure.testing.Await;
import io.tenure.testing.ChildJava;
import io.tenure.testing.MemberProcess;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code tenure barrier NAME --parties N} end to end, against a real server process. */
class BarrierCommandTest extends CommandProcessTest {

    /** {@code tenure barrier gate --client-id ID OPTIONS}, its output in ID.log. */
    private Process tenureBarrier(String id, String... options) throws IOException {
        List<String> command = new ArrayList<>(ChildJava.command(MemberProcess.CLI_MAIN));
        command.addAll(List.of("barrier", "gate", "--client-id", id, "--endpoints", server.endpoint()));
        command.addAll(List.of(options));
        Process process = new ProcessBuilder(command).directory(work.toFile())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(work.resolve(id + ".log").toFile()))
                .start();
        started.add(process);
        return process;
    }

    private int exitOf(Process p, String id) throws Exception {
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("tenure barrier " + id + " exits").isTrue();
        return p.exitValue();
    }

    private String log(String id) throws IOException {
        return Files.readString(work.resolve(id + ".log"));
    }

    @Test
    void twoPartiesAreReleasedTogetherAndATimeoutLeavesWithExitFour() throws Exception {
        Process first = tenureBarrier("first", "--parties", "2", "--timeout", "forever");
        Await.PROCESSES.until("the first party to wait", Duration.ofSeconds(60),
                () -> client.barrier("gate", 2).describe().waiting().size() == 1);
        assertThat(first.isAlive()).isTrue();

        Process mismatch = tenureBarrier("mismatch", "--parties", "3", "--timeout", "0");
        assertThat(exitOf(mismatch, "mismatch")).isEqualTo(1);
        assertThat(log("mismatch")).contains("barrier 'gate' has 2 parties, not 3");

        Process second = tenureBarrier("second", "--parties", "2");
        assertThat(exitOf(second, "second")).isZero();
        assertThat(exitOf(first, "first")).isZero();
        String released = log("second").lines().filter(l -> l.startsWith("released: ")).findFirst().orElseThrow();
        assertThat(log("first")).contains(released);

        Process alone = tenureBarrier("alone", "--parties", "2", "--timeout", "300ms");
        assertThat(exitOf(alone, "alone")).isEqualTo(4);
        assertThat(log("alone")).contains("was not released within 300 ms (0 other of 2 parties waiting); this party left");
        assertThat(client.barrier("gate", 2).describe().exists()).isFalse();
    }
}
