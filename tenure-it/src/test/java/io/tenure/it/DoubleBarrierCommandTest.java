package io.tenure.it;

import io.tenure.client.TenureDoubleBarrier;
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

/** {@code tenure barrier NAME --parties N --double -- COMMAND} and {@code tenure describe NAME} of it end to end, against a real server process. */
class DoubleBarrierCommandTest extends CommandProcessTest {
    /**
     * COMMAND of party $0: writes the variables it sees to $0.in, then, for the party named
     * "slow", waits until slow.go exists (120 s at most, else status 10) and exits 7.
     */
    private static final String PARTY = "echo \"$TENURE_LOCK_KEY $TENURE_LEASE_ID\" > $0.in; "
            + "if [ $0 = slow ]; then i=0; while [ ! -e slow.go ]; do i=$((i+1)); [ $i -gt 2400 ] && exit 10; sleep 0.05; done; exit 7; fi";

    /** {@code tenure barrier round --double --client-id ID OPTIONS -- sh -c PARTY ID}, its output in ID.log. */
    private Process tenureDouble(String id, String... options) throws IOException {
        List<String> command = new ArrayList<>(ChildJava.command(MemberProcess.CLI_MAIN));
        command.addAll(List.of("barrier", "round", "--double", "--client-id", id, "--endpoints", server.endpoint()));
        command.addAll(List.of(options));
        command.addAll(List.of("--", "sh", "-c", PARTY, id));
        Process process = new ProcessBuilder(command).directory(work.toFile())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(work.resolve(id + ".log").toFile()))
                .start();
        started.add(process);
        return process;
    }

    private int exitOf(Process p, String id) throws Exception {
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("tenure barrier --double " + id + " exits").isTrue();
        return p.exitValue();
    }

    /** What {@code tenure describe round} prints. */
    private String tenureDescribe() throws Exception {
        List<String> command = new ArrayList<>(ChildJava.command(MemberProcess.CLI_MAIN));
        command.addAll(List.of("describe", "round", "--endpoints", server.endpoint()));
        Process process = new ProcessBuilder(command).directory(work.toFile()).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(work.resolve("describe.log").toFile())).start();
        started.add(process);
        assertThat(exitOf(process, "describe")).isZero();
        return Files.readString(work.resolve("describe.log"));
    }

    private TenureDoubleBarrier.Description describe() {
        return client.doubleBarrier("round", 1).describe();
    }

    @Test
    void threePartiesRunTogetherAndReturnOnceAllHaveLeft() throws Exception {
        Process fast = tenureDouble("fast", "--parties", "3", "--timeout", "forever");
        Process slow = tenureDouble("slow", "--parties", "3", "--timeout", "forever");
        Await.PROCESSES.until("two parties entering", Duration.ofSeconds(60), () -> describe().entering().size() == 2);
        assertThat(work.resolve("fast.in")).as("nobody runs before all have entered").doesNotExist();
        assertThat(work.resolve("slow.in")).doesNotExist();

        Process quick = tenureDouble("quick", "--parties", "3");

        Await.PROCESSES.until("the commands of fast and quick to finish", Duration.ofSeconds(60),
                () -> describe().leaving().size() == 2);
        assertThat(describe().inside()).extracting(TenureDoubleBarrier.Party::clientId).containsExactly("slow");
        assertThat(fast.isAlive()).as("fast waits for slow to leave").isTrue();
        assertThat(quick.isAlive()).isTrue();
        String seen = Files.readString(work.resolve("fast.in")).strip();
        assertThat(seen).startsWith("round ");
        long fastLease = Long.parseLong(seen.substring("round ".length()));
        assertThat(describe().leaving()).extracting(TenureDoubleBarrier.Party::leaseId).contains(fastLease);
        String described = tenureDescribe();
        assertThat(described).contains("double_barrier: round", "parties: 3", "inside: 1", "leaving: 2",
                "party: lease=" + fastLease + " client_id=fast phase=leaving");
        assertThat(described).containsPattern("party: lease=\\d+ client_id=slow phase=inside");

        Files.createFile(work.resolve("slow.go"));

        assertThat(exitOf(slow, "slow")).as("COMMAND's own status").isEqualTo(7);
        assertThat(exitOf(fast, "fast")).isZero();
        assertThat(exitOf(quick, "quick")).isZero();
        assertThat(describe().exists()).as("the generation is over").isFalse();
    }

    @Test
    void aTimeoutExitsFourAndALostLeaseExitsThree() throws Exception {
        Process alone = tenureDouble("alone", "--parties", "2", "--timeout", "300ms");
        assertThat(exitOf(alone, "alone")).isEqualTo(4);
        assertThat(Files.readString(work.resolve("alone.log")))
                .contains("'round' was not entered within 300 ms (0 other of 2 parties entering); this party withdrew");
        assertThat(work.resolve("alone.in")).doesNotExist();
        assertThat(describe().exists()).isFalse();

        Process slow = tenureDouble("slow", "--parties", "1", "--ttl", "3s");
        Await.PROCESSES.until("slow's command to run", Duration.ofSeconds(60), () -> Files.exists(work.resolve("slow.in")));
        client.revokeLease(describe().inside().get(0).leaseId());

        assertThat(exitOf(slow, "slow")).isEqualTo(3);
        assertThat(Files.readString(work.resolve("slow.log"))).contains("lost the lease on 'round'");
        assertThat(describe().exists()).as("the ended lease left").isFalse();
    }
}
