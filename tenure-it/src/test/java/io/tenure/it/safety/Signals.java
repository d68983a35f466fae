package io.tenure.it.safety;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/**
 * Sends signals by pid through one long-lived shell (its {@code kill} is a builtin), so that a
 * SIGSTOP or SIGCONT takes effect within a millisecond of the call: starting a {@code kill}
 * process per signal costs a fork of this JVM, 100 ms and more on a busy machine, which would
 * blur F4's pause shorter than an election timeout.
 */
final class Signals implements AutoCloseable {
    private final Process shell;
    private final Writer in;
    private final BufferedReader out;

    Signals() throws IOException {
        shell = new ProcessBuilder("bash", "--norc", "--noprofile").redirectErrorStream(true).start();
        in = new OutputStreamWriter(shell.getOutputStream(), StandardCharsets.UTF_8);
        out = new BufferedReader(new InputStreamReader(shell.getInputStream(), StandardCharsets.UTF_8));
    }

    /** Sends {@code signal} ({@code STOP}, {@code CONT}, ...) to {@code pid}; fails if {@code kill} did. */
    synchronized void send(String signal, long pid) throws IOException {
        in.write("kill -" + signal + " " + pid + " 2>&1 && echo ok || echo failed\n");
        in.flush();
        String line;
        StringBuilder said = new StringBuilder();
        while ((line = out.readLine()) != null && !line.equals("ok")) {
            if (line.equals("failed")) {
                throw new IOException("kill -" + signal + " " + pid + " failed: " + said.toString().trim());
            }
            said.append(line).append(' ');
        }
        if (line == null) {
            throw new IOException("the signal shell ended");
        }
    }

    @Override
    public synchronized void close() {
        try {
            in.close();
            if (!shell.waitFor(5, TimeUnit.SECONDS)) {
                shell.destroyForcibly();
            }
        } catch (IOException | InterruptedException e) {
            shell.destroyForcibly();
        }
    }
}
