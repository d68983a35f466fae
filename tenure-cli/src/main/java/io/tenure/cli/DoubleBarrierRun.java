package io.tenure.cli;

import io.tenure.client.Lease;
import io.tenure.client.LeaseLostException;
import io.tenure.client.TenureClient;
import io.tenure.client.TenureDoubleBarrier;
import io.tenure.client.TenureException;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * {@code tenure barrier NAME --parties N --double -- COMMAND}: grants a lease, enters double
 * barrier NAME within the timeout, runs COMMAND once all N parties have entered (as a
 * {@link LeaseBoundProcess}, with NAME and the lease in its environment), then leaves and returns
 * once every party has left. Exits as {@code tenure lock} does: COMMAND's status, 3 when the
 * lease is lost, 4 when not let in within the timeout (the entry is withdrawn).
 */
final class DoubleBarrierRun {
    private final String self;
    private final String name;
    private final int parties;
    private final Duration timeout; // null: until let in
    private final List<String> command;
    private final PrintWriter err;

    DoubleBarrierRun(String self, String name, int parties, Duration timeout, List<String> command, PrintWriter err) {
        this.self = self;
        this.name = name;
        this.parties = parties;
        this.timeout = timeout;
        this.command = List.copyOf(command);
        this.err = err;
    }

    int run(TenureClient client, Duration ttl, String holder) throws IOException, InterruptedException {
        Lease lease = client.grantLease(ttl, holder);
        AtomicReference<LeaseBoundProcess> running = new AtomicReference<>();
        // On Ctrl-C or SIGTERM: stop the command, then end the lease, which leaves the barrier.
        Thread cleanUp = new Thread(() -> {
            LeaseBoundProcess process = running.get();
            if (process != null) {
                process.stop();
            }
            lease.close();
        }, "tenure-barrier-shutdown");
        Runtime.getRuntime().addShutdownHook(cleanUp);
        try {
            return enterRunLeave(client.doubleBarrier(name, parties, lease), lease, running);
        } finally {
            try {
                Runtime.getRuntime().removeShutdownHook(cleanUp);
            } catch (IllegalStateException shuttingDown) {
                // The hook is already cleaning up.
            }
        }
    }

    private int enterRunLeave(TenureDoubleBarrier barrier, Lease lease, AtomicReference<LeaseBoundProcess> running)
            throws IOException, InterruptedException {
        TenureDoubleBarrier.Entry entry;
        try {
            entry = (timeout == null ? barrier.enterAsync() : barrier.enterAsync(timeout)).join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof LeaseLostException lost) {
                err.println(self + ": " + lost.getMessage() + "; the command was not started");
                return TenureCli.EXIT_LEASE_LOST;
            }
            lease.close();
            throw e.getCause() instanceof RuntimeException cause ? cause : e;
        }
        if (!entry.entered()) {
            err.println(self + ": '" + name + "' was not entered within " + timeout.toMillis() + " ms (" + entry.entering()
                    + " other of " + parties + " parties entering" + (entry.inside() > 0 ? ", " + entry.inside() + " still inside" : "")
                    + "); this party withdrew");
            lease.close();
            return TenureCli.EXIT_NOT_ACQUIRED;
        }
        LeaseBoundProcess process = new LeaseBoundProcess(command, Map.of(LeaseBoundCommand.KEY_VARIABLE, name,
                LeaseBoundCommand.LEASE_VARIABLE, Long.toString(lease.id())), lease);
        running.set(process);
        LeaseBoundProcess.Outcome outcome;
        try {
            outcome = process.run();
        } catch (IOException e) {
            lease.close(); // its end leaves the barrier
            throw e;
        }
        if (outcome.leaseLost()) {
            err.println(self + ": lost the lease on '" + name + "' (" + outcome.loss().reason() + ": " + outcome.loss().message()
                    + "); the command was stopped");
            return TenureCli.EXIT_LEASE_LOST;
        }
        try {
            barrier.leaveAsync().join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof LeaseLostException lost) {
                err.println(self + ": " + lost.getMessage() + " while waiting for the other parties to leave '" + name + "'");
                return TenureCli.EXIT_LEASE_LOST;
            }
            if (!(e.getCause() instanceof TenureException failure)) {
                throw e;
            }
            // The command's status matters more; the lease's end leaves the barrier.
            err.println(self + ": could not leave '" + name + "' (" + failure.getMessage() + ")");
        }
        lease.close();
        return outcome.exitStatus();
    }
}
