package io.tenure.it;

import io.tenure.proto.v1.LeaseGrantRequest;
import io.tenure.proto.v1.LockRequest;
import io.tenure.proto.v1.LockResponse;
import io.tenure.proto.v1.TryLockRequest;
import io.tenure.proto.v1.TryLockResponse;
import io.tenure.testing.Await;
import io.tenure.testing.ChildJava;
import io.tenure.testing.MemberProcess;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code tenure lock NAME -- COMMAND} end to end, against a real server process. */
@ExtendWith(ItLogs.class)
class LockCommandTest {
    @TempDir
    Path work;
    MemberProcess server;

    @BeforeEach
    void start() throws IOException {
        server = ItLogs.single(work.resolve("data")).start();
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
    }

    private Process tenureLock(String name, List<String> options, String shellCommand) throws IOException {
        List<String> command = new ArrayList<>(ChildJava.command(MemberProcess.CLI_MAIN));
        command.addAll(List.of("lock", name, "--endpoints", server.endpoint()));
        command.addAll(options);
        command.addAll(List.of("--", "sh", "-c", shellCommand));
        return new ProcessBuilder(command).directory(work.toFile())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(work.resolve("lock-" + name.replace('/', '_') + ".log").toFile()))
                .start();
    }

    private static int exitOf(Process p, Duration limit) throws InterruptedException {
        assertThat(p.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)).as("tenure lock exits within " + limit).isTrue();
        return p.exitValue();
    }

    private void awaitFile(Path file, Duration limit) {
        Await.until(file + " appears", limit, () -> Files.exists(file));
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
