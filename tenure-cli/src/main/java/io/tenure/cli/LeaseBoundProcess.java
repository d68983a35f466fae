package io.tenure.cli;

import io.tenure.client.Lease;
import io.tenure.client.LeaseLoss;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A child process that may only run while a lease is valid: it is started with the terminal's
 * standard streams, and stopped (SIGTERM, then SIGKILL) as soon as the lease is lost.
 */
final class LeaseBoundProcess {
    /** The longest a lost-lease child gets to exit on SIGTERM before it is killed. */
    static final Duration MAX_GRACE = Duration.ofSeconds(5);

    private static final Logger log = LoggerFactory.getLogger(LeaseBoundProcess.class);

    /** How a run ended: the child's exit status, or the loss that stopped it. */
    record Outcome(int exitStatus, LeaseLoss loss) {
        boolean leaseLost() {
            return loss != null;
        }
    }

    private final List<String> command;
    private final Map<String, String> environment;
    private final Lease lease;
    private volatile Process child;

    LeaseBoundProcess(List<String> command, Map<String, String> environment, Lease lease) {
        this.command = List.copyOf(command);
        this.environment = Map.copyOf(environment);
        this.lease = lease;
    }

    /**
     * Starts the child and waits until it exits or the lease is lost, whichever comes first.
     *
     * @throws IOException if the command cannot be started
     */
    Outcome run() throws IOException, InterruptedException {
        ProcessBuilder builder = new ProcessBuilder(command).inheritIO();
        builder.environment().putAll(environment);
        Process started = builder.start();
        child = started;
        try {
            Object first;
            try {
                first = CompletableFuture.anyOf(started.onExit(), lease.lost()).get();
            } catch (ExecutionException e) {
                throw new IllegalStateException("waiting for the command failed", e.getCause());
            }
            if (first instanceof LeaseLoss loss) {
                stop();
                return new Outcome(-1, loss);
            }
            return new Outcome(started.exitValue(), null);
        } catch (InterruptedException e) {
            stop();
            throw e;
        }
    }

    /**
     * Stops the child, if it was started and still runs: SIGTERM, then SIGKILL to it and to
     * everything it started. The grace is at most half of what separates the loss from the
     * server's earliest expiry (TTL minus the lease's safe window: TTL/2 for TTLs from 15 s, TTL/6
     * at 5 s), when the server may hand the lock to another holder; the child must be gone well
     * before that. Safe to call from a
     * shutdown hook, and more than once.
     */
    void stop() {
        Process child = this.child;
        if (child == null || !child.isAlive()) {
            return;
        }
        // Taken now: once the child dies its children are re-parented and no longer found.
        List<ProcessHandle> descendants = child.descendants().toList();
        Duration half = lease.ttl().minus(lease.safeWindow()).dividedBy(2);
        Duration grace = half.compareTo(MAX_GRACE) < 0 ? half : MAX_GRACE;
        child.destroy();
        try {
            child.onExit().get(grace.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            log.warn("command did not exit within {} ms of SIGTERM; killing it", grace.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException e) {
            log.debug("waiting for the command to exit failed", e);
        }
        child.destroyForcibly();
        descendants.stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly);
    }
}
