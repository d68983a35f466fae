package io.tenure.cli;

import io.tenure.client.LockDescription;
import io.tenure.client.TenureClient;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code tenure locks}: the held locks, one line each. */
@Command(name = "locks", mixinStandardHelpOptions = true,
        description = {
            "Lists the held locks: lock, holder, lease, fencing token, waiters, mode, holders.",
            "Read linearizably, in name order, one line each under a header: the lock, its holder (client id), the "
                    + "holder's lease, the fencing token of the grant, the number of waiters, the mode it is held in "
                    + "('write': alone; 'read': shared) and the number of holders. For a lock held in read mode, "
                    + "holder, lease and token are those of its first reader; 'tenure describe' lists them all. A lock "
                    + "nobody holds is not listed.",
            "When exactly --limit locks are printed there may be more; the message on standard error says so."
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:success", "1:no member answered, or the cluster refused the request", "2:usage error"})
final class LocksCommand implements Callable<Integer> {
    static final int MAX_LIMIT = 10_000;

    @Spec
    CommandSpec spec;

    @Option(names = "--prefix", paramLabel = "P", defaultValue = "",
            description = "Only the locks whose names start with P (default: every lock).")
    String prefix;

    @Option(names = "--limit", paramLabel = "N", defaultValue = "1000",
            description = "At most N locks, 1 to 10000 (default: ${DEFAULT-VALUE}).")
    int limit;

    @Mixin
    EndpointsOption endpoints;

    @Override
    public Integer call() {
        if (limit < 1 || limit > MAX_LIMIT) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--limit': must be between 1 and "
                    + MAX_LIMIT + ", got " + limit);
        }
        try (TenureClient client = endpoints.connect()) {
            List<LockDescription> locks = client.locks(prefix, limit);
            Table table = new Table("LOCK", "HOLDER", ">LEASE", ">TOKEN", ">WAITERS", "MODE", ">HOLDERS");
            for (LockDescription lock : locks) {
                table.row(lock.key(), lock.holder(), lock.leaseId(), lock.fencingToken(), lock.waiters().size(),
                        Formats.mode(lock.mode()), lock.holders().size());
            }
            table.print(spec.commandLine().getOut());
            if (locks.size() == limit) {
                spec.commandLine().getErr().println("tenure locks: printed the first " + limit
                        + " locks; there may be more (raise --limit or narrow --prefix)");
                spec.commandLine().getErr().flush();
            }
        }
        return TenureCli.EXIT_OK;
    }
}
