package io.tenure.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@code tenure user}, {@code tenure role} and {@code tenure auth} end to end against a real server
 * process: a root user added and authentication switched on from the shell, a token printed by
 * {@code auth token} and shown with {@code --token} or {@code TENURE_TOKEN}, the exit codes of a
 * call without it and of a refused change, and passwords read from standard input only.
 */
class AuthCommandTest extends CommandProcessTest {

    /** Runs {@code tenure SUBCOMMAND ARGS --endpoints (the server)} with {@code input} on its standard input and {@code env} added. */
    private Run tenure(String id, String input, Map<String, String> env, String subcommand, String... args) throws Exception {
        List<String> command = new ArrayList<>(io.tenure.testing.ChildJava.command(io.tenure.testing.MemberProcess.CLI_MAIN));
        command.add(subcommand);
        command.addAll(List.of(args));
        command.addAll(List.of("--endpoints", server.endpoint()));
        ProcessBuilder builder = new ProcessBuilder(command).directory(work.toFile())
                .redirectOutput(work.resolve(id + ".out").toFile())
                .redirectError(work.resolve(id + ".err").toFile());
        builder.environment().putAll(env);
        Process process = builder.start();
        started.add(process);
        try (OutputStream stdin = process.getOutputStream()) {
            stdin.write(input.getBytes(StandardCharsets.UTF_8));
        }
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("tenure " + subcommand + " " + id + " exits").isTrue();
        return new Run(process.exitValue(), Files.readString(work.resolve(id + ".out")), Files.readString(work.resolve(id + ".err")));
    }

    @Test
    void aRootUserSwitchesAuthenticationOnAndEveryCommandThenShowsAToken() throws Exception {
        Run added = tenure("add", "s3cret root pw\n", Map.of(), "user", "add", "root", "--password-stdin");
        assertThat(added.exit()).as(added.err()).isZero();
        assertThat(added.out()).startsWith("root").contains("roles=-");
        assertThat(tenure("grant", "", Map.of(), "user", "grant-role", "root", "root").out()).contains("roles=root");
        assertThat(tenure("role", "", Map.of(), "role", "add", "reporters").out()).startsWith("reporters  -");
        Run granted = tenure("perm", "", Map.of(), "role", "grant", "reporters", "read", "--kind", "kv", "--prefix", "reports/");
        assertThat(granted.out()).contains("kv:reports/*=read");
        Run badLevel = tenure("badLevel", "", Map.of(), "role", "grant", "reporters", "everything");
        assertThat(badLevel.exit()).isEqualTo(2);
        assertThat(badLevel.err()).contains("LEVEL").contains("everything");

        Run on = tenure("enable", "", Map.of(), "auth", "enable");
        assertThat(on.exit()).as(on.err()).isZero();
        assertThat(on.out()).contains("authentication: on");

        Run refused = tenure("refused", "", Map.of(), "status");
        assertThat(refused.exit()).isEqualTo(1);
        assertThat(refused.err()).contains("authentication is on").contains("bearer token");

        Run wrong = tenure("wrong", "not it\n", Map.of(), "auth", "token", "root", "--password-stdin");
        assertThat(wrong.exit()).isEqualTo(1);
        assertThat(wrong.err()).contains("no such user, or a wrong password");
        Run token = tenure("token", "s3cret root pw\n", Map.of(), "auth", "token", "root", "--password-stdin", "--ttl", "1h");
        assertThat(token.exit()).as(token.err()).isZero();
        String issued = token.out().strip();
        assertThat(issued).startsWith("tnr_");

        assertThat(tenure("withFlag", "", Map.of(), "status", "--token", issued).exit()).isZero();
        Run withEnv = tenure("withEnv", "", Map.of("TENURE_TOKEN", issued), "auth", "status");
        assertThat(withEnv.out()).contains("authentication: on").contains("you: root (token)");
        Run users = tenure("users", "", Map.of("TENURE_TOKEN", issued), "user", "list");
        assertThat(users.out()).contains("root  roles=root  tokens=1");
        assertThat(users.out()).doesNotContain("pbkdf2").doesNotContain(issued);

        // A user without root may not manage: exit 1, and the message names what it needs.
        assertThat(tenure("worker", "worker pw\n", Map.of("TENURE_TOKEN", issued), "user", "add", "worker", "--password-stdin")
                .exit()).isZero();
        String workerToken = tenure("workerToken", "worker pw\n", Map.of(), "auth", "token", "worker", "--password-stdin").out().strip();
        Run denied = tenure("denied", "", Map.of("TENURE_TOKEN", workerToken), "role", "add", "mine");
        assertThat(denied.exit()).isEqualTo(1);
        assertThat(denied.err()).contains("user 'worker' may not add roles").contains("root");

        Run noPassword = tenure("noPassword", "", Map.of("TENURE_TOKEN", issued), "user", "add", "empty", "--password-stdin");
        assertThat(noPassword.exit()).isEqualTo(2);
        assertThat(noPassword.err()).contains("password is empty");

        Run off = tenure("disable", "", Map.of("TENURE_TOKEN", issued), "auth", "disable");
        assertThat(off.out()).contains("authentication: off");
        assertThat(tenure("open", "", Map.of(), "status").exit()).isZero();
    }
}
