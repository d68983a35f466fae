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

/** {@code tenure latch NAME --count N | --count-down | --await} end to end, against a real server process. */
class LatchCommandTest extends CommandProcessTest {

    /** {@code tenure latch done OPTIONS}, its output in ID.log. */
    private Process tenureLatch(String id, String... options) throws IOException {
        List<String> command = new ArrayList<>(ChildJava.command(MemberProcess.CLI_MAIN));
        command.addAll(List.of("latch", "done", "--endpoints", server.endpoint()));
        command.addAll(List.of(options));
        Process process = new ProcessBuilder(command).directory(work.toFile())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(work.resolve(id + ".log").toFile()))
                .start();
        started.add(process);
        return process;
    }

    private int exitOf(Process p, String id) throws Exception {
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("tenure latch " + id + " exits").isTrue();
        return p.exitValue();
    }

    private String log(String id) throws IOException {
        return Files.readString(work.resolve(id + ".log"));
    }

    @Test
    void aWaiterIsReleasedByTwoCountDownsASecondSetFailsAndATimeoutExitsFour() throws Exception {
        assertThat(exitOf(tenureLatch("set", "--count", "2"), "set")).isZero();
        assertThat(log("set")).contains("set: 2");
        assertThat(exitOf(tenureLatch("again", "--count", "5"), "again")).isEqualTo(1);
        assertThat(log("again")).contains("'done' already exists with count 2");

        Process waiter = tenureLatch("waiter", "--await", "--timeout", "forever", "--client-id", "waiter");
        Await.PROCESSES.until("the waiter to wait", Duration.ofSeconds(60),
                () -> client.countDownLatch("done").describe().waiting().size() == 1);
        assertThat(exitOf(tenureLatch("impatient", "--await", "--timeout", "300ms"), "impatient")).isEqualTo(4);
        assertThat(log("impatient")).contains("did not reach zero within 300 ms (count 2); the wait was withdrawn");

        assertThat(exitOf(tenureLatch("down1", "--count-down"), "down1")).isZero();
        assertThat(log("down1")).contains("count: 1");
        assertThat(waiter.isAlive()).isTrue();
        assertThat(exitOf(tenureLatch("down2", "--count-down"), "down2")).isZero();
        assertThat(log("down2")).contains("count: 0");

        assertThat(exitOf(waiter, "waiter")).isZero();
        assertThat(log("waiter")).contains("count: 0");
        assertThat(client.countDownLatch("done").describe().exists()).isFalse();
        assertThat(exitOf(tenureLatch("absent", "--await", "--timeout", "0"), "absent")).as("absent: zero at once").isZero();
    }
}
