package io.tenure.it;

import io.tenure.testing.ChildJava;
import io.tenure.testing.FreePorts;
import io.tenure.testing.MemberProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Bad cluster flags on the {@code tenure server} command line, run as a process: a non-zero exit
 * at once, a message naming the problem, and no data directory created or modified.
 */
@ExtendWith(ItLogs.class)
class ClusterFlagsTest {
    /** A JVM start and a refusal; generous for a loaded 2-core machine, far below a server's lifetime. */
    static final Duration EXIT_LIMIT = Duration.ofSeconds(30);

    @TempDir
    Path work;

    /** What a refused start did. */
    record Outcome(int exit, String output) {
    }

    private Outcome server(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(ChildJava.command(MemberProcess.CLI_MAIN));
        command.add("server");
        command.addAll(List.of(args));
        Path out = Files.createTempFile(work, "cli", ".log");
        ItLogs.register(out);
        Process process = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.to(out.toFile())).start();
        try {
            assertThat(process.waitFor(EXIT_LIMIT.toMillis(), TimeUnit.MILLISECONDS))
                    .as("tenure server " + String.join(" ", args) + " exits at once").isTrue();
        } finally {
            if (process.isAlive()) {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
            }
        }
        return new Outcome(process.exitValue(), Files.readString(out, StandardCharsets.UTF_8));
    }

    private static String peers(int... ports) {
        List<String> parts = new ArrayList<>();
        for (int i = 0; i < ports.length; i++) {
            parts.add("n" + (i + 1) + "=127.0.0.1:" + ports[i]);
        }
        return String.join(",", parts);
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void malformedPeersAreRefused() throws Exception {
        int[] p = FreePorts.take(3);
        Path data = work.resolve("data");
        for (String bad : List.of("n1=127.0.0.1:" + p[0] + ",n2", "n1=127.0.0.1:" + p[0] + ",n2=127.0.0.1:notaport",
                "n1=127.0.0.1:" + p[0] + ",=127.0.0.1:" + p[1])) {
            Outcome refused = server("--id", "n1", "--peers", bad, "--client-port", Integer.toString(p[2]), "--data-dir", data.toString());
            assertThat(refused.exit()).as("exit of --peers " + bad + ": " + refused.output()).isNotZero();
            assertThat(refused.output()).as("names --peers").containsIgnoringCase("peers");
            assertThat(refused.output()).as("shows the bad part").containsAnyOf("n2", "notaport", "=127.0.0.1:" + p[1]);
            assertThat(data).as("no data directory created").doesNotExist();
        }
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void anIdMissingFromThePeersIsRefused() throws Exception {
        int[] p = FreePorts.take(4);
        Path data = work.resolve("data");
        Outcome refused = server("--id", "n4", "--peers", peers(p[0], p[1], p[2]), "--client-port", Integer.toString(p[3]),
                "--data-dir", data.toString());
        assertThat(refused.exit()).as(refused.output()).isNotZero();
        assertThat(refused.output()).as("names the missing member").contains("n4");
        assertThat(data).as("no data directory created").doesNotExist();
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void twoMembersGivenOneAddressAreRefused() throws Exception {
        int[] p = FreePorts.take(2);
        Path data = work.resolve("data");
        String shared = "127.0.0.1:" + p[0];
        Outcome refused = server("--id", "n1", "--peers", "n1=" + shared + ",n2=" + shared + ",n3=127.0.0.1:" + p[1],
                "--client-port", Integer.toString(FreePorts.one()), "--data-dir", data.toString());
        assertThat(refused.exit()).as(refused.output()).isNotZero();
        assertThat(refused.output()).as("names the shared address").contains(shared);
        assertThat(data).as("no data directory created").doesNotExist();
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void aSnapshotThresholdBelowTheMinimumIsRefused() throws Exception {
        int[] p = FreePorts.take(4);
        Path data = work.resolve("data");
        Outcome refused = server("--id", "n1", "--peers", peers(p[0], p[1], p[2]), "--client-port", Integer.toString(p[3]),
                "--data-dir", data.toString(), "--snapshot-every", "99");
        assertThat(refused.exit()).as(refused.output()).isNotZero();
        assertThat(refused.output()).as("names the option").contains("snapshot");
        assertThat(data).as("no data directory created").doesNotExist();
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void theDataDirectoryOfAnotherMemberIsRefusedAndLeftAsItWas() throws Exception {
        int[] p = FreePorts.take(6);
        String peers = peers(p[0], p[1], p[2]);
        Path data = work.resolve("first-member-data");
        // n1 creates its data directory, then stops (its peers never come; it needs no quorum to make its directory).
        MemberProcess n1 = ItLogs.member("n1", data).logFile(work.resolve("n1.log")).clientPort(p[3]).peerPort(p[0]).peers(peers).build();
        try {
            n1.launch();
            n1.awaitServing(Cluster.START_LIMIT, false);
        } finally {
            n1.stop();
        }
        Map<String, String> before = tree(data);
        assertThat(before).as("n1 made its data directory").isNotEmpty();

        Outcome refused = server("--id", "n2", "--peers", peers, "--client-port", Integer.toString(p[4]), "--data-dir", data.toString());
        assertThat(refused.exit()).as(refused.output()).isNotZero();
        assertThat(refused.output()).as("names both members").contains("n1").contains("n2");
        assertThat(tree(data)).as("the data directory is unchanged").isEqualTo(before);
    }

    /** Every file under {@code root} with its size, modification time and content hash. */
    private static Map<String, String> tree(Path root) throws IOException {
        Map<String, String> files = new TreeMap<>();
        try (Stream<Path> walk = Files.walk(root)) {
            for (Path file : (Iterable<Path>) walk::iterator) {
                String key = root.relativize(file).toString();
                if (Files.isDirectory(file)) {
                    files.put(key + "/", "dir " + Files.getLastModifiedTime(file));
                } else {
                    byte[] content = Files.readAllBytes(file);
                    files.put(key, content.length + " bytes, " + Files.getLastModifiedTime(file) + ", hash "
                            + java.util.Arrays.hashCode(content));
                }
            }
        }
        return files;
    }
}
