package io.tenure.cli;

import java.io.BufferedReader;
import java.io.Console;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * Where a password comes from, never the command line (where {@code ps} and shell history show
 * it): the first line of standard input, the first line of a file, or a prompt on the terminal.
 */
final class PasswordOption {
    @Spec(Spec.Target.MIXEE)
    CommandSpec spec;

    @Option(names = "--password-stdin", description = "Read the password from the first line of standard input.")
    boolean stdin;

    @Option(names = "--password-file", paramLabel = "FILE", description = "Read the password from the first line of FILE.")
    Path file;

    /** The password; a usage error when none is given, or it is empty. */
    String read(String prompt) {
        String password;
        if (stdin && file != null) {
            throw new ParameterException(spec.commandLine(), "give --password-stdin or --password-file, not both");
        }
        try {
            if (stdin) {
                password = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
            } else if (file != null) {
                List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
                password = lines.isEmpty() ? null : lines.get(0);
            } else {
                Console console = System.console();
                if (console == null) {
                    throw new ParameterException(spec.commandLine(), "a password is needed: give --password-stdin or --password-file "
                            + "(no terminal to prompt on)");
                }
                char[] typed = console.readPassword("%s", prompt);
                password = typed == null ? null : new String(typed);
            }
        } catch (IOException e) {
            throw new ParameterException(spec.commandLine(), "cannot read the password: " + e.getMessage());
        }
        if (password == null || password.isEmpty()) {
            throw new ParameterException(spec.commandLine(), "the password is empty: a user needs one");
        }
        return password;
    }
}
