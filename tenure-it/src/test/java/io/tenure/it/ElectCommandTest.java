package io.tenure.it;

import io.tenure.client.ElectionDescription;
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

/** {@code tenure elect NAME --value V -- COMMAND} and {@code tenure leader NAME [--watch]} end to end, against a real server process. */
class ElectCommandTest extends CommandProcessTest {
    private static final String NAME = "svc/scheduler";
    /**
     * A leader's command, {@code sh -c LEADER ID OTHER}: exits 8 (saying why) if OTHER's command
     * started (OTHER.in exists) and has not finished (no OTHER.done) or still runs (a process has
     * OTHER.pid's pid); else writes what it sees to ID.env and its pid to ID.pid, creates ID.in,
     * runs until the test creates ID.go (120 s at most, else status 10), creates ID.done and exits
     * 0. The loop is the command's own wait for the test; the test itself only awaits conditions.
     */
    private static final String LEADER = "if [ -e $1.in ]; then "
            + "[ -e $1.done ] || { echo \"$1's command had not finished\"; exit 8; }; "
            + "if kill -0 $(cat $1.pid) 2>/dev/null; then echo \"$1's command still runs\"; exit 8; fi; "
            + "fi; "
            + "echo \"$TENURE_LOCK_KEY $TENURE_LEASE_ID $TENURE_FENCING_TOKEN\" > $0.env; echo $$ > $0.pid; touch $0.in; "
            + "i=0; while [ ! -e $0.go ]; do i=$((i+1)); [ $i -gt 2400 ] && exit 10; sleep 0.05; done; "
            + "touch $0.done";

    /** {@code tenure ARGS --endpoints SERVER}, its standard output in LOG.stdout and its standard error in LOG.log. */
    private Process tenure(String log, List<String> args) throws IOException {
        List<String> command = new ArrayList<>(ChildJava.command(MemberProcess.CLI_MAIN));
        command.addAll(args.subList(0, 2));
        command.addAll(List.of("--endpoints", server.endpoint()));
        command.addAll(args.subList(2, args.size()));
        Path logFile = work.resolve(log + ".log");
        ItLogs.register(logFile);
        Process process = new ProcessBuilder(command).directory(work.toFile())
                .redirectOutput(ProcessBuilder.Redirect.appendTo(work.resolve(log + ".stdout").toFile()))
                .redirectError(ProcessBuilder.Redirect.appendTo(logFile.toFile()))
                .start();
        started.add(process);
        return process;
    }

    /** {@code tenure elect NAME --value ID:9000 --client-id ID OPTIONS -- sh -c LEADER ID OTHER}. */
    private Process tenureElect(String id, String other, String... options) throws IOException {
        List<String> args = new ArrayList<>(List.of("elect", NAME, "--value", id + ":9000", "--client-id", id));
        args.addAll(List.of(options));
        args.addAll(List.of("--", "sh", "-c", LEADER, id, other));
        return tenure(id, args);
    }

    private static int exitOf(Process p, String what, Duration limit) throws InterruptedException {
        assertThat(p.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)).as(what + " exits within " + limit).isTrue();
        return p.exitValue();
    }

    private void awaitFile(Path file) {
        Await.PROCESSES.until(file + " appears", Duration.ofSeconds(90), () -> Files.exists(file));
    }

    /** What command {@code id} saw: the name, its lease and its fencing token. */
    private String[] seen(String id) throws IOException {
        return Files.readString(work.resolve(id + ".env")).trim().split(" ");
    }

    private String readQuietly(String file) {
        return readQuietly(work.resolve(file));
    }

    private ElectionDescription election() {
        return client.election(NAME).describe();
    }

    /** {@code tenure leader NAME}: its exit status and its standard output. */
    private Leader leader(String log) throws Exception {
        Process p = tenure(log, List.of("leader", NAME));
        int exit = exitOf(p, "tenure leader", Duration.ofSeconds(60));
        return new Leader(exit, readQuietly(log + ".stdout"));
    }

    private record Leader(int exit, String out) {}

    @Test
    void candidatesRunTheirCommandsOneAtATimeInTurnWhileLeaderShowsWhoLeads() throws Exception {
        // The watch prints the leader when it starts (nobody yet), so every change after that line is seen.
        Process watch = tenure("watch", List.of("leader", NAME, "--watch"));
        Await.PROCESSES.until(() -> "the watch starts: " + readQuietly("watch.stdout") + readQuietly("watch.log"),
                Duration.ofSeconds(90), () -> readQuietly("watch.stdout").endsWith("leader: none\n"));

        Process a = tenureElect("a", "b", "--timeout", "2m");
        awaitFile(work.resolve("a.in"));
        String[] seenByA = seen("a");
        assertThat(seenByA[0]).isEqualTo(NAME);

        // b stands behind a; its command does not start while a's runs.
        Process b = tenureElect("b", "a", "--timeout", "2m");
        Await.PROCESSES.until(() -> "b stands: " + election(), Duration.ofSeconds(90),
                () -> election().candidates().stream().anyMatch(c -> c.clientId().equals("b")));
        assertThat(work.resolve("b.env")).doesNotExist();
        assertThat(b.isAlive()).isTrue();
        assertThat(election().leader()).hasValueSatisfying(l -> {
            assertThat(l.clientId()).isEqualTo("a");
            assertThat(l.leaseId()).isEqualTo(Long.parseLong(seenByA[1]));
            assertThat(l.fencingToken()).isEqualTo(Long.parseLong(seenByA[2]));
        });

        Leader first = leader("leader-a");
        assertThat(first.exit()).isZero();
        assertThat(first.out().lines().toList()).startsWith("value: a:9000", "client_id: a", "lease: " + seenByA[1],
                "fencing_token: " + seenByA[2]);

        // One that may not wait is refused at once: exit 4, its command not run.
        Process late = tenureElect("late", "a", "--timeout", "0");
        assertThat(exitOf(late, "tenure elect late", Duration.ofSeconds(60))).as("not elected within --timeout").isEqualTo(4);
        assertThat(readQuietly("late.log")).contains("not elected leader of '" + NAME + "' within 0 ms; 'a' leads, 1 candidate ahead");
        assertThat(work.resolve("late.env")).doesNotExist();

        // When a's command exits, a resigns and exits with its status; b leads with a higher token,
        // and its command checked, when it started, that a's had finished and exited.
        Files.createFile(work.resolve("a.go"));
        assertThat(exitOf(a, "tenure elect a", Duration.ofSeconds(60))).isZero();
        awaitFile(work.resolve("b.in"));
        String[] seenByB = seen("b");
        assertThat(Long.parseLong(seenByB[2])).as("the next leader's token").isGreaterThan(Long.parseLong(seenByA[2]));
        assertThat(seenByB[1]).isNotEqualTo(seenByA[1]);

        Leader second = leader("leader-b");
        assertThat(second.exit()).isZero();
        assertThat(second.out().lines().toList()).startsWith("value: b:9000", "client_id: b", "lease: " + seenByB[1],
                "fencing_token: " + seenByB[2]);

        Files.createFile(work.resolve("b.go"));
        assertThat(exitOf(b, "tenure elect b", Duration.ofSeconds(60))).as(readQuietly("b.stdout")).isZero();

        Leader none = leader("leader-none");
        assertThat(none.exit()).as("nobody leads").isEqualTo(5);
        assertThat(none.out()).isEmpty();

        // The watch saw every change: a elected, b elected on a's resignation, nobody after b's.
        Await.PROCESSES.until(() -> "the watch sees four lines: " + readQuietly("watch.stdout"), Duration.ofSeconds(60),
                () -> readQuietly("watch.stdout").lines().count() >= 4);
        assertThat(readQuietly("watch.stdout").lines().toList()).containsExactly(
                "leader: none",
                "leader: client_id=a lease=" + seenByA[1] + " fencing_token=" + seenByA[2] + " revision=" + seenByA[2] + " value=a:9000",
                "leader: client_id=b lease=" + seenByB[1] + " fencing_token=" + seenByB[2] + " revision=" + seenByB[2] + " value=b:9000",
                "leader: none");
        assertThat(watch.isAlive()).as("still watching").isTrue();
        watch.destroy();
        exitOf(watch, "tenure leader --watch", Duration.ofSeconds(30));
        assertThat(client.leases()).as("every lease revoked").isEmpty();
    }

    @Test
    void aLostLeaseStopsTheLeadersCommand() throws Exception {
        Process leading = tenureElect("mortal", "none", "--ttl", "4s");
        awaitFile(work.resolve("mortal.in"));
        long lease = Long.parseLong(seen("mortal")[1]);

        client.revokeLease(lease); // as an operator would: the next keep-alive finds the lease gone

        assertThat(exitOf(leading, "tenure elect mortal", Duration.ofSeconds(30))).as("lease lost").isEqualTo(3);
        assertThat(readQuietly("mortal.log")).contains("lost the lease on '" + NAME + "'", "the command was stopped");
        long pid = Long.parseLong(readQuietly("mortal.pid").trim());
        assertThat(ProcessHandle.of(pid).filter(ProcessHandle::isAlive)).as("the command was stopped").isEmpty();
        assertThat(work.resolve("mortal.done")).as("it never finished its work").doesNotExist();
        assertThat(election().leader()).isEmpty();
    }
}
