package io.tenure.cli;

import io.tenure.client.Lease;
import io.tenure.client.SemaphoreNotAcquiredException;
import io.tenure.client.SemaphorePermit;
import io.tenure.client.TenureClient;
import io.tenure.client.TenureSemaphore;
import io.tenure.core.Limits;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;

/** {@code tenure semaphore NAME --limit N -- COMMAND}: runs a command while holding permits of a semaphore. */
@Command(name = "semaphore",
        description = {
            "Runs COMMAND while holding permits of semaphore NAME.",
            "Grants a lease, waits in the semaphore's queue for the permits, runs COMMAND with the terminal's input "
                    + "and output, keeps the lease alive while it runs, then releases the permits and revokes the "
                    + "lease. At most --limit permits are held at once over every client: with the default of one "
                    + "permit each, at most --limit commands run at once. COMMAND sees TENURE_LOCK_KEY (the "
                    + "semaphore's name), TENURE_LEASE_ID, TENURE_FENCING_TOKEN (this grant's own) and "
                    + "TENURE_PERMITS in its environment.",
            "Waiters are granted strictly in the order they asked: one that needs 3 permits is not passed by a later "
                    + "one that needs 1. The limit is fixed while the semaphore is held or waited for: another "
                    + "--limit is refused then, as is a NAME held or waited for as a lock (exit 1).",
            LeaseBoundCommand.LOST_LEASE_HELP + "its permits to anyone else.",
            LeaseBoundCommand.DOUBLE_DASH_HELP
        })
final class SemaphoreCommand extends LeaseBoundCommand {
    /** The variable that tells COMMAND how many permits it holds. */
    static final String PERMITS_VARIABLE = "TENURE_PERMITS";

    @Parameters(index = "0", paramLabel = "NAME", description = "The semaphore to hold permits of.")
    String name;

    @Parameters(index = "1..*", arity = "1..*", paramLabel = "COMMAND", description = "The command and its arguments.")
    List<String> command;

    @Option(names = "--limit", required = true, paramLabel = "N",
            description = "The most permits held at once, 1 to " + Limits.MAX_SEMAPHORE_LIMIT + "; every user of NAME "
                    + "must give the same.")
    int limit;

    @Option(names = "--permits", defaultValue = "1", paramLabel = "P",
            description = "How many permits COMMAND needs, 1 to --limit (default: ${DEFAULT-VALUE}).")
    int permits;

    @Override
    String name() {
        return name;
    }

    @Override
    List<String> command() {
        return command;
    }

    @Override
    void validate() {
        if (limit < 1 || limit > Limits.MAX_SEMAPHORE_LIMIT) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--limit': must be between 1 and "
                    + Limits.MAX_SEMAPHORE_LIMIT + ", got " + limit);
        }
        if (permits < 1 || permits > limit) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--permits': must be between 1 and "
                    + "--limit (" + limit + "), got " + permits);
        }
    }

    @Override
    Grant acquire(TenureClient client, Lease lease) throws NotAcquired {
        TenureSemaphore semaphore = client.semaphore(name, limit, lease);
        SemaphorePermit permit;
        try {
            permit = timeout == null ? semaphore.acquire(permits) : semaphore.acquire(permits, timeout);
        } catch (SemaphoreNotAcquiredException e) {
            throw new NotAcquired("'" + name + "' was not acquired within " + timeout.toMillis() + " ms: asked for "
                    + permits + " of " + limit + " permits; " + e.available() + " free"
                    + (e.waiters() > 0 ? ", " + e.waiters() + " waiting" : ""));
        }
        return new Grant(permit.name(), permit.fencingToken(), Map.of(PERMITS_VARIABLE, Integer.toString(permit.permits())),
                permit::release);
    }
}
