package io.tenure.it.net;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Runs the short system commands of the network lab ({@code ip}, {@code iptables-restore},
 * {@code tc}) with a deadline, and keeps what they printed, so that a failure can say exactly
 * which command failed and why.
 */
final class Commands {
    /** Each of these commands takes milliseconds; a minute means it hangs (a held xtables lock, say). */
    static final Duration LIMIT = Duration.ofSeconds(60);

    private Commands() {
    }

    /** What a finished command returned and printed (stdout and stderr together). */
    record Result(List<String> command, int exitCode, String output) {
        boolean ok() {
            return exitCode == 0;
        }

        /** {@code $ command -> exit N: output}, for error messages. */
        String describe() {
            return "$ " + String.join(" ", command) + " -> exit " + exitCode + (output.isBlank() ? "" : ": " + output.strip());
        }
    }

    /** Runs {@code command}; a command that cannot start at all counts as exit 127 (not found). */
    static Result run(List<String> command) {
        return run(command, null);
    }

    /** Runs {@code command} with {@code input} on its standard input (none when null). */
    static Result run(List<String> command, String input) {
        Process process;
        try {
            process = new ProcessBuilder(command).redirectErrorStream(true).start();
        } catch (IOException e) {
            return new Result(List.copyOf(command), 127, e.getMessage());
        }
        CompletableFuture<String> output = CompletableFuture.supplyAsync(() -> readAll(process.getInputStream()));
        try (OutputStream stdin = process.getOutputStream()) {
            if (input != null) {
                stdin.write(input.getBytes(StandardCharsets.UTF_8));
            }
        } catch (IOException e) {
            // The command ended without reading its input; its exit code and output say why.
        }
        try {
            if (!process.waitFor(LIMIT.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
                return new Result(List.copyOf(command), -1, "did not finish within " + LIMIT + "; killed pid " + process.pid());
            }
            return new Result(List.copyOf(command), process.exitValue(), output.get(10, TimeUnit.SECONDS));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
            return new Result(List.copyOf(command), -1, "interrupted");
        } catch (ExecutionException | TimeoutException e) {
            return new Result(List.copyOf(command), process.exitValue(), "(output lost: " + e + ")");
        }
    }

    /** Runs {@code command} and returns its output, or throws naming the command and what it printed. */
    static String check(List<String> command) throws IOException {
        return check(command, null);
    }

    static String check(List<String> command, String input) throws IOException {
        Result result = run(command, input);
        if (!result.ok()) {
            throw new IOException(result.describe());
        }
        return result.output();
    }

    private static String readAll(InputStream in) {
        try (in) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(unreadable output: " + e + ")";
        }
    }
}
