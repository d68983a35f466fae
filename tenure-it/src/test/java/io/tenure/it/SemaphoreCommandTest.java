package io.tenure.it;

import io.tenure.client.SemaphoreDescription;
import io.tenure.testing.Await;
import io.tenure.testing.ChildJava;
import io.tenure.testing.MemberProcess;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code tenure semaphore NAME --limit N -- COMMAND} end to end, against a real server process. */
class SemaphoreCommandTest extends CommandProcessTest {
    /**
     * Writes what the command sees to ID.env, then runs until the test creates ID.go, and exits
     * with the status the test gives. The loop is the command's own wait for the test; the test
     * itself only awaits conditions.
     */
    private static final String RUN_UNTIL_TOLD = "echo \"$TENURE_LOCK_KEY $TENURE_LEASE_ID $TENURE_FENCING_TOKEN $TENURE_PERMITS\" > $0.env; "
            + "while [ ! -e $0.go ]; do sleep 0.05; done; exit $1";

    /** {@code tenure semaphore pool --limit 2 --client-id ID OPTIONS -- sh -c RUN_UNTIL_TOLD ID STATUS}, its output in ID.log. */
    private Process tenureSemaphore(String id, List<String> options, int status) throws IOException {
        List<String> command = new ArrayList<>(ChildJava.command(MemberProcess.CLI_MAIN));
        command.addAll(List.of("semaphore", "pool", "--limit", "2", "--client-id", id, "--endpoints", server.endpoint()));
        command.addAll(options);
        command.addAll(List.of("--", "sh", "-c", RUN_UNTIL_TOLD, id, Integer.toString(status)));
        Process process = new ProcessBuilder(command).directory(work.toFile())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(work.resolve(id + ".log").toFile()))
                .start();
        started.add(process);
        return process;
    }

    private int exitOf(Process p, String id, Duration limit) throws Exception {
        assertThat(p.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)).as("tenure semaphore " + id + " exits within " + limit)
                .isTrue();
        return p.exitValue();
    }

    /** What command {@code id} saw: name, lease, fencing token, permits. */
    private String[] seen(String id) throws IOException {
        Path file = work.resolve(id + ".env");
        // Written by one echo; complete once it ends with its newline.
        Await.PROCESSES.until(id + "'s command started", Duration.ofSeconds(60),
                () -> Files.exists(file) && readQuietly(file).endsWith("\n"));
        return Files.readString(file).trim().split(" ");
    }

    private void tell(String id) throws IOException {
        Files.createFile(work.resolve(id + ".go"));
    }

    private SemaphoreDescription pool() {
        return client.semaphore("pool", 2).describe();
    }

    @Test
    void twoRunAtOnceUnderALimitOfTwoWhileAThirdWaitsForAPermit() throws Exception {
        Process a = tenureSemaphore("a", List.of(), 0);
        Process b = tenureSemaphore("b", List.of(), 0);
        String[] seenByA = seen("a");
        String[] seenByB = seen("b");

        // Both commands run at once, each with the name, its own lease and token, and one permit.
        assertThat(a.isAlive()).isTrue();
        assertThat(b.isAlive()).isTrue();
        SemaphoreDescription full = pool();
        assertThat(full.available()).isZero();
        assertThat(full.holders()).extracting(h -> h.clientId() + " " + h.leaseId() + " " + h.fencingToken() + " " + h.permits())
                .containsExactlyInAnyOrder("a " + seenByA[1] + " " + seenByA[2] + " 1", "b " + seenByB[1] + " " + seenByB[2] + " 1");
        assertThat(seenByA[0]).isEqualTo("pool");
        assertThat(seenByB[0]).isEqualTo("pool");
        assertThat(seenByA[3]).isEqualTo("1");
        assertThat(seenByB[3]).isEqualTo("1");

        // A third waits in the queue, its command not started.
        Process c = tenureSemaphore("c", List.of("--timeout", "2m"), 7);
        Await.PROCESSES.until(() -> "c queues for a permit: " + pool(), Duration.ofSeconds(60),
                () -> pool().waiters().stream().anyMatch(w -> w.clientId().equals("c")));
        assertThat(work.resolve("c.env")).doesNotExist();
        assertThat(c.isAlive()).isTrue();

        // One that may not wait is refused at once, while c keeps its place.
        Process d = tenureSemaphore("d", List.of("--timeout", "0"), 0);
        assertThat(exitOf(d, "d", Duration.ofSeconds(60))).as("not acquired within --timeout").isEqualTo(4);
        assertThat(Files.readString(work.resolve("d.log"))).contains("'pool' was not acquired within 0 ms", "1 waiting");
        assertThat(work.resolve("d.env")).doesNotExist();

        // When a's command exits, a releases its permit and exits with the command's status; c runs.
        tell("a");
        assertThat(exitOf(a, "a", Duration.ofSeconds(60))).isZero();
        String[] seenByC = seen("c");
        assertThat(seenByC[0]).isEqualTo("pool");
        assertThat(seenByC[3]).isEqualTo("1");
        assertThat(Long.parseLong(seenByC[2])).as("a later grant's token").isGreaterThan(Math.max(Long.parseLong(seenByA[2]),
                Long.parseLong(seenByB[2])));
        assertThat(b.isAlive()).as("b still holds its permit beside c").isTrue();

        tell("b");
        tell("c");
        assertThat(exitOf(b, "b", Duration.ofSeconds(60))).isZero();
        assertThat(exitOf(c, "c", Duration.ofSeconds(60))).as("the command's own status").isEqualTo(7);
        assertThat(pool().holders()).as("every permit released").isEmpty();
        assertThat(pool().isIdle()).as("idle, keeping its limit until the leader forgets it").isTrue();
        assertThat(client.leases()).as("every lease revoked").isEmpty();
    }

    @Test
    void aCommandNeedingTwoPermitsHasTheWholePoolAndSeesItsPermits() throws Exception {
        Process both = tenureSemaphore("both", List.of("--permits", "2"), 0);
        String[] seenByBoth = seen("both");
        assertThat(seenByBoth[3]).isEqualTo("2");
        assertThat(pool().holders()).singleElement().satisfies(h -> {
            assertThat(h.permits()).isEqualTo(2);
            assertThat(h.fencingToken()).isEqualTo(Long.parseLong(seenByBoth[2]));
        });

        Process one = tenureSemaphore("one", List.of("--timeout", "2m"), 0);
        Await.PROCESSES.until(() -> "one queues: " + pool(), Duration.ofSeconds(60), () -> pool().waiters().size() == 1);
        assertThat(work.resolve("one.env")).doesNotExist();

        tell("both");
        assertThat(exitOf(both, "both", Duration.ofSeconds(60))).isZero();
        assertThat(seen("one")[3]).isEqualTo("1");
        tell("one");
        assertThat(exitOf(one, "one", Duration.ofSeconds(60))).isZero();
    }
}
