package io.tenure.it.net;

import java.io.IOException;

/**
 * A child JVM that creates a lab and never closes it, for {@link NetLabTest} to end from outside:
 * with SIGTERM (the shutdown hook must tear the lab down) or SIGKILL (the next
 * {@link NetLab#sweepStale()} must). Prints {@code ready PREFIX} once the lab exists, then waits
 * for the end of its standard input.
 */
public final class LabHolder {
    private LabHolder() {
    }

    public static void main(String[] args) throws IOException {
        NetLab lab = NetLab.create(Integer.parseInt(args[0]));
        System.out.println("ready " + lab.prefix());
        System.out.flush();
        while (System.in.read() >= 0) {
            // Wait for the end of stdin, or a signal.
        }
        // Ends without lab.close(): the shutdown hook tears it down.
    }
}
