package io.tenure.it;

import io.tenure.client.TenureClient;
import io.tenure.testing.MemberProcess;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * What the tests of {@code tenure} client commands run as processes share: one real server
 * process with its data in {@link #work}, a client of it, and the processes a test adds to
 * {@link #started}, all ended after each test.
 */
@ExtendWith(ItLogs.class)
abstract class CommandProcessTest {
    @TempDir
    Path work;
    MemberProcess server;
    TenureClient client;
    final List<Process> started = new ArrayList<>();

    @BeforeEach
    void start() throws IOException {
        server = ItLogs.single(work.resolve("data")).start();
        client = TenureClient.builder().endpoints(List.of(server.endpoint())).build();
    }

    @AfterEach
    void stop() throws Exception {
        started.forEach(Process::destroyForcibly);
        client.close();
        server.close();
    }

    /** What one {@code tenure ...} command printed on stdout and stderr, and how it exited. */
    record Run(int exit, String out, String err) {}

    /**
     * Runs {@code tenure SUBCOMMAND ARGS --endpoints (the server)} to its end (at most 60 s), its
     * output kept in {@code ID.out} and {@code ID.err} of {@link #work}.
     */
    Run tenure(String id, String subcommand, String... args) throws Exception {
        Process process = start(id, subcommand, args);
        org.assertj.core.api.Assertions.assertThat(process.waitFor(60, java.util.concurrent.TimeUnit.SECONDS))
                .as("tenure " + subcommand + " " + id + " exits").isTrue();
        return new Run(process.exitValue(), Files.readString(work.resolve(id + ".out")), Files.readString(work.resolve(id + ".err")));
    }

    /** Starts {@code tenure SUBCOMMAND ARGS --endpoints (the server)}, its output kept in {@code ID.out} and {@code ID.err}. */
    Process start(String id, String subcommand, String... args) throws IOException {
        List<String> command = new ArrayList<>(io.tenure.testing.ChildJava.command(MemberProcess.CLI_MAIN));
        command.add(subcommand);
        command.addAll(List.of(args));
        command.addAll(List.of("--endpoints", server.endpoint()));
        Process process = new ProcessBuilder(command).directory(work.toFile())
                .redirectOutput(work.resolve(id + ".out").toFile())
                .redirectError(work.resolve(id + ".err").toFile())
                .start();
        started.add(process);
        return process;
    }

    /** The file's text; empty while it does not exist. */
    static String readQuietly(Path file) {
        try {
            return Files.exists(file) ? Files.readString(file) : "";
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
