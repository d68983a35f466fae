package io.tenure.it;

import io.tenure.proto.v1.DescribeRequest;
import io.tenure.proto.v1.LeaseGrantRequest;
import io.tenure.proto.v1.LockHolder;
import io.tenure.proto.v1.LockMode;
import io.tenure.proto.v1.LockRequest;
import io.tenure.proto.v1.LockResponse;
import io.tenure.proto.v1.LockState;
import io.tenure.proto.v1.TryLockRequest;
import io.tenure.proto.v1.TryLockResponse;
import io.tenure.proto.v1.Waiter;
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

/** {@code tenure lock NAME -- COMMAND} end to end, against a real server process. */
class LockCommandTest extends CommandProcessTest {
    /**
     * A reader's command, {@code sh -c READER ID OTHER}: writes its mode and fencing token to
     * ID.env and its pid to ID.pid, creates ID.in, then waits until OTHER.in exists (so both
     * readers' commands run at once; after 60 s it gives up with status 9) and then until the test
     * creates ID.go (120 s at most, else status 10), creates ID.out and exits 0.
     */
    private static final String READER = "echo \"$TENURE_LOCK_MODE $TENURE_FENCING_TOKEN\" > $0.env; echo $$ > $0.pid; touch $0.in; "
            + "i=0; while [ ! -e $1.in ]; do i=$((i+1)); [ $i -gt 1200 ] && exit 9; sleep 0.05; done; "
            + "i=0; while [ ! -e $0.go ]; do i=$((i+1)); [ $i -gt 2400 ] && exit 10; sleep 0.05; done; "
            + "touch $0.out";
    /**
     * A writer's command, {@code sh -c WRITER ID R1 R2}: writes its mode and token to ID.env, then
     * exits 8 (saying why) unless both readers' commands have finished (R.out exists) and exited
     * (no process has R.pid's pid), else 0.
     */
    private static final String WRITER = "echo \"$TENURE_LOCK_MODE $TENURE_FENCING_TOKEN\" > $0.env; "
            + "for r in $1 $2; do "
            + "[ -e $r.out ] || { echo \"$r's command had not finished\"; exit 8; }; "
            + "if kill -0 $(cat $r.pid) 2>/dev/null; then echo \"$r's command still runs\"; exit 8; fi; "
            + "done";

    private Process tenureLock(String name, List<String> options, String shellCommand) throws IOException {
        return tenureLock("lock-" + name.replace('/', '_'), name, options, shellCommand);
    }

    /** {@code tenure lock NAME OPTIONS -- sh -c SHELL_COMMAND ARGS...}, its output in LOG.log. */
    private Process tenureLock(String log, String name, List<String> options, String shellCommand, String... args) throws IOException {
        List<String> command = new ArrayList<>(ChildJava.command(MemberProcess.CLI_MAIN));
        command.addAll(List.of("lock", name, "--endpoints", server.endpoint()));
        command.addAll(options);
        command.addAll(List.of("--", "sh", "-c", shellCommand));
        command.addAll(List.of(args));
        Path logFile = work.resolve(log + ".log");
        ItLogs.register(logFile);
        Process process = new ProcessBuilder(command).directory(work.toFile())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()))
                .start();
        started.add(process);
        return process;
    }

    private static int exitOf(Process p, Duration limit) throws InterruptedException {
        assertThat(p.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)).as("tenure lock exits within " + limit).isTrue();
        return p.exitValue();
    }

    private void awaitFile(Path file, Duration limit) {
        Await.until(file + " appears", limit, () -> Files.exists(file));
    }

    private LockState described(String name) {
        return server.blocking().withDeadlineAfter(10, TimeUnit.SECONDS)
                .describe(DescribeRequest.newBuilder().setName(name).build()).getLock();
    }

    /** What command {@code id} saw: its mode and fencing token. */
    private String[] seen(String id) throws IOException {
        return Files.readString(work.resolve(id + ".env")).trim().split(" ");
    }

    private long otherLease() {
        return server.blocking().leaseGrant(LeaseGrantRequest.newBuilder().setClientId("observer").setTtl(60).build()).getId();
    }

    @Test
    void runsTheCommandHoldingTheLockAndExitsWithItsStatus() throws Exception {
        Process lock = tenureLock("jobs/report", List.of("--ttl", "5s"),
                "echo \"$TENURE_LOCK_KEY $TENURE_LEASE_ID $TENURE_FENCING_TOKEN\" > env.txt; exit 7");

        assertThat(exitOf(lock, Duration.ofSeconds(60))).isEqualTo(7);
        String[] env = Files.readString(work.resolve("env.txt")).trim().split(" ");
        assertThat(env[0]).isEqualTo("jobs/report");
        assertThat(Long.parseLong(env[1])).isNotZero();
        assertThat(Long.parseLong(env[2])).isPositive();

        TryLockResponse after = server.blocking().tryLock(TryLockRequest.newBuilder().setName("jobs/report").setLeaseId(otherLease()).build());
        assertThat(after.getAcquired()).as("released when the command exited").isTrue();
        assertThat(after.getFencingToken()).isGreaterThan(Long.parseLong(env[2]));
    }

    @Test
    void readersRunTheirCommandsAtOnceAndAWriterRunsOnlyAfterBothExited() throws Exception {
        String name = "jobs/catalog";
        Process r1 = tenureLock("r1", name, List.of("--read", "--client-id", "r1", "--timeout", "2m"), READER, "r1", "r2");
        Process r2 = tenureLock("r2", name, List.of("--read", "--client-id", "r2", "--timeout", "2m"), READER, "r2", "r1");

        // Each reader's command waits for the other's marker: both are in at once. Had the first
        // held the lock alone, it would have given up (status 9) before the second got in.
        awaitFile(work.resolve("r1.in"), Duration.ofSeconds(90));
        awaitFile(work.resolve("r2.in"), Duration.ofSeconds(90));
        LockState shared = described(name);
        assertThat(shared.getMode()).isEqualTo(LockMode.LOCK_MODE_READ);
        assertThat(shared.getHoldersList()).extracting(LockHolder::getClientId).containsExactlyInAnyOrder("r1", "r2");
        String[] seenByR1 = seen("r1");
        String[] seenByR2 = seen("r2");
        assertThat(seenByR1[0]).isEqualTo("read");
        assertThat(seenByR2[0]).isEqualTo("read");
        assertThat(shared.getHoldersList()).extracting(h -> h.getClientId() + " " + h.getFencingToken())
                .containsExactlyInAnyOrder("r1 " + seenByR1[1], "r2 " + seenByR2[1]);

        // A writer queues behind them, its command not started.
        Process w = tenureLock("w", name, List.of("--write", "--client-id", "w", "--timeout", "2m"), WRITER, "w", "r1", "r2");
        Await.PROCESSES.until(() -> "w queues: " + described(name), Duration.ofSeconds(90),
                () -> described(name).getWaitersList().stream().anyMatch(waiter -> waiter.getClientId().equals("w")));
        assertThat(described(name).getWaitersList()).singleElement().extracting(Waiter::getMode).isEqualTo(LockMode.LOCK_MODE_WRITE);

        // A reader that asks after the writer is held back, though the lock is held in read mode.
        Process late = tenureLock("late", name, List.of("--read", "--client-id", "late", "--timeout", "0"), "touch late.ran");
        assertThat(exitOf(late, Duration.ofSeconds(60))).as("not acquired within --timeout").isEqualTo(4);
        assertThat(Files.readString(work.resolve("late.log"))).contains("'" + name + "' was not acquired in read mode within 0 ms");
        assertThat(work.resolve("late.ran")).doesNotExist();

        Files.createFile(work.resolve("r1.go"));
        assertThat(exitOf(r1, Duration.ofSeconds(60))).as("r1's command saw r2's marker").isZero();
        assertThat(described(name).getHoldersList()).as("r2 still reads").extracting(LockHolder::getClientId).containsExactly("r2");
        Files.createFile(work.resolve("r2.go"));
        assertThat(exitOf(r2, Duration.ofSeconds(60))).as("r2's command saw r1's marker").isZero();

        // The writer's command checked, when it started, that both readers' commands had exited.
        assertThat(exitOf(w, Duration.ofSeconds(60))).as(Files.readString(work.resolve("w.log"))).isZero();
        String[] seenByW = seen("w");
        assertThat(seenByW[0]).isEqualTo("write");
        assertThat(Long.parseLong(seenByW[1])).as("above every reader's token")
                .isGreaterThan(Math.max(Long.parseLong(seenByR1[1]), Long.parseLong(seenByR2[1])));
        assertThat(described(name).getHeld()).as("released").isFalse();
    }

    @Test
    void aSecondHolderGivesUpAfterItsTimeout() throws Exception {
        Process first = tenureLock("jobs/single", List.of("--ttl", "5s"), "touch first-started; exec sleep 60");
        awaitFile(work.resolve("first-started"), Duration.ofSeconds(60));

        Process second = tenureLock("jobs/single", List.of("--timeout", "1s"), "touch second-ran");

        assertThat(exitOf(second, Duration.ofSeconds(60))).as("lock not acquired within --timeout").isEqualTo(4);
        assertThat(work.resolve("second-ran")).doesNotExist();
        first.destroy(); // SIGTERM: the CLI stops its command and releases
        exitOf(first, Duration.ofSeconds(30));
    }

    @Test
    void aLostLeaseStopsTheCommandBeforeAnotherHolderCanWrite() throws Exception {
        Process holder = tenureLock("jobs/fenced", List.of("--ttl", "4s"), "touch started; exec sleep 60");
        awaitFile(work.resolve("started"), Duration.ofSeconds(60));

        server.signal("STOP"); // the server stops answering: no keep-alive is acknowledged
        long paused = System.nanoTime();
        int exit;
        try {
            exit = exitOf(holder, Duration.ofSeconds(20));
        } finally {
            server.signal("CONT");
        }
        long declaredAfterMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - paused);
        assertThat(exit).as("lease lost").isEqualTo(3);
        assertThat(declaredAfterMillis).as("declared lost within the TTL, before the server could expire it").isLessThan(4_000);

        // The server expires the lease by itself; the next holder gets a larger token.
        LockResponse next = server.blocking().withDeadlineAfter(30, TimeUnit.SECONDS)
                .lock(LockRequest.newBuilder().setName("jobs/fenced").setLeaseId(otherLease()).setTimeoutMs(-1).build());
        assertThat(next.getAcquired()).isTrue();
    }
}
