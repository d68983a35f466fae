package io.tenure.cli;

import io.tenure.client.Lease;
import io.tenure.client.LeaseLostException;
import io.tenure.client.TenureClient;
import io.tenure.client.TenureException;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicReference;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * What {@code tenure lock}, {@code tenure semaphore} and {@code tenure elect} share: grant a lease,
 * acquire NAME for it within {@code --timeout}, run COMMAND as a {@link LeaseBoundProcess} with
 * the grant in its environment, then release and revoke; and the exit codes that tell these
 * outcomes apart. A subclass says what it acquires ({@link #acquire}) and checks its own options
 * ({@link #validate}).
 *
 * <p>The options here keep the names and defaults {@code tenure lock} has always had: scripts use
 * them. Their help and exit code 4's say "the lock" or "the semaphore" through picocli's
 * {@code ${COMMAND-NAME}}, unless the subclass's resource bundle words it otherwise ({@link #GRANT},
 * {@link #NOT_ACQUIRED}); picocli takes each {@code @Command} attribute that a subclass leaves
 * unset from this class.
 */
@Command(mixinStandardHelpOptions = true,
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0..255:COMMAND's own exit status",
            "1:any other error (no member reachable, request refused, COMMAND not runnable)",
            "2:usage error",
            "3:the lease was lost; COMMAND was stopped (or never started)",
            "4:" + LeaseBoundCommand.NOT_ACQUIRED + " within --timeout"
        })
abstract class LeaseBoundCommand implements Callable<Integer> {
    /** Variables COMMAND sees; a {@code tenure} it runs never reads them as settings ({@link SettingSources#RESERVED}). */
    static final String KEY_VARIABLE = "TENURE_LOCK_KEY";
    static final String LEASE_VARIABLE = "TENURE_LEASE_ID";
    static final String TOKEN_VARIABLE = "TENURE_FENCING_TOKEN";

    /** Help text of both commands; followed by what the server could hand on: "the lock to anyone else." */
    static final String LOST_LEASE_HELP = "If the lease is lost (the cluster stops acknowledging keep-alives for the lease's "
            + "safe window: TTL/2 for TTLs of 15s and more), COMMAND is stopped with SIGTERM, then SIGKILL, before the "
            + "server could hand ";
    static final String DOUBLE_DASH_HELP = "Put '--' before COMMAND so that its options are not read as tenure's.";
    /**
     * What the help calls the grant: key {@code tenure.grant} of the command's resource bundle
     * ({@code @Command(resourceBundle)}), else "the lock" or "the semaphore" from its name.
     */
    static final String GRANT = "${bundle:tenure.grant:-the ${COMMAND-NAME}}";
    /** Exit code 4 in the help: key {@code tenure.notAcquired}, else "the lock was not acquired". */
    static final String NOT_ACQUIRED = "${bundle:tenure.notAcquired:-the ${COMMAND-NAME} was not acquired}";

    @Spec
    CommandSpec spec;

    @Option(names = "--ttl", defaultValue = "10s", converter = DurationConverter.class, paramLabel = "DURATION",
            description = "Lease time to live, e.g. 500ms, 10s, 2m (default: ${DEFAULT-VALUE}). "
                    + "A paused or partitioned holder loses " + GRANT + " after at most its safe window (TTL/2 from 15s up, 5/6 of the TTL at 5s).")
    Duration ttl;

    @Option(names = "--timeout", defaultValue = "30s", converter = DurationConverter.OrForever.class,
            paramLabel = "DURATION",
            description = "How long to wait for " + GRANT + ": 0 tries once, 'forever' waits until granted "
                    + "(default: ${DEFAULT-VALUE}).")
    Duration timeout;

    @Option(names = "--client-id", paramLabel = "ID",
            description = "The holder name others see (default: user@hostname:pid).")
    String clientId;

    @Mixin
    EndpointsOption endpoints;

    /**
     * What the lease holds while COMMAND runs: the name and fencing token COMMAND sees, any more
     * variables it sees, and how to give the grant back.
     */
    record Grant(String key, long fencingToken, Map<String, String> moreEnvironment, Runnable release) {
    }

    /** NAME was not granted within {@code --timeout}; nothing is held. The message says what was refused and why. */
    static final class NotAcquired extends Exception {
        NotAcquired(String message) {
            super(message, null, false, false);
        }
    }

    /** NAME, for messages. */
    abstract String name();

    /** COMMAND and its arguments: the positional parameters after NAME. */
    abstract List<String> command();

    /** Checks the command's own options before anything is sent; throws {@link ParameterException}. */
    void validate() {
    }

    /**
     * Acquires NAME for {@code lease}, waiting at most {@link #timeout} (null: until granted or the
     * lease is lost).
     *
     * @throws NotAcquired         if not granted in time (the wait was withdrawn)
     * @throws LeaseLostException  if the lease was lost first
     */
    abstract Grant acquire(TenureClient client, Lease lease) throws NotAcquired;

    @Override
    public Integer call() throws IOException, InterruptedException {
        if (ttl.isZero()) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--ttl': must be more than 0");
        }
        validate();
        PrintWriter err = spec.commandLine().getErr();
        String holder = clientId != null ? clientId : defaultClientId();
        try (TenureClient client = endpoints.connect()) {
            Lease lease = client.grantLease(ttl, holder);
            AtomicReference<LeaseBoundProcess> running = new AtomicReference<>();
            // On Ctrl-C or SIGTERM: stop the command first, and only then free the grant, so that
            // the next holder never overlaps with it.
            Thread cleanUp = new Thread(() -> {
                LeaseBoundProcess process = running.get();
                if (process != null) {
                    process.stop();
                }
                lease.close();
            }, "tenure-" + spec.name() + "-shutdown");
            Runtime.getRuntime().addShutdownHook(cleanUp);
            try {
                return holdWhileRunning(client, lease, running, err);
            } finally {
                try {
                    Runtime.getRuntime().removeShutdownHook(cleanUp);
                } catch (IllegalStateException shuttingDown) {
                    // The hook is already cleaning up.
                }
            }
        }
    }

    private int holdWhileRunning(TenureClient client, Lease lease, AtomicReference<LeaseBoundProcess> running, PrintWriter err)
            throws IOException, InterruptedException {
        String self = spec.qualifiedName();
        Grant grant;
        try {
            grant = acquire(client, lease);
        } catch (NotAcquired e) {
            err.println(self + ": " + e.getMessage());
            lease.close();
            return TenureCli.EXIT_NOT_ACQUIRED;
        } catch (LeaseLostException e) {
            err.println(self + ": " + e.getMessage() + "; the command was not started");
            return TenureCli.EXIT_LEASE_LOST;
        } catch (RuntimeException e) {
            lease.close();
            throw e;
        }
        Map<String, String> environment = new HashMap<>(grant.moreEnvironment());
        environment.put(KEY_VARIABLE, grant.key());
        environment.put(LEASE_VARIABLE, Long.toString(lease.id()));
        environment.put(TOKEN_VARIABLE, Long.toString(grant.fencingToken()));
        LeaseBoundProcess process = new LeaseBoundProcess(command(), environment, lease);
        running.set(process);
        LeaseBoundProcess.Outcome outcome;
        try {
            outcome = process.run();
        } catch (IOException e) {
            grant.release().run();
            lease.close();
            throw e;
        }
        if (outcome.leaseLost()) {
            // No revoke: the lease is gone or its server unreachable, and waiting for either to
            // answer would only delay the exit. The server expires it after its TTL.
            err.println(self + ": lost the lease on '" + name() + "' (" + outcome.loss().reason() + ": "
                    + outcome.loss().message() + "); the command was stopped");
            return TenureCli.EXIT_LEASE_LOST;
        }
        try {
            grant.release().run();
        } catch (TenureException e) {
            // The command's status matters more; the grant goes with the lease.
            err.println(self + ": could not release '" + name() + "' (" + e.getMessage() + ")");
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
