package io.tenure.cli;

import io.tenure.client.Lease;
import io.tenure.client.LeaseLostException;
import io.tenure.client.LockHandle;
import io.tenure.client.LockNotAcquiredException;
import io.tenure.client.TenureClient;
import io.tenure.client.TenureException;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicReference;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code tenure lock NAME -- COMMAND}: runs a command while holding a lock. */
@Command(name = "lock", mixinStandardHelpOptions = true,
        description = {
            "Runs COMMAND while holding lock NAME.",
            "Grants a lease, waits for the lock, runs COMMAND with the terminal's input and output, keeps the "
                    + "lease alive while it runs, then releases the lock and revokes the lease. COMMAND sees "
                    + "TENURE_LOCK_KEY, TENURE_LEASE_ID and TENURE_FENCING_TOKEN in its environment; pass the "
                    + "fencing token to any storage it writes, so writes of an older holder can be refused.",
            "If the lease is lost (the cluster stops acknowledging keep-alives for the lease's safe window: TTL/2 for TTLs of 15s and more), COMMAND is stopped "
                    + "with SIGTERM, then SIGKILL, before the server could hand the lock to anyone else.",
            "Put '--' before COMMAND so that its options are not read as tenure's."
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0..255:COMMAND's own exit status",
            "1:any other error (no member reachable, request refused, COMMAND not runnable)",
            "2:usage error",
            "3:the lease was lost; COMMAND was stopped (or never started)",
            "4:the lock was not acquired within --timeout"
        })
final class LockCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "NAME", description = "The lock to hold.")
    String name;

    @Parameters(index = "1..*", arity = "1..*", paramLabel = "COMMAND", description = "The command and its arguments.")
    List<String> command;

    @Option(names = "--ttl", defaultValue = "10s", converter = DurationConverter.class, paramLabel = "DURATION",
            description = "Lease time to live, e.g. 500ms, 10s, 2m (default: ${DEFAULT-VALUE}). "
                    + "A paused or partitioned holder loses the lock after at most its safe window (TTL/2 from 15s up, 5/6 of the TTL at 5s).")
    Duration ttl;

    @Option(names = "--timeout", defaultValue = "30s", converter = DurationConverter.OrForever.class,
            paramLabel = "DURATION",
            description = "How long to wait for the lock: 0 tries once, 'forever' waits until granted "
                    + "(default: ${DEFAULT-VALUE}).")
    Duration timeout;

    @Option(names = "--client-id", paramLabel = "ID",
            description = "The holder name others see (default: user@hostname:pid).")
    String clientId;

    @Option(names = "--metadata", paramLabel = "TEXT", description = "Shown to others with the holder.")
    String metadata;

    @Mixin
    EndpointsOption endpoints;

    @Override
    public Integer call() throws IOException, InterruptedException {
        if (ttl.isZero()) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--ttl': must be more than 0");
        }
        PrintWriter err = spec.commandLine().getErr();
        String holder = clientId != null ? clientId : defaultClientId();
        byte[] metadataBytes = metadata == null ? null : metadata.getBytes(StandardCharsets.UTF_8);
        try (TenureClient client = endpoints.connect()) {
            Lease lease = client.grantLease(ttl, holder);
            AtomicReference<LeaseBoundProcess> running = new AtomicReference<>();
            // On Ctrl-C or SIGTERM: stop the command first, and only then free the lock, so that
            // the next holder never overlaps with it.
            Thread cleanUp = new Thread(() -> {
                LeaseBoundProcess process = running.get();
                if (process != null) {
                    process.stop();
                }
                lease.close();
            }, "tenure-lock-shutdown");
            Runtime.getRuntime().addShutdownHook(cleanUp);
            try {
                return holdWhileRunning(client, lease, metadataBytes, running, err);
            } finally {
                try {
                    Runtime.getRuntime().removeShutdownHook(cleanUp);
                } catch (IllegalStateException shuttingDown) {
                    // The hook is already cleaning up.
                }
            }
        }
    }

    private int holdWhileRunning(TenureClient client, Lease lease, byte[] metadataBytes,
                                 AtomicReference<LeaseBoundProcess> running, PrintWriter err)
            throws IOException, InterruptedException {
        LockHandle handle;
        try {
            handle = client.acquire(name, lease, timeout, metadataBytes);
        } catch (LockNotAcquiredException e) {
            err.println("tenure lock: '" + name + "' was not acquired within " + timeout.toMillis() + " ms"
                    + (e.holder().isEmpty() ? "" : "; held by '" + e.holder() + "'"));
            lease.close();
            return TenureCli.EXIT_LOCK_NOT_ACQUIRED;
        } catch (LeaseLostException e) {
            err.println("tenure lock: " + e.getMessage() + "; the command was not started");
            return TenureCli.EXIT_LEASE_LOST;
        } catch (RuntimeException e) {
            lease.close();
            throw e;
        }
        LeaseBoundProcess process = new LeaseBoundProcess(command, Map.of(
                "TENURE_LOCK_KEY", handle.key(),
                "TENURE_LEASE_ID", Long.toString(lease.id()),
                "TENURE_FENCING_TOKEN", Long.toString(handle.fencingToken())), lease);
        running.set(process);
        LeaseBoundProcess.Outcome outcome;
        try {
            outcome = process.run();
        } catch (IOException e) {
            handle.close();
            lease.close();
            throw e;
        }
        if (outcome.leaseLost()) {
            // No revoke: the lease is gone or its server unreachable, and waiting for either to
            // answer would only delay the exit. The server expires it after its TTL.
            err.println("tenure lock: lost the lease on '" + name + "' (" + outcome.loss().reason() + ": "
                    + outcome.loss().message() + "); the command was stopped");
            return TenureCli.EXIT_LEASE_LOST;
        }
        try {
            handle.release();
        } catch (TenureException e) {
            // The command's status matters more; the lock goes with the lease.
            err.println("tenure lock: could not release '" + name + "' (" + e.getMessage() + ")");
        }
        lease.close();
        return outcome.exitStatus();
    }

    /** {@code user@hostname:pid}: enough for an operator to find the holder. */
    static String defaultClientId() {
        String host = System.getenv("HOSTNAME");
        if (host == null || host.isBlank()) {
            try {
                host = InetAddress.getLocalHost().getHostName();
            } catch (UnknownHostException e) {
                host = "localhost";
            }
        }
        return System.getProperty("user.name", "unknown") + "@" + host + ":" + ProcessHandle.current().pid();
    }
}
