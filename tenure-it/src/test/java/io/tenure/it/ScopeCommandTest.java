package io.tenure.it;

import io.tenure.client.Scope;
import io.tenure.client.ScopeDescription;
import io.tenure.client.ScopePart;
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

/** {@code tenure lock --range|--path|--inode ... -- COMMAND} and {@code tenure describe --range} end to end, against a real server process. */
class ScopeCommandTest extends CommandProcessTest {
    /**
     * Writes what the command sees to ID.env, then runs until the test creates ID.go, and exits
     * with the status the test gives. The loop is the command's own wait for the test; the test
     * itself only awaits conditions.
     */
    private static final String RUN_UNTIL_TOLD = "echo \"$TENURE_LEASE_ID $TENURE_FENCING_TOKEN $TENURE_LOCK_MODE $TENURE_LOCK_KEY\" > $0.env; "
            + "while [ ! -e $0.go ]; do sleep 0.05; done; exit $1";

    /** {@code tenure lock --client-id ID SCOPE_OPTIONS -- sh -c RUN_UNTIL_TOLD ID STATUS}, its output in ID.log. */
    private Process tenureLock(String id, List<String> options, int status) throws IOException {
        List<String> command = new ArrayList<>(ChildJava.command(MemberProcess.CLI_MAIN));
        command.addAll(List.of("lock", "--client-id", id, "--endpoints", server.endpoint()));
        command.addAll(options);
        command.addAll(List.of("--", "sh", "-c", RUN_UNTIL_TOLD, id, Integer.toString(status)));
        Path log = work.resolve(id + ".log");
        ItLogs.register(log);
        Process process = new ProcessBuilder(command).directory(work.toFile())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .start();
        started.add(process);
        return process;
    }

    private static int exitOf(Process p, String id, Duration limit) throws Exception {
        assertThat(p.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)).as("tenure lock " + id + " exits within " + limit).isTrue();
        return p.exitValue();
    }

    /** What command {@code id} saw: lease, fencing token, mode, then the key (the scopes, which hold spaces). */
    private String[] seen(String id) throws IOException {
        Path file = work.resolve(id + ".env");
        // Written by one echo; complete once it ends with its newline.
        Await.PROCESSES.until(id + "'s command started", Duration.ofSeconds(60),
                () -> Files.exists(file) && readQuietly(file).endsWith("\n"));
        return Files.readString(file).trim().split(" ", 4);
    }

    private void tell(String id) throws IOException {
        Files.createFile(work.resolve(id + ".go"));
    }

    private String log(String id) {
        return readQuietly(work.resolve(id + ".log"));
    }

    private ScopeDescription inode42() {
        return client.describe(Scope.inode(42));
    }

    @Test
    void aRangeHoldsWhileTheCommandRunsAndAnOverlappingOneThatMayNotWaitExitsFour() throws Exception {
        Process first = tenureLock("first", List.of("--range", "42:0-4096"), 0);
        String[] seenByFirst = seen("first");
        long lease = Long.parseLong(seenByFirst[0]);
        long token = Long.parseLong(seenByFirst[1]);
        assertThat(seenByFirst[2]).isEqualTo("write");
        assertThat(seenByFirst[3]).isEqualTo("range 42:0-4096");
        assertThat(inode42().holders()).singleElement().satisfies(h -> {
            assertThat(h.leaseId()).isEqualTo(lease);
            assertThat(h.clientId()).isEqualTo("first");
            assertThat(h.fencingToken()).as("the token the command sees is the grant's").isEqualTo(token);
            assertThat(h.parts()).containsExactly(ScopePart.exclusive(Scope.byteRange(42, 0, 4096)));
        });

        // An overlapping range that may wait 1 s is not acquired: exit 4, naming the holder; its command never ran.
        Process second = tenureLock("second", List.of("--range", "42:100-200", "--timeout", "1s"), 0);
        assertThat(exitOf(second, "second", Duration.ofSeconds(60))).as("not acquired within --timeout").isEqualTo(4);
        assertThat(log("second")).contains("'range 42:100-200' was not acquired within 1000 ms", "'first' (lease " + lease + ") holds "
                + "range 42:0-4096 exclusive (token " + token + ")");
        assertThat(work.resolve("second.env")).doesNotExist();
        assertThat(inode42().waiters()).as("its wait was withdrawn").isEmpty();
        assertThat(first.isAlive()).isTrue();

        // A range beside it, sharing no byte, runs at once; a shared set waits and runs after first's command exits.
        Process beside = tenureLock("beside", List.of("--range", "42:4096-8192", "--timeout", "0"), 0);
        assertThat(Long.parseLong(seen("beside")[1])).isGreaterThan(token);
        Process readers = tenureLock("readers", List.of("--shared", "--range", "42:0-10", "--path", "/data/a", "--timeout", "2m"), 5);
        Await.PROCESSES.until(() -> "readers queue: " + inode42(), Duration.ofSeconds(60),
                () -> inode42().waiters().stream().anyMatch(w -> w.clientId().equals("readers")));
        assertThat(work.resolve("readers.env")).doesNotExist();

        tell("first");
        assertThat(exitOf(first, "first", Duration.ofSeconds(60))).isZero();
        String[] seenByReaders = seen("readers");
        assertThat(Long.parseLong(seenByReaders[1])).as("a later grant's token").isGreaterThan(token);
        assertThat(seenByReaders[2]).isEqualTo("read");
        assertThat(seenByReaders[3]).isEqualTo("path /data/a, range 42:0-10");
        assertThat(client.describe(Scope.path("/data/a/b")).holders()).singleElement().satisfies(h -> assertThat(h.parts())
                .containsExactly(ScopePart.shared(Scope.path("/data/a")), ScopePart.shared(Scope.byteRange(42, 0, 10))));

        tell("beside");
        tell("readers");
        assertThat(exitOf(beside, "beside", Duration.ofSeconds(60))).isZero();
        assertThat(exitOf(readers, "readers", Duration.ofSeconds(60))).as("the command's own status").isEqualTo(5);
        assertThat(inode42().holders()).as("every set released").isEmpty();
        assertThat(client.leases()).as("every lease revoked").isEmpty();
    }

    @Test
    void describeShowsTheHolderAndWhoBlocksARange() throws Exception {
        Process holder = tenureLock("holder", List.of("--range", "42:0-4096"), 0);
        String[] seenByHolder = seen("holder");

        Run described = tenure("describe", "describe", "--range", "42:100-200", "--blocked-by");
        assertThat(described.exit()).as(described.err()).isZero();
        assertThat(described.out().lines().toList()).contains("scope: range 42:100-200", "holders: 1",
                "holder: lease=" + seenByHolder[0] + " client_id=holder fencing_token=" + seenByHolder[1]
                        + " scopes=range 42:0-4096 exclusive",
                "waiters: 0", "blocked_by: 1",
                "blocker: lease=" + seenByHolder[0] + " client_id=holder holding range 42:0-4096 exclusive fencing_token="
                        + seenByHolder[1]);

        tell("holder");
        assertThat(exitOf(holder, "holder", Duration.ofSeconds(60))).isZero();
    }

    @Test
    void badScopesAreUsageErrorsBeforeAnyCall() throws Exception {
        Run backwards = tenure("backwards", "lock", "--range", "42:10-5", "--", "true");
        assertThat(backwards.exit()).isEqualTo(2);
        assertThat(backwards.err()).contains("tenure lock: Invalid value for option '--range' (INODE:START-END): '42:10-5': "
                + "the end (5) must be above the start (10)");

        Run relative = tenure("relative", "lock", "--path", "data/a", "--", "true");
        assertThat(relative.exit()).isEqualTo(2);
        assertThat(relative.err()).contains("'--path'", "absolute");

        Run both = tenure("both", "lock", "jobs", "--inode", "42", "--", "true");
        assertThat(both.exit()).isEqualTo(2);
        assertThat(both.err()).contains("Give NAME or scopes (--path, --inode, --range), not both");

        assertThat(client.leases()).as("nothing was granted").isEmpty();
    }
}
